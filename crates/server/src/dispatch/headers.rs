//! What a delivery carries besides the target's own request (API.md §4): the
//! identity headers, stable across retries, and the Standard Webhooks
//! signature.

use http::{HeaderMap, HeaderName, HeaderValue};
use idem_core::job::HeaderStyle;
use idem_core::run_key::{rfc3339, task_run_key};
use idem_core::schedule::format_schedule_time;
use idem_store::dispatch::ClaimedTask;
use idem_store::events::EVENTS_QUEUE;
use idem_webhooks::{SignedTarget, SigningSecret, signature_list, target_signature_list};
use std::sync::Arc;

/// An organization's secrets as the store keeps them (`whsec_…`), ready to
/// sign with. A secret that does not parse is skipped: one corrupt secret
/// must not stop deliveries signed by the others.
pub fn signing_secrets(stored: &[String]) -> Arc<[SigningSecret]> {
    stored
        .iter()
        .filter_map(|secret| match SigningSecret::parse(secret) {
            Ok(secret) => Some(secret),
            Err(error) => {
                tracing::error!(%error, "a signing secret does not decode; deliveries omit it");
                None
            }
        })
        .collect()
}

/// The headers of one attempt: the target's own, then Idem's, which win
/// (a target cannot name them: they are refused when the task is created).
/// `executions` is what Cloud Tasks' headers call the execution count
/// ([`super::attempt::executions`]); only `cloud_tasks` tasks send it.
pub fn delivery_headers(
    claimed: &ClaimedTask,
    sent: &Sent<'_>,
    secrets: &[SigningSecret],
    timestamp: i64,
    executions: u32,
) -> Result<HeaderMap, String> {
    let task = &claimed.task;
    // A row written before headers were bounded (or edited by hand) may hold
    // more than a HeaderMap can take, where `with_capacity` and `append`
    // panic: such a row fails its attempt with an error instead.
    let stored = task.target.headers.len();
    if stored > idem_core::task::MAX_TARGET_HEADERS {
        return Err(format!(
            "the target has {stored} headers; at most {} are sent",
            idem_core::task::MAX_TARGET_HEADERS
        ));
    }
    let mut headers = HeaderMap::with_capacity(stored + 16);
    for (name, value) in &task.target.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("target header name {name:?} is invalid"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("target header {name} has an invalid value"))?;
        headers
            .try_append(name, value)
            .map_err(|_| "the target has too many headers".to_string())?;
    }
    let is_event = task.queue == EVENTS_QUEUE;
    let run_key = run_key(claimed);
    let body = task.target.body.as_ref().map_or(&[][..], |(_, b)| b);
    let mut set = |name: &'static str, value: String| {
        let value = HeaderValue::from_str(&value)
            .map_err(|_| format!("header {name} would carry an invalid value"))?;
        headers
            .try_insert(HeaderName::from_static(name), value)
            .map_err(|_| "the target has too many headers".to_string())?;
        Ok::<(), String>(())
    };
    match &task.run {
        Some(run) => {
            // The same rendering the run ID hashes, so a handler can
            // recompute the ID from the headers.
            let at = format_schedule_time(task.schedule_time);
            set("idem-job", run.job.clone())?;
            set("idem-run-kind", run.kind.as_str().to_string())?;
            set("idem-schedule-time", at.clone())?;
            if run.header_style == HeaderStyle::CloudScheduler {
                set("x-cloudscheduler", "true".to_string())?;
                set("x-cloudscheduler-jobname", run.job.clone())?;
                set("x-cloudscheduler-scheduletime", at)?;
            }
        }
        // An event names its task in its body; its own queue and ID are
        // Idem's bookkeeping.
        None if is_event => set("idem-schedule-time", rfc3339(task.schedule_time))?,
        None => {
            set("idem-queue", task.queue.clone())?;
            set("idem-task-id", task.task_id.clone())?;
            set("idem-schedule-time", rfc3339(task.schedule_time))?;
            if task.header_style == HeaderStyle::CloudTasks {
                // Meanings as Cloud Tasks documents them for HTTP targets.
                set("x-cloudtasks-queuename", task.queue.clone())?;
                set("x-cloudtasks-taskname", task.task_id.clone())?;
                set(
                    "x-cloudtasks-taskretrycount",
                    claimed.attempt.saturating_sub(1).to_string(),
                )?;
                set("x-cloudtasks-taskexecutioncount", executions.to_string())?;
                set("x-cloudtasks-tasketa", epoch_seconds(task.schedule_time))?;
                if claimed.attempt > 1 {
                    if let Some(status) = claimed.previous_status() {
                        set("x-cloudtasks-taskpreviousresponse", status.to_string())?;
                    }
                    set("x-cloudtasks-taskretryreason", retry_reason(claimed))?;
                }
            }
        }
    }
    set("idempotency-key", run_key.clone())?;
    set(
        "idem-retry-count",
        claimed.attempt.saturating_sub(1).to_string(),
    )?;
    if let Some(status) = claimed.previous_status() {
        set("idem-previous-response", status.to_string())?;
    }
    // One signature per secret, so that a verifier holding either the old
    // or the new secret accepts the request during a rotation.
    let signed = signature_list(secrets, &run_key, timestamp, body);
    if !signed.is_empty() {
        let path_and_query = match sent.url.query() {
            Some(query) => format!("{}?{query}", sent.url.path()),
            None => sent.url.path().to_string(),
        };
        let target = SignedTarget {
            method: sent.method.as_str(),
            path_and_query: &path_and_query,
            body_sha256: idem_webhooks::body_sha256(body),
        };
        set(
            idem_webhooks::TARGET_SIGNATURE_HEADER,
            target_signature_list(secrets, &run_key, timestamp, &target),
        )?;
        set(idem_webhooks::SIGNATURE_HEADER, signed)?;
    }
    set(idem_webhooks::ID_HEADER, run_key)?;
    set(idem_webhooks::TIMESTAMP_HEADER, timestamp.to_string())?;
    Ok(headers)
}

/// Where an attempt goes, as its request line names it: what the target
/// signature covers.
pub struct Sent<'a> {
    pub method: &'a reqwest::Method,
    pub url: &'a reqwest::Url,
}

/// The run key a delivery carries as `Idempotency-Key` and `Webhook-Id`,
/// and its ID token as `idem_run`. A job's run is keyed by its run ID
/// (API.md §5), a task by its run key, an event by its ID, which is its run
/// key (derived from the reported task's when the event was raised).
pub fn run_key(claimed: &ClaimedTask) -> String {
    let task = &claimed.task;
    match &task.run {
        Some(_) => task.task_id.clone(),
        None if task.queue == EVENTS_QUEUE => task.task_id.clone(),
        None => task_run_key(&claimed.org, &task.queue, &task.task_id, task.created_at),
    }
}

/// Seconds since the epoch with their fraction (`1764547200.250000`), as
/// `X-CloudTasks-TaskETA` carries a schedule time.
fn epoch_seconds(at: jiff::Timestamp) -> String {
    let us = idem_core::clock::to_micros(at);
    format!(
        "{}.{:06}",
        us.div_euclid(1_000_000),
        us.rem_euclid(1_000_000)
    )
}

/// Why this attempt is a retry, in a few words: the previous attempt's
/// status, or its error (a timeout, a refused connection), cut to one line
/// of visible ASCII so that it is always a valid header value.
fn retry_reason(claimed: &ClaimedTask) -> String {
    const MAX: usize = 120;
    let previous = claimed
        .task
        .last_attempt
        .as_ref()
        .filter(|a| a.attempt + 1 == claimed.attempt);
    let text = match previous {
        Some(a) => match (a.status_code, a.error.as_deref()) {
            (Some(status), _) => format!("HTTP status {status}"),
            (None, Some(error)) => error.lines().next().unwrap_or("").to_string(),
            (None, None) => String::new(),
        },
        None => String::new(),
    };
    let text: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .take(MAX)
        .collect();
    match text.trim() {
        "" => "the previous attempt failed".to_string(),
        t => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(headers: std::collections::BTreeMap<String, String>) -> ClaimedTask {
        let now = jiff::Timestamp::UNIX_EPOCH;
        ClaimedTask {
            org: "default".into(),
            task: idem_store::Task {
                queue: "q".into(),
                task_id: "t".into(),
                uid: "u".into(),
                status: idem_store::Status::Running,
                target: idem_core::task::Target {
                    url: "http://127.0.0.1:9/".into(),
                    method: "POST".into(),
                    headers,
                    body: None,
                    oidc: None,
                    secret_headers: Vec::new(),
                    trace: None,
                },
                schedule_time: now,
                next_attempt_at: now,
                dispatch_deadline_s: 10,
                retry_config: Default::default(),
                attempt_count: 1,
                cancel_requested: false,
                created_at: now,
                finished_at: None,
                last_attempt: None,
                dedup_expires_at: None,
                callbacks: Default::default(),
                run: None,
                header_style: HeaderStyle::Idem,
                tag: None,
                group: None,
                priority: 0,
                lease: None,
                ended_claim: None,
                result: None,
            },
            attempt: 1,
            lease_expires_at: now,
        }
    }

    fn any_target() -> Sent<'static> {
        static URL: std::sync::LazyLock<reqwest::Url> =
            std::sync::LazyLock::new(|| reqwest::Url::parse("http://127.0.0.1/").unwrap());
        Sent {
            method: &reqwest::Method::POST,
            url: &URL,
        }
    }

    #[test]
    fn a_signed_delivery_signs_its_method_path_query_and_body() {
        let secret = SigningSecret::from_key(b"k".to_vec());
        let url = reqwest::Url::parse("https://pay.example/charge?order=42").unwrap();
        let sent = Sent {
            method: &reqwest::Method::POST,
            url: &url,
        };
        let headers = delivery_headers(
            &claimed(Default::default()),
            &sent,
            std::slice::from_ref(&secret),
            1_700_000_000,
            1,
        )
        .unwrap();
        let text = |name: &str| headers[name].to_str().unwrap().to_owned();
        let id = text("webhook-id");
        let head = idem_webhooks::Verifier::new(&[])
            .check_head(&id, "1700000000", &text("webhook-signature"), 1_700_000_000)
            .unwrap();
        let target = |path_and_query| SignedTarget {
            method: "POST",
            path_and_query,
            body_sha256: idem_webhooks::body_sha256(b""),
        };
        let signatures = text("idem-target-signature");
        assert!(
            head.verify_target(
                std::slice::from_ref(&secret),
                &signatures,
                &target("/charge?order=42")
            )
            .is_ok()
        );
        assert!(
            head.verify_target(
                &[secret],
                &signatures,
                &target("/admin/refund-everything?all=1")
            )
            .is_err()
        );
        // Unsigned deliveries carry neither signature.
        let unsigned = delivery_headers(&claimed(Default::default()), &sent, &[], 0, 1).unwrap();
        assert!(unsigned.get("idem-target-signature").is_none());
    }

    #[test]
    fn stored_headers_that_cannot_be_sent_fail_the_attempt_rather_than_panic() {
        // More than a HeaderMap holds: `with_capacity` alone would panic.
        let many = (0..40_000)
            .map(|i| (format!("x-h{i}"), "v".to_string()))
            .collect();
        assert!(delivery_headers(&claimed(many), &any_target(), &[], 0, 0).is_err());
        let bad = [("bad name".to_string(), "v".to_string())].into();
        assert!(delivery_headers(&claimed(bad), &any_target(), &[], 0, 0).is_err());
        let bad = [("x-ok".to_string(), "line\nbreak".to_string())].into();
        assert!(delivery_headers(&claimed(bad), &any_target(), &[], 0, 0).is_err());
        let fine = [("x-ok".to_string(), "v".to_string())].into();
        assert!(delivery_headers(&claimed(fine), &any_target(), &[], 0, 0).is_ok());
    }

    #[test]
    fn cloud_tasks_eta_and_retry_reason_are_valid_header_values() {
        let at = jiff::Timestamp::from_microsecond(1_764_547_200_250_000).unwrap();
        assert_eq!(epoch_seconds(at), "1764547200.250000");
        let mut c = claimed(Default::default());
        c.attempt = 2;
        assert_eq!(retry_reason(&c), "the previous attempt failed");
        let previous = |status_code, error: Option<&str>| idem_store::Attempt {
            attempt: 1,
            started_at: at,
            finished_at: Some(at),
            status_code,
            error: error.map(str::to_string),
            duration_ms: Some(1),
            response: None,
        };
        c.task.last_attempt = Some(previous(Some(503), None));
        assert_eq!(retry_reason(&c), "HTTP status 503");
        c.task.last_attempt = Some(previous(None, Some("connection failed: é\nmore")));
        let reason = retry_reason(&c);
        assert_eq!(reason, "connection failed: ?");
        assert!(HeaderValue::from_str(&reason).is_ok());
    }

    #[test]
    fn secrets_that_do_not_parse_are_skipped() {
        let good = idem_core::secrets::generate_signing_secret();
        let parsed = signing_secrets(&["whsec_!!".to_string(), good.clone()]);
        assert_eq!(&parsed[..], &[SigningSecret::parse(&good).unwrap()]);
    }
}
