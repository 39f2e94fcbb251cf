//! Idem's network edge: what `idem serve` and `idem proxy` put between a
//! socket and their router.
//!
//! [`serve`] accepts connections up to [`Limits::max_connections`], and up
//! to [`Limits::max_connections_per_ip`] from one client address, and
//! closes those that hold resources without using them: a new connection
//! whose first request has not arrived whole within
//! [`Limits::header_timeout`] of its accept, a later request whose headers
//! do not arrive in full within it of their first byte, and a keep-alive
//! connection idle for [`Limits::idle_timeout`]. hyper's own header-read timer also runs while a
//! connection waits idle, so it cannot give the two their separate lengths;
//! the timing is kept here instead, from what the connection reads and the
//! requests it has open.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;
use tower::Service;

/// How long connections may take and how many there may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From the first byte of a request to the end of its headers.
    pub header_timeout: Duration,
    /// How long a connection with no request open may wait for the next.
    pub idle_timeout: Duration,
    /// Connections served at once; further ones wait in the listen backlog
    /// until one closes.
    pub max_connections: usize,
    /// Connections open at once from one client address; further ones are
    /// closed as they are accepted, so that one client cannot take every
    /// slot of [`Limits::max_connections`]. 0 means no limit.
    pub max_connections_per_ip: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 10_000,
            max_connections_per_ip: 256,
        }
    }
}

/// Serves `router` on `listener` until `shutdown` resolves, then stops
/// accepting, lets every open request finish, and returns once every
/// connection has closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let per_ip = Arc::new(PerAddress::default());
    let graceful = GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // hyper's own header timer would also cut idle connections; ours
    // replaces it.
    builder.http1().header_read_timeout(None);
    tokio::pin!(shutdown);
    loop {
        // The permit is taken before accepting: over the limit, connections
        // wait in the kernel's backlog instead of costing a descriptor each.
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(slot) = per_ip.take(peer.ip(), limits.max_connections_per_ip) else {
            tracing::debug!(peer = %peer.ip(), "closing a connection: its address holds as many as it may");
            drop(stream);
            continue;
        };
        let activity = Arc::new(Activity::new(limits, Instant::now()));
        let io = TokioIo::new(Tracked {
            inner: stream,
            activity: activity.clone(),
        });
        let service = Connection {
            router: router.clone(),
            activity: activity.clone(),
            peer,
        };
        let conn = graceful.watch(
            builder
                .serve_connection_with_upgrades(
                    io,
                    hyper_util::service::TowerToHyperService::new(service),
                )
                .into_owned(),
        );
        // The timeouts are watched by a task of their own: polled beside the
        // connection, their wait would be polled again on every read and
        // write of it.
        let (expired_tx, expired_rx) = tokio::sync::oneshot::channel();
        let watcher = tokio::spawn(async move {
            let _ = expired_tx.send(activity.expired().await);
        });
        tokio::spawn(async move {
            tokio::select! {
                served = conn => if let Err(e) = served {
                    tracing::debug!(error = %e, "connection ended with an error");
                },
                Ok(why) = expired_rx => tracing::debug!("closing a connection: {why}"),
            }
            watcher.abort();
            drop(slot);
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// Out of descriptors (or another failure of the listening socket itself):
/// waiting lets connections close before the next try, rather than spin.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::*;
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | ConnectionRefused | Interrupted
    ) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// Connections open per client address.
#[derive(Default)]
struct PerAddress(Mutex<HashMap<IpAddr, usize>>);

/// One connection's place in [`PerAddress`], given back when dropped.
struct Slot {
    of: Arc<PerAddress>,
    ip: IpAddr,
}

impl PerAddress {
    fn take(self: &Arc<Self>, ip: IpAddr, limit: usize) -> Option<Slot> {
        // An IPv4 client reaching a dual-stack socket is one address
        // whichever form it arrives in.
        let ip = ip.to_canonical();
        let mut open = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(ip).or_insert(0);
        if limit > 0 && *n >= limit {
            return None;
        }
        *n += 1;
        Some(Slot {
            of: self.clone(),
            ip,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.of.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// What one connection is doing, for its timeouts.
struct Activity {
    limits: Limits,
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Debug, Clone, Copy)]
struct State {
    /// Requests whose responses have not been sent in full.
    open: usize,
    /// When the last request ended (or the connection opened).
    idle_since: Instant,
    /// When the first byte after `idle_since` arrived: the start of the next
    /// request's headers. A new connection's first request is timed from
    /// its accept: a client that connects and sends nothing holds a slot
    /// for the header timeout, not the idle one.
    head_started: Option<Instant>,
    /// The deadline the waiter in [`Activity::expired`] sleeps until;
    /// `None` while it waits for a change. Only a deadline earlier than
    /// this one needs to wake it: a later one is found when it wakes, so a
    /// busy keep-alive connection costs no wake-up per request.
    armed: Option<Instant>,
}

impl State {
    /// When the connection is to be closed, and why; `None` while a request
    /// is open (the router's own timeout bounds it).
    fn deadline(&self, limits: &Limits) -> Option<(Instant, &'static str)> {
        if self.open > 0 {
            return None;
        }
        Some(match self.head_started {
            Some(t) => (
                t + limits.header_timeout,
                "request headers incomplete within the header timeout",
            ),
            None => (
                self.idle_since + limits.idle_timeout,
                "idle past the idle timeout",
            ),
        })
    }
}

impl Activity {
    fn new(limits: Limits, now: Instant) -> Activity {
        Activity {
            limits,
            state: Mutex::new(State {
                open: 0,
                idle_since: now,
                head_started: Some(now),
                armed: None,
            }),
            changed: Notify::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn read(&self) {
        let mut s = self.state();
        if s.open == 0 && s.head_started.is_none() {
            s.head_started = Some(Instant::now());
            self.wake_if_sooner(s);
        }
    }

    /// Wakes the waiter if the deadline is now earlier than the one it
    /// sleeps until (the header timeout is usually shorter than the idle
    /// one), or if it waits for any deadline at all.
    fn wake_if_sooner(&self, s: std::sync::MutexGuard<'_, State>) {
        let sooner = match (s.deadline(&self.limits), s.armed) {
            (Some((at, _)), Some(armed)) => at < armed,
            (Some(_), None) => true,
            (None, _) => false,
        };
        drop(s);
        if sooner {
            self.changed.notify_one();
        }
    }

    fn request_started(self: &Arc<Self>) -> Open {
        let mut s = self.state();
        s.open += 1;
        s.head_started = None;
        Open(self.clone())
    }

    fn request_ended(&self) {
        let mut s = self.state();
        s.open -= 1;
        if s.open == 0 {
            s.idle_since = Instant::now();
            s.head_started = None;
            self.wake_if_sooner(s);
        }
    }

    /// Resolves when the connection has outlived its timeouts.
    async fn expired(&self) -> &'static str {
        loop {
            let deadline = {
                let mut s = self.state();
                let deadline = s.deadline(&self.limits);
                s.armed = deadline.map(|(at, _)| at);
                deadline
            };
            match deadline {
                None => self.changed.notified().await,
                Some((at, why)) if at <= Instant::now() => return why,
                Some((at, _)) => tokio::select! {
                    () = tokio::time::sleep_until(at) => {}
                    () = self.changed.notified() => {}
                },
            }
        }
    }
}

/// A request whose response has not been sent in full.
struct Open(Arc<Activity>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.request_ended();
    }
}

/// The socket, reporting each read.
struct Tracked {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.read();
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The router, counting each request open until its response body has been
/// sent.
#[derive(Clone)]
struct Connection {
    router: Router,
    activity: Arc<Activity>,
    peer: SocketAddr,
}

impl Service<http::Request<Incoming>> for Connection {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Incoming>) -> Self::Future {
        let open = self.activity.request_started();
        let mut req = req.map(Body::new);
        // What limits per client address (console logins) go by.
        req.extensions_mut()
            .insert(axum::extract::ConnectInfo(self.peer));
        let call = self.router.call(req);
        Box::pin(async move {
            let response = call.await?;
            Ok(response.map(|body| Body::new(Sending { body, _open: open })))
        })
    }
}

/// A response body; the request stays open until it is dropped.
struct Sending {
    body: Body,
    _open: Open,
}

impl http_body::Body for Sending {
    type Data = <Body as http_body::Body>::Data;
    type Error = <Body as http_body::Body>::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 1,
            max_connections_per_ip: 0,
        }
    }

    #[test]
    fn an_idle_connection_gets_the_idle_timeout_and_a_started_request_the_header_timeout() {
        let t0 = Instant::now();
        let mut s = State {
            open: 0,
            idle_since: t0,
            head_started: None,
            armed: None,
        };
        assert_eq!(
            s.deadline(&limits()).unwrap().0,
            t0 + Duration::from_secs(60)
        );
        // The first byte of a request 50 s into the idle wait: its headers
        // get the header timeout from then, not what remained of the idle
        // one.
        s.head_started = Some(t0 + Duration::from_secs(50));
        assert_eq!(
            s.deadline(&limits()).unwrap().0,
            t0 + Duration::from_secs(60)
        );
        s.head_started = Some(t0 + Duration::from_secs(55));
        assert_eq!(
            s.deadline(&limits()).unwrap().0,
            t0 + Duration::from_secs(65)
        );
        s.open = 1;
        assert_eq!(s.deadline(&limits()), None);
    }

    #[tokio::test]
    async fn reads_and_requests_move_the_deadline() {
        let accepted = Instant::now();
        let activity = Arc::new(Activity::new(limits(), accepted));
        // A new connection owes its first request within the header
        // timeout, bytes or none.
        let first = activity.state().deadline(&limits()).unwrap();
        assert_eq!(first.0, accepted + limits().header_timeout);
        activity.read();
        assert_eq!(activity.state().deadline(&limits()).unwrap(), first);
        drop(activity.request_started());
        let idle = activity.state().deadline(&limits()).unwrap().1;
        activity.read();
        let started = activity.state().deadline(&limits()).unwrap().1;
        assert_ne!(idle, started);
        let open = activity.request_started();
        assert!(activity.state().deadline(&limits()).is_none());
        // Bytes read while a request is open (its body) start nothing.
        activity.read();
        assert!(activity.state().head_started.is_none());
        drop(open);
        assert_eq!(activity.state().deadline(&limits()).unwrap().1, idle);
    }

    #[test]
    fn an_address_holds_at_most_its_limit_and_gets_slots_back() {
        let per_ip = Arc::new(PerAddress::default());
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let one = per_ip.take(a, 2).expect("first");
        let two = per_ip.take(mapped, 2).expect("second, the same address");
        assert!(per_ip.take(a, 2).is_none(), "a third from one address");
        assert!(per_ip.take(b, 2).is_some(), "another address is not held");
        drop(one);
        let _three = per_ip.take(a, 2).expect("a slot given back");
        drop(two);
        assert!(per_ip.take(a, 0).is_some(), "0 is no limit");
    }
}
