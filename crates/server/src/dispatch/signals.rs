//! Other nodes: their wake-ups and finished tasks come into this node's
//! [`Handle`](super::Handle), and this node's wake-ups go out to them.

use crate::App;
use idem_store::dispatch::DispatchSignal;
use std::sync::Arc;
use std::time::Duration;

/// Fewest time between two cross-node work NOTIFYs of one node: creates at
/// a high rate share one.
const NOTIFY_COALESCE: Duration = Duration::from_millis(5);

/// Forwards other nodes' signals into the handle and this node's work
/// wake-ups out to them; nothing to do on a single-node store.
pub(super) async fn spawn(app: &Arc<App>) -> Vec<tokio::task::JoinHandle<()>> {
    let signals = match app.store.dispatch_listen().await {
        Ok(Some(signals)) => signals,
        Ok(None) => return Vec::new(),
        Err(e) => {
            tracing::warn!(error = %e, "not listening for other nodes; polling instead");
            return Vec::new();
        }
    };
    let inbound = {
        let app = app.clone();
        let mut signals = signals;
        tokio::spawn(async move {
            while let Some(signal) = signals.recv().await {
                match signal {
                    DispatchSignal::Work => app.dispatch.remote_work_arrived(),
                    DispatchSignal::Listening => {
                        app.dispatch.remote_work_arrived();
                        // A cancel of one of our attempts may have been
                        // missed: ask the store, off this loop.
                        let app = app.clone();
                        tokio::spawn(async move { app.dispatch.abort_lost(&*app.store).await });
                    }
                    DispatchSignal::TaskFinished(f) => app.dispatch.publish(f),
                    DispatchSignal::AttemptCancelled { uid, attempt } => {
                        if app.dispatch.abort(&uid, attempt) {
                            tracing::info!(task_uid = %uid, attempt,
                                "attempt aborted by a cancel on another node");
                        }
                    }
                }
            }
        })
    };
    let outbound = {
        let app = app.clone();
        tokio::spawn(async move {
            loop {
                app.dispatch.remote_work.notified().await;
                if let Err(e) = app.store.dispatch_notify_work().await {
                    tracing::warn!(error = %e, "notifying other nodes of new work");
                }
                tokio::time::sleep(NOTIFY_COALESCE).await;
            }
        })
    };
    vec![inbound, outbound]
}
