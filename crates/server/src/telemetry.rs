//! Prometheus metrics (`GET /metrics`).
//!
//! One recorder per process, installed on first use; every `App` in the
//! process reports through it. Metric names are `idem_*`; the counters are
//! recorded where the events happen (the API, the Idempotency-Key layer,
//! the dispatcher, the scheduler, the sweeper).
//!
//! The series that may name an organization or a queue are not the
//! recorder's: each `App` keeps them in its [`Metrics`], because the
//! recorder cannot forget a series, and the series of a deleted queue must
//! go. Whether they carry those names at all is the operator's choice
//! ([`MetricsLabels`]): by default a scrape names no tenant. The queue depth
//! gauge is counted at most once per [`MetricsOptions::refresh`], however
//! often `/metrics` is scraped.

use crate::App;
use crate::api::problem::Problem;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use idem_store::{MetricScopes, QueueOldestDue, Status, TaskCount};
use metrics_exporter_prometheus::formatting::sanitize_label_value;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;
use tokio::sync::watch;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// How often the recorder's histograms are drained.
const UPKEEP_INTERVAL: Duration = Duration::from_secs(10);

/// Dispatch durations, in seconds: from a fast local target to the longest
/// dispatch deadline's order of magnitude.
const DISPATCH_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0,
];

/// Scheduler lag, in seconds: sub-second when healthy, minutes when the
/// store was unreachable or a catch-up fired old instants.
const LAG_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0, 300.0,
];

/// The process's recorder, installed on first call.
pub fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        // Without buckets the exporter renders histograms as summaries,
        // which cannot be aggregated across nodes.
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("idem_scheduler_lag_seconds".into()),
                LAG_BUCKETS,
            )
            .expect("the bucket list is not empty")
            .set_buckets_for_metric(
                Matcher::Full("idem_scheduler_dispatch_lag_seconds".into()),
                LAG_BUCKETS,
            )
            .expect("the bucket list is not empty")
            .build_recorder();
        let handle = recorder.handle();
        // Another recorder may own the process already (an embedding
        // application's); ours then renders only its own registrations.
        let _ = metrics::set_global_recorder(recorder);
        describe();
        handle
    })
}

fn describe() {
    metrics::describe_counter!(
        "idem_dispatch_wakeups_total",
        "Wake-ups of the dispatchers for new or newly due work (creates, runs, redrives, resumes, cron runs)."
    );
    metrics::describe_counter!(
        "idem_idempotency_total",
        "Idempotency-Key outcomes other than a first execution: replayed, mismatch, in_progress."
    );
    metrics::describe_counter!(
        "idem_sweeper_deleted_total",
        "Rows deleted by the sweeper, by kind: tombstone, idempotency_record."
    );
    metrics::describe_histogram!(
        "idem_scheduler_lag_seconds",
        metrics::Unit::Seconds,
        "From a cron instant to the creation of its run: 0 for runs created ahead of their \
         instant (see --schedule-lookahead)."
    );
    metrics::describe_histogram!(
        "idem_scheduler_dispatch_lag_seconds",
        metrics::Unit::Seconds,
        "From a cron instant to the start of its run's first delivery attempt."
    );
    metrics::describe_counter!(
        "idem_scheduler_runs_total",
        "Scheduled runs created by this node's scheduler."
    );
    metrics::describe_counter!(
        "idem_http_responses_total",
        "API responses, by status class."
    );
    metrics::describe_counter!(
        "idem_background_restarts_total",
        "Restarts of a background task (dispatcher, scheduler, sweeper) that exited or panicked \
         while the node ran."
    );
}

/// Which tenant names the series of `/metrics` carry. Anyone who can scrape
/// sees them, so naming tenants is the operator's choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MetricsLabels {
    /// Totals over every organization and queue.
    #[default]
    None,
    /// Per organization.
    Org,
    /// Per organization and queue.
    OrgQueue,
}

/// A bearer token that `/metrics` requires. Only its digest is kept, so
/// that comparisons take the same time whatever the presented token's
/// length or content, and `Debug` cannot show it.
#[derive(Clone)]
pub struct MetricsToken([u8; 32]);

impl MetricsToken {
    pub fn new(token: &str) -> MetricsToken {
        MetricsToken(Sha256::digest(token.as_bytes()).into())
    }

    pub fn matches(&self, presented: &str) -> bool {
        let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        self.0.ct_eq(&presented).into()
    }
}

impl std::fmt::Debug for MetricsToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetricsToken(<redacted>)")
    }
}

/// How `/metrics` is exposed.
#[derive(Debug, Clone)]
pub struct MetricsOptions {
    pub labels: MetricsLabels,
    /// When set, a scrape must send `Authorization: Bearer <token>`.
    pub token: Option<MetricsToken>,
    /// How long one count of the tasks by state answers scrapes; zero
    /// counts on every scrape.
    pub refresh: Duration,
}

impl Default for MetricsOptions {
    fn default() -> Self {
        MetricsOptions {
            labels: MetricsLabels::None,
            token: None,
            refresh: Duration::from_secs(10),
        }
    }
}

/// The tasks by state and the names that exist, as of one count.
struct Depth {
    counts: Vec<TaskCount>,
    /// The running queues with tasks due, and their oldest due time.
    oldest: Vec<QueueOldestDue>,
    scopes: MetricScopes,
    /// Unix time of the count, in seconds.
    counted_at: f64,
}

/// One `App`'s tenant series and its cached queue depth.
pub(crate) struct Metrics {
    labels: MetricsLabels,
    series: Mutex<BTreeMap<SeriesKey, Series>>,
    /// Bumped before each read of the names that exist: a series born
    /// after the read began is never dropped for not being in it.
    epoch: AtomicU64,
    depth: Cached<Depth>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct SeriesKey {
    name: &'static str,
    org: Option<String>,
    queue: Option<String>,
    extra: Option<(&'static str, &'static str)>,
}

struct Series {
    born: u64,
    value: Value,
}

enum Value {
    Counter(u64),
    Histogram(Histogram),
}

/// Cumulative buckets, their sum and count: a Prometheus histogram.
struct Histogram {
    bounds: &'static [f64],
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: vec![0; bounds.len()],
            sum: 0.0,
            count: 0,
        }
    }

    fn record(&mut self, v: f64) {
        for (bound, n) in self.bounds.iter().zip(&mut self.counts) {
            if v <= *bound {
                *n += 1;
            }
        }
        self.sum += v;
        self.count += 1;
    }
}

/// The families whose series may name a tenant: name, type, help.
const TENANT_FAMILIES: &[(&str, &str, &str)] = &[
    (
        "idem_tasks_created_total",
        "counter",
        "Tasks created (per organization or queue with --metrics-labels).",
    ),
    (
        "idem_tasks_deduplicated_total",
        "counter",
        "Task creates refused because the task ID was taken, by reason.",
    ),
    (
        "idem_dispatch_attempts_total",
        "counter",
        "Dispatch attempts, by outcome: succeeded, failed_retrying, failed_final, cancelled, \
         lease_expired, stale (a late result of a lost lease).",
    ),
    (
        "idem_dispatch_duration_seconds",
        "histogram",
        "Duration of dispatch attempts' HTTP exchanges, in seconds.",
    ),
];

const STATES: [Status; 5] = [
    Status::Pending,
    Status::Running,
    Status::Succeeded,
    Status::Failed,
    Status::Cancelled,
];

impl Metrics {
    pub(crate) fn new(options: &MetricsOptions) -> Metrics {
        Metrics {
            labels: options.labels,
            series: Mutex::new(BTreeMap::new()),
            epoch: AtomicU64::new(0),
            depth: Cached::new(options.refresh),
        }
    }

    fn key(
        &self,
        name: &'static str,
        org: &str,
        queue: &str,
        extra: Option<(&'static str, &'static str)>,
    ) -> SeriesKey {
        let (org, queue) = match self.labels {
            MetricsLabels::None => (None, None),
            MetricsLabels::Org => (Some(org.to_string()), None),
            MetricsLabels::OrgQueue => (Some(org.to_string()), Some(queue.to_string())),
        };
        SeriesKey {
            name,
            org,
            queue,
            extra,
        }
    }

    fn update(&self, key: SeriesKey, new: impl FnOnce() -> Value, f: impl FnOnce(&mut Value)) {
        let born = self.epoch.load(Ordering::Acquire);
        let mut series = self.series.lock().expect("metric series");
        let entry = series
            .entry(key)
            .or_insert_with(|| Series { born, value: new() });
        f(&mut entry.value);
    }

    /// Adds `n` to a counter of `org`'s `queue`, with one more label.
    pub(crate) fn count(
        &self,
        name: &'static str,
        org: &str,
        queue: &str,
        extra: Option<(&'static str, &'static str)>,
        n: u64,
    ) {
        let key = self.key(name, org, queue, extra);
        self.update(
            key,
            || Value::Counter(0),
            |v| {
                if let Value::Counter(c) = v {
                    *c += n;
                }
            },
        );
    }

    /// Records how long an attempt's exchange with its target took.
    pub(crate) fn dispatch_duration(&self, org: &str, queue: &str, d: Duration) {
        let key = self.key("idem_dispatch_duration_seconds", org, queue, None);
        self.update(
            key,
            || Value::Histogram(Histogram::new(DISPATCH_BUCKETS)),
            |v| {
                if let Value::Histogram(h) = v {
                    h.record(d.as_secs_f64());
                }
            },
        );
    }

    /// Drops the series of organizations and queues that no longer exist,
    /// except those born after `mark`, when the names were read.
    fn retain(&self, scopes: &MetricScopes, mark: u64) {
        let orgs: HashSet<&str> = scopes.organizations.iter().map(String::as_str).collect();
        let queues: HashSet<(&str, &str)> = scopes
            .queues
            .iter()
            .map(|(o, q)| (o.as_str(), q.as_str()))
            .collect();
        self.series.lock().expect("metric series").retain(|k, s| {
            s.born > mark
                || match (&k.org, &k.queue) {
                    (None, _) => true,
                    (Some(o), None) => orgs.contains(o.as_str()),
                    (Some(o), Some(q)) => queues.contains(&(o.as_str(), q.as_str())),
                }
        });
    }

    /// The tenant families in the Prometheus text format.
    fn render_series(&self, out: &mut String) {
        let series = self.series.lock().expect("metric series");
        for (name, kind, help) in TENANT_FAMILIES {
            let mut family = series.iter().filter(|(k, _)| k.name == *name).peekable();
            if family.peek().is_none() {
                continue;
            }
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (key, s) in family {
                let mut labels: Vec<(&str, &str)> = Vec::new();
                if let Some(org) = &key.org {
                    labels.push(("org", org.as_str()));
                }
                if let Some(queue) = &key.queue {
                    labels.push(("queue", queue.as_str()));
                }
                labels.extend(key.extra);
                match &s.value {
                    Value::Counter(c) => sample(out, name, &labels, None, c),
                    Value::Histogram(h) => {
                        let bucket = format!("{name}_bucket");
                        for (bound, n) in h.bounds.iter().zip(&h.counts) {
                            sample(out, &bucket, &labels, Some(&bound.to_string()), n);
                        }
                        sample(out, &bucket, &labels, Some("+Inf"), h.count);
                        sample(out, &format!("{name}_sum"), &labels, None, h.sum);
                        sample(out, &format!("{name}_count"), &labels, None, h.count);
                    }
                }
            }
            out.push('\n');
        }
    }

    /// The queue depth gauge, summed to the chosen labels; every state of
    /// every organization or queue that exists has a sample, so a series
    /// does not vanish while its queue empties, and goes with its queue.
    fn render_depth(&self, depth: &Depth, out: &mut String) {
        let mut sums: BTreeMap<(Option<&str>, Option<&str>, &'static str), u64> = BTreeMap::new();
        match self.labels {
            MetricsLabels::None => {
                for st in STATES {
                    sums.insert((None, None, st.as_str()), 0);
                }
            }
            MetricsLabels::Org => {
                for org in &depth.scopes.organizations {
                    for st in STATES {
                        sums.insert((Some(org.as_str()), None, st.as_str()), 0);
                    }
                }
            }
            MetricsLabels::OrgQueue => {
                for (org, queue) in &depth.scopes.queues {
                    for st in STATES {
                        sums.insert((Some(org.as_str()), Some(queue.as_str()), st.as_str()), 0);
                    }
                }
            }
        }
        for c in &depth.counts {
            let key = match self.labels {
                MetricsLabels::None => (None, None, c.status.as_str()),
                MetricsLabels::Org => (Some(c.org.as_str()), None, c.status.as_str()),
                MetricsLabels::OrgQueue => (
                    Some(c.org.as_str()),
                    Some(c.queue.as_str()),
                    c.status.as_str(),
                ),
            };
            // A count of a queue created after the names were read has no
            // zeroed samples yet; it is reported all the same.
            *sums.entry(key).or_insert(0) += c.count;
        }
        let name = "idem_queue_tasks";
        let _ = writeln!(
            out,
            "# HELP {name} Tasks by state (final tasks held as tombstones included), per \
             organization or queue with --metrics-labels; the runs of cron jobs are counted \
             under queue `~jobs`. Counted at most once per --metrics-refresh.\n\
             # TYPE {name} gauge"
        );
        for ((org, queue, state), n) in sums {
            let mut labels: Vec<(&str, &str)> = Vec::new();
            if let Some(org) = org {
                labels.push(("org", org));
            }
            if let Some(queue) = queue {
                labels.push(("queue", queue));
            }
            labels.push(("state", state));
            sample(out, name, &labels, None, n);
        }
        self.render_oldest(depth, out);
        let name = "idem_queue_tasks_counted_at_seconds";
        let _ = writeln!(
            out,
            "\n# HELP {name} Unix time of the count idem_queue_tasks reports.\n\
             # TYPE {name} gauge\n{name} {}\n",
            depth.counted_at
        );
    }
}

impl Metrics {
    /// How long the oldest due task has waited, as of the count: the
    /// largest of the queues under each label set, 0 where none is due, so
    /// that an alert on it fires for a backlog that ages (targets down,
    /// limits too low, no worker claiming), never for a queue merely busy.
    fn render_oldest(&self, depth: &Depth, out: &mut String) {
        let mut ages: BTreeMap<(Option<&str>, Option<&str>), f64> = BTreeMap::new();
        match self.labels {
            MetricsLabels::None => {
                ages.insert((None, None), 0.0);
            }
            MetricsLabels::Org => {
                for org in &depth.scopes.organizations {
                    ages.insert((Some(org.as_str()), None), 0.0);
                }
            }
            MetricsLabels::OrgQueue => {
                for (org, queue) in &depth.scopes.queues {
                    ages.insert((Some(org.as_str()), Some(queue.as_str())), 0.0);
                }
            }
        }
        for q in &depth.oldest {
            let due = q.oldest_due.as_millisecond() as f64 / 1000.0;
            let age = (depth.counted_at - due).max(0.0);
            let key = match self.labels {
                MetricsLabels::None => (None, None),
                MetricsLabels::Org => (Some(q.org.as_str()), None),
                MetricsLabels::OrgQueue => (Some(q.org.as_str()), Some(q.queue.as_str())),
            };
            let slot = ages.entry(key).or_insert(0.0);
            *slot = slot.max(age);
        }
        let name = "idem_queue_oldest_due_age_seconds";
        let _ = writeln!(
            out,
            "\n# HELP {name} How long the oldest due task of a running queue has waited for \
             its attempt, the largest over the queues of each label set; 0 when none is \
             due. Paused queues are left out. Counted with idem_queue_tasks.\n\
             # TYPE {name} gauge"
        );
        for ((org, queue), age) in ages {
            let mut labels: Vec<(&str, &str)> = Vec::new();
            if let Some(org) = org {
                labels.push(("org", org));
            }
            if let Some(queue) = queue {
                labels.push(("queue", queue));
            }
            sample(out, name, &labels, None, format!("{age:.3}"));
        }
    }
}

fn sample(
    out: &mut String,
    name: &str,
    labels: &[(&str, &str)],
    le: Option<&str>,
    value: impl std::fmt::Display,
) {
    out.push_str(name);
    if !labels.is_empty() || le.is_some() {
        out.push('{');
        let le = le.map(|le| ("le", le));
        for (i, (k, v)) in labels.iter().copied().chain(le).enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{k}=\"{}\"", sanitize_label_value(v));
        }
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

/// A value computed at most once per interval, however many ask for it;
/// those who ask while it is computed wait for that computation.
pub(crate) struct Cached<T> {
    every: Duration,
    slot: tokio::sync::Mutex<Option<(Instant, Arc<T>)>>,
}

impl<T> Cached<T> {
    pub(crate) fn new(every: Duration) -> Cached<T> {
        Cached {
            every,
            slot: tokio::sync::Mutex::new(None),
        }
    }

    /// The value computed less than the interval before `now`, or a fresh
    /// one. A failed computation keeps the previous value, if any, and is
    /// tried again on the next call.
    pub(crate) async fn get<E>(
        &self,
        now: Instant,
        compute: impl Future<Output = Result<T, E>>,
    ) -> Result<Arc<T>, (E, Option<Arc<T>>)> {
        let mut slot = self.slot.lock().await;
        if let Some((at, value)) = slot.as_ref()
            && now.saturating_duration_since(*at) < self.every
        {
            return Ok(value.clone());
        }
        match compute.await {
            Ok(value) => {
                let value = Arc::new(value);
                *slot = Some((now, value.clone()));
                Ok(value)
            }
            Err(e) => Err((e, slot.as_ref().map(|(_, v)| v.clone()))),
        }
    }
}

/// `GET /metrics`: the Prometheus text format. Needs the metrics token when
/// one is set.
pub async fn render(State(app): State<Arc<App>>, headers: http::HeaderMap) -> Response {
    if let Some(token) = &app.options.metrics.token {
        let presented = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            });
        if !presented.is_some_and(|p| token.matches(p)) {
            let mut resp = Problem::unauthenticated("send Authorization: Bearer <metrics token>")
                .into_response();
            resp.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static("Bearer realm=\"metrics\""),
            );
            return resp;
        }
    }
    let metrics = &app.metrics;
    let counted = metrics
        .depth
        .get(Instant::now(), async {
            let mark = metrics.epoch.fetch_add(1, Ordering::AcqRel);
            let scopes = app.store.metric_scopes().await?;
            let counts = app.store.task_counts_by_state().await?;
            let oldest = app.store.queue_oldest_due().await?;
            metrics.retain(&scopes, mark);
            Ok::<_, idem_store::Error>(Depth {
                counts,
                oldest,
                scopes,
                counted_at: app.clock.now().as_millisecond() as f64 / 1000.0,
            })
        })
        .await;
    let depth = match counted {
        Ok(depth) => Some(depth),
        Err((e, previous)) => {
            tracing::warn!(error = %e, "counting tasks for the queue depth metric");
            previous
        }
    };
    let mut text = handle().render();
    metrics.render_series(&mut text);
    if let Some(depth) = depth {
        metrics.render_depth(&depth, &mut text);
    }
    (
        [(
            http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// Drains the histograms every [`UPKEEP_INTERVAL`] until `stop` turns true.
pub async fn run(mut stop: watch::Receiver<bool>) {
    loop {
        handle().run_upkeep();
        tokio::select! {
            _ = tokio::time::sleep(UPKEEP_INTERVAL) => {}
            _ = stop.changed() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[tokio::test]
    async fn a_cached_value_is_computed_once_per_interval() {
        let cached = Cached::new(Duration::from_secs(10));
        let computed = AtomicUsize::new(0);
        let compute = || async { Ok::<_, ()>(computed.fetch_add(1, Ordering::SeqCst) + 1) };
        let t0 = Instant::now();
        assert_eq!(*cached.get(t0, compute()).await.unwrap(), 1);
        for later in [0, 1, 9] {
            let at = t0 + Duration::from_secs(later);
            assert_eq!(*cached.get(at, compute()).await.unwrap(), 1);
        }
        assert_eq!(computed.load(Ordering::SeqCst), 1);
        let at = t0 + Duration::from_secs(10);
        assert_eq!(*cached.get(at, compute()).await.unwrap(), 2);
        assert_eq!(computed.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_failed_computation_keeps_the_previous_value_and_is_retried() {
        let cached = Cached::new(Duration::from_secs(1));
        let t0 = Instant::now();
        cached.get(t0, async { Ok::<_, &str>(7) }).await.unwrap();
        let later = t0 + Duration::from_secs(2);
        let (e, previous) = cached.get(later, async { Err("down") }).await.unwrap_err();
        assert_eq!((e, previous.as_deref()), ("down", Some(&7)));
        assert_eq!(
            *cached.get(later, async { Ok::<_, &str>(8) }).await.unwrap(),
            8
        );
    }

    #[tokio::test]
    async fn zero_interval_computes_every_time() {
        let cached = Cached::new(Duration::ZERO);
        let t0 = Instant::now();
        cached.get(t0, async { Ok::<_, ()>(1) }).await.unwrap();
        assert_eq!(*cached.get(t0, async { Ok::<_, ()>(2) }).await.unwrap(), 2);
    }

    #[test]
    fn the_token_matches_itself_only_and_is_never_shown() {
        let token = MetricsToken::new("s3cret");
        assert!(token.matches("s3cret"));
        for other in ["", "s3cre", "s3cret ", "S3CRET", "s3cret-and-more"] {
            assert!(!token.matches(other), "{other:?}");
        }
        assert!(!format!("{token:?}").contains("s3cret"));
    }

    fn scopes(orgs: &[&str], queues: &[(&str, &str)]) -> MetricScopes {
        MetricScopes {
            organizations: orgs.iter().map(|s| s.to_string()).collect(),
            queues: queues
                .iter()
                .map(|(o, q)| (o.to_string(), q.to_string()))
                .collect(),
        }
    }

    fn rendered(m: &Metrics) -> String {
        let mut out = String::new();
        m.render_series(&mut out);
        out
    }

    #[test]
    fn series_of_a_queue_that_is_gone_are_dropped() {
        let m = Metrics::new(&MetricsOptions {
            labels: MetricsLabels::OrgQueue,
            ..Default::default()
        });
        m.count("idem_tasks_created_total", "acme", "gone", None, 2);
        m.count("idem_tasks_created_total", "acme", "kept", None, 1);
        m.dispatch_duration("acme", "gone", Duration::from_millis(3));
        let mark = m.epoch.fetch_add(1, Ordering::AcqRel);
        // Created while the names were being read: not judged by them.
        m.count("idem_tasks_created_total", "acme", "new", None, 1);
        m.retain(&scopes(&["acme"], &[("acme", "kept")]), mark);
        let text = rendered(&m);
        assert!(!text.contains("gone"), "{text}");
        assert!(text.contains(r#"idem_tasks_created_total{org="acme",queue="kept"} 1"#));
        assert!(text.contains(r#"idem_tasks_created_total{org="acme",queue="new"} 1"#));
        // The next read judges it.
        let mark = m.epoch.fetch_add(1, Ordering::AcqRel);
        m.retain(&scopes(&["acme"], &[("acme", "kept")]), mark);
        assert!(!rendered(&m).contains("new"));
    }

    #[test]
    fn without_labels_series_are_totals_and_never_dropped() {
        let m = Metrics::new(&MetricsOptions::default());
        m.count("idem_tasks_created_total", "acme", "a", None, 2);
        m.count("idem_tasks_created_total", "other", "b", None, 1);
        m.count(
            "idem_dispatch_attempts_total",
            "acme",
            "a",
            Some(("outcome", "succeeded")),
            1,
        );
        m.dispatch_duration("acme", "a", Duration::from_millis(30));
        let mark = m.epoch.fetch_add(1, Ordering::AcqRel);
        m.retain(&scopes(&[], &[]), mark);
        let text = rendered(&m);
        assert!(text.contains("idem_tasks_created_total 3\n"), "{text}");
        assert!(text.contains(r#"idem_dispatch_attempts_total{outcome="succeeded"} 1"#));
        assert!(text.contains(r#"idem_dispatch_duration_seconds_bucket{le="0.025"} 0"#));
        assert!(text.contains(r#"idem_dispatch_duration_seconds_bucket{le="0.05"} 1"#));
        assert!(text.contains(r#"idem_dispatch_duration_seconds_bucket{le="+Inf"} 1"#));
        assert!(text.contains("idem_dispatch_duration_seconds_count 1"));
        assert!(!text.contains("acme") && !text.contains("org="), "{text}");
    }

    #[test]
    fn the_depth_is_summed_to_the_chosen_labels_with_every_state() {
        let depth = Depth {
            counts: vec![
                TaskCount {
                    org: "acme".into(),
                    queue: "a".into(),
                    status: Status::Pending,
                    count: 2,
                },
                TaskCount {
                    org: "acme".into(),
                    queue: "b".into(),
                    status: Status::Pending,
                    count: 3,
                },
            ],
            oldest: vec![
                QueueOldestDue {
                    org: "acme".into(),
                    queue: "a".into(),
                    oldest_due: jiff::Timestamp::from_second(90).unwrap(),
                },
                QueueOldestDue {
                    org: "acme".into(),
                    queue: "b".into(),
                    oldest_due: jiff::Timestamp::from_second(70).unwrap(),
                },
            ],
            scopes: scopes(&["acme", "idle"], &[("acme", "a"), ("acme", "b")]),
            counted_at: 100.0,
        };
        let text = |labels| {
            let mut out = String::new();
            Metrics::new(&MetricsOptions {
                labels,
                ..Default::default()
            })
            .render_depth(&depth, &mut out);
            out
        };
        let none = text(MetricsLabels::None);
        assert!(
            none.contains("idem_queue_tasks{state=\"pending\"} 5\n"),
            "{none}"
        );
        assert!(none.contains("idem_queue_tasks{state=\"failed\"} 0\n"));
        assert!(
            none.contains("idem_queue_tasks_counted_at_seconds 100\n"),
            "{none}"
        );
        assert!(
            none.contains("idem_queue_oldest_due_age_seconds 30.000\n"),
            "the oldest of all: {none}"
        );
        assert!(!none.contains("acme"));
        let org = text(MetricsLabels::Org);
        assert!(org.contains("idem_queue_tasks{org=\"acme\",state=\"pending\"} 5\n"));
        assert!(org.contains("idem_queue_tasks{org=\"idle\",state=\"pending\"} 0\n"));
        assert!(!org.contains("queue=\""));
        assert!(org.contains("idem_queue_oldest_due_age_seconds{org=\"acme\"} 30.000\n"));
        assert!(org.contains("idem_queue_oldest_due_age_seconds{org=\"idle\"} 0.000\n"));
        let queue = text(MetricsLabels::OrgQueue);
        assert!(queue.contains("idem_queue_tasks{org=\"acme\",queue=\"b\",state=\"pending\"} 3\n"));
        assert!(queue.contains("idem_queue_tasks{org=\"acme\",queue=\"a\",state=\"running\"} 0\n"));
        assert!(
            queue.contains("idem_queue_oldest_due_age_seconds{org=\"acme\",queue=\"a\"} 10.000\n")
        );
    }
}
