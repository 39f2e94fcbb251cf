//! Events Idem delivers about the work it ran (API.md §12): completion
//! callbacks of a queue or task, and an organization's event webhooks.
//!
//! An event is delivered like a task, with retries, and carries a run key
//! of its own derived from the run key of what it reports, so a receiver
//! deduplicates it as it would any delivery.

use crate::field::FieldErrors;
use crate::run_key::sha256_hex;
use crate::task::{Target, TargetSpec};
use serde::{Deserialize, Serialize};

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum EventType {
    /// A task ended `succeeded`.
    #[serde(rename = "task.succeeded")]
    TaskSucceeded,
    /// A task ended `failed`.
    #[serde(rename = "task.failed")]
    TaskFailed,
    /// A cron job's run ended `failed`.
    #[serde(rename = "job.run_failed")]
    JobRunFailed,
}

impl EventType {
    pub const ALL: [EventType; 3] = [
        EventType::TaskSucceeded,
        EventType::TaskFailed,
        EventType::JobRunFailed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::TaskSucceeded => "task.succeeded",
            EventType::TaskFailed => "task.failed",
            EventType::JobRunFailed => "job.run_failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == s)
    }

    /// Whether an organization's webhook may subscribe to it: a task's
    /// success is told to its own callback only, since every task of an
    /// organization succeeding would be a webhook per task.
    pub fn is_webhook_event(self) -> bool {
        !matches!(self, EventType::TaskSucceeded)
    }
}

/// The run key of an event about the delivery whose run key is `source`:
/// lowercase hex SHA-256 of `"<source>/<event type>"`. The same on every
/// attempt, and one per final state, so a receiver deduplicates by it.
pub fn event_run_key(source: &str, event: EventType) -> String {
    sha256_hex(&format!("{source}/{}", event.as_str()))
}

/// The run key of an event as one organization webhook receives it:
/// `"<source>/<event type>/<webhook id>"` hashed, so that every webhook
/// (each a receiver of its own) gets one delivery of each event.
pub fn webhook_run_key(source: &str, event: EventType, webhook_id: &str) -> String {
    sha256_hex(&format!("{source}/{}/{webhook_id}", event.as_str()))
}

/// Validates a callback target: a target as in a task (section 3) whose
/// body is the event, so it gives none, and whose method carries a body.
pub fn resolve_callback(
    spec: TargetSpec,
    prefix: &str,
    errors: &mut FieldErrors,
) -> Option<Target> {
    let before = errors.0.len();
    for (given, name) in [
        (spec.body.is_some(), "body"),
        (spec.body_base64.is_some(), "body_base64"),
        (spec.json.is_some(), "json"),
    ] {
        if given {
            errors.push(
                format!("{prefix}.{name}"),
                "a callback's body is the event; give none",
            );
        }
    }
    let method = spec.method.as_deref().map(str::to_ascii_uppercase);
    if matches!(method.as_deref(), Some("GET" | "HEAD")) {
        errors.push(
            format!("{prefix}.method"),
            "a callback carries the event as its body: use POST, PUT or PATCH",
        );
    }
    let target = spec.resolve(prefix, errors);
    (errors.0.len() == before).then_some(target).flatten()
}

/// Where a queue's or a task's completion events go; `None` sends none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Callbacks {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_success: Option<Target>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<Target>,
}

impl Callbacks {
    pub fn is_empty(&self) -> bool {
        self.on_success.is_none() && self.on_failure.is_none()
    }

    /// The callback of a final state (`succeeded` or `failed`).
    pub fn of(&self, event: EventType) -> Option<&Target> {
        match event {
            EventType::TaskSucceeded => self.on_success.as_ref(),
            EventType::TaskFailed => self.on_failure.as_ref(),
            EventType::JobRunFailed => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_keys_differ_by_type_and_receiver_and_are_stable() {
        let a = event_run_key("k", EventType::TaskSucceeded);
        assert_eq!(a, event_run_key("k", EventType::TaskSucceeded));
        assert_ne!(a, event_run_key("k", EventType::TaskFailed));
        assert_ne!(a, event_run_key("k2", EventType::TaskSucceeded));
        let w = webhook_run_key("k", EventType::TaskFailed, "w1");
        assert_ne!(w, webhook_run_key("k", EventType::TaskFailed, "w2"));
        assert_ne!(w, event_run_key("k", EventType::TaskFailed));
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn a_callback_may_not_give_a_body_or_a_bodiless_method() {
        let mut errors = FieldErrors::new();
        let spec = TargetSpec {
            url: "http://cb.example/x".into(),
            method: Some("get".into()),
            body: Some("x".into()),
            ..Default::default()
        };
        assert!(resolve_callback(spec, "on_success", &mut errors).is_none());
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert!(fields.contains(&"on_success.body"), "{fields:?}");
        assert!(fields.contains(&"on_success.method"), "{fields:?}");
        let mut errors = FieldErrors::new();
        let ok = TargetSpec {
            url: "http://cb.example/x".into(),
            ..Default::default()
        };
        let t = resolve_callback(ok, "on_success", &mut errors).unwrap();
        assert_eq!(t.method, "POST");
        assert!(t.body.is_none());
    }
}
