//! Events about work that ended: completion callbacks and organization
//! webhooks. How they are stored and made atomic with the final state they
//! report is told in `tables/events.rs`.

/// The queue that holds an organization's events. `~` cannot appear in a
/// queue name, so the API can neither create nor address it, and an
/// event's ID never meets a user's task ID.
pub const EVENTS_QUEUE: &str = "~events";

/// How long a delivered (or failed) event stays in the store.
pub const EVENT_RETENTION_S: u64 = 86_400;
