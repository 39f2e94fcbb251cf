//! Events about work that ended: completion callbacks and organization
//! webhooks. How they are stored and made atomic with the final state they
//! report is told in `tables/events.rs`.

use crate::records::Task;
use idem_core::event::EventType;
use jiff::Timestamp;

/// The queue that holds an organization's events. `~` cannot appear in a
/// queue name, so the API can neither create nor address it, and an
/// event's ID never meets a user's task ID.
pub const EVENTS_QUEUE: &str = "~events";

/// How long a delivered (or failed) event stays in the store.
pub const EVENT_RETENTION_S: u64 = 86_400;

/// Writes the body of an event. The store decides which events a final
/// state raises and stores them in the transaction that makes it final; what
/// a receiver reads is the API's business. `idem serve` hands the store the
/// server's views, so that a callback shows a task as `GET` shows it.
pub trait EventRenderer: Send + Sync + 'static {
    /// The JSON body of `event` about `task`, which became final at `now`:
    /// for [`EventType::JobRunFailed`], a run of [`crate::jobs::JOBS_QUEUE`]
    /// (its [`Task::run`](crate::records::Task::run) set); otherwise a task
    /// of a user's queue.
    fn render(&self, event: EventType, task: Task, now: Timestamp) -> Vec<u8>;
}

/// The unit tests' renderer: they read no event's body.
#[cfg(test)]
pub(crate) fn unrendered() -> std::sync::Arc<dyn EventRenderer> {
    struct Unrendered;
    impl EventRenderer for Unrendered {
        fn render(&self, event: EventType, _: Task, _: Timestamp) -> Vec<u8> {
            format!("{{\"type\":\"{}\"}}", event.as_str()).into_bytes()
        }
    }
    std::sync::Arc::new(Unrendered)
}
