//! The identity a delivery carries on every attempt (API.md §4).
//!
//! Derived only from fields fixed at creation, so every retry of one task
//! presents the same key, and a task ID reused after its dedup window — a
//! new task with a new `created_at` — presents a different one.

use jiff::Timestamp;
use sha2::{Digest, Sha256};

/// Renders an instant the one way run keys hash it: RFC 3339 in UTC with
/// `Z`, fractional seconds only when non-zero.
pub fn rfc3339(t: Timestamp) -> String {
    t.to_string()
}

/// `Idempotency-Key` of a task's deliveries: lowercase hex SHA-256 of
/// `"<org>/<queue>/<task_id>/<created_at>"`.
pub fn task_run_key(org: &str, queue: &str, task_id: &str, created_at: Timestamp) -> String {
    sha256_hex(&format!("{org}/{queue}/{task_id}/{}", rfc3339(created_at)))
}

/// Lowercase hex SHA-256 of `input`, the form of every run key.
pub fn sha256_hex(input: &str) -> String {
    hex::encode(Sha256::digest(input.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vector() {
        // printf '%s' 'default/payments/payment-12345/2026-10-16T12:00:00Z' | sha256sum
        let t: Timestamp = "2026-10-16T12:00:00Z".parse().unwrap();
        assert_eq!(
            task_run_key("default", "payments", "payment-12345", t),
            "4ea6785ed834e352d7cde896031c89b43a34237c1e36981504f07414ea1ef210"
        );
    }

    #[test]
    fn reused_id_gets_a_new_key() {
        let a: Timestamp = "2026-10-16T12:00:00Z".parse().unwrap();
        let b: Timestamp = "2026-10-17T12:00:00.5Z".parse().unwrap();
        assert_ne!(
            task_run_key("o", "q", "t", a),
            task_run_key("o", "q", "t", b)
        );
        assert_eq!(rfc3339(b), "2026-10-17T12:00:00.5Z");
    }
}
