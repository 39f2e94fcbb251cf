//! What a delivery carries besides the target's own request (SPEC 4): the
//! identity headers, stable across retries, and the Standard Webhooks
//! signature.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{KeyInit, Mac};
use http::{HeaderMap, HeaderName, HeaderValue};
use idem_core::job::HeaderStyle;
use idem_core::run_key::{rfc3339, task_run_key};
use idem_core::schedule::format_schedule_time;
use idem_core::secrets::signing_key;
use idem_store::dispatch::ClaimedTask;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// `Webhook-Signature`: one `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
/// per secret, space-separated, so that a verifier holding either the old
/// or the new secret accepts the request during a rotation. Secrets that do
/// not decode are skipped: one corrupt secret must not stop deliveries
/// signed by the others.
pub fn signature(secrets: &[String], id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut out = Vec::with_capacity(secrets.len());
    for secret in secrets {
        let Some(key) = signing_key(secret) else {
            tracing::error!("a signing secret does not decode; deliveries omit it");
            continue;
        };
        let mut mac = HmacSha256::new_from_slice(&key).expect("HMAC takes keys of any length");
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        out.push(format!(
            "v1,{}",
            STANDARD.encode(mac.finalize().into_bytes())
        ));
    }
    out.join(" ")
}

/// The headers of one attempt: the target's own, then Idem's, which win
/// (a target cannot name them: they are refused when the task is created).
pub fn delivery_headers(
    claimed: &ClaimedTask,
    secrets: &[String],
    timestamp: i64,
) -> Result<HeaderMap, String> {
    let task = &claimed.task;
    let mut headers = HeaderMap::with_capacity(task.target.headers.len() + 10);
    for (name, value) in &task.target.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("target header name {name:?} is invalid"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("target header {name} has an invalid value"))?;
        headers.append(name, value);
    }
    // A job's run is keyed by its run ID (SPEC 5), a task by its run key.
    let run_key = match &task.run {
        Some(_) => task.task_id.clone(),
        None => task_run_key(&claimed.org, &task.queue, &task.task_id, task.created_at),
    };
    let body = task.target.body.as_ref().map_or(&[][..], |(_, b)| b);
    let mut set = |name: &'static str, value: String| {
        let value = HeaderValue::from_str(&value)
            .map_err(|_| format!("header {name} would carry an invalid value"))?;
        headers.insert(HeaderName::from_static(name), value);
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
        None => {
            set("idem-queue", task.queue.clone())?;
            set("idem-task-id", task.task_id.clone())?;
            set("idem-schedule-time", rfc3339(task.schedule_time))?;
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
    let signed = signature(secrets, &run_key, timestamp, body);
    set("webhook-id", run_key)?;
    set("webhook-timestamp", timestamp.to_string())?;
    if !signed.is_empty() {
        set("webhook-signature", signed)?;
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_standard_webhooks_reference_vector() {
        // From the Standard Webhooks reference libraries' test suite.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_string();
        let sig = signature(
            &[secret],
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn signs_with_every_secret_during_a_rotation() {
        let a = idem_core::secrets::generate_signing_secret();
        let b = idem_core::secrets::generate_signing_secret();
        let both = signature(&[a.clone(), b.clone()], "id", 1, b"body");
        let parts: Vec<&str> = both.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], signature(&[a], "id", 1, b"body"));
        assert_eq!(parts[1], signature(&[b], "id", 1, b"body"));
    }
}
