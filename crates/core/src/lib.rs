//! Plain types and pure logic shared by every part of Idem.
//!
//! Nothing here performs I/O: the store, the server and the client build on
//! these types so that a rule (a name's syntax, a retry's delay, a run key)
//! is written once and tested without a database or a network.

pub mod backoff;
pub mod clock;
pub mod event;
pub mod field;
pub mod job;
pub mod names;
pub mod queue;
pub mod run_key;
pub mod schedule;
pub mod secrets;
pub mod target_policy;
pub mod task;
pub mod tenancy;
pub mod trace;

pub use clock::{Clock, ManualClock, SystemClock};
pub use field::{FieldError, FieldErrors};
