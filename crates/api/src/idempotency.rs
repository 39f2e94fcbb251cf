//! `/v1/idempotency-keys`.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// `GET /v1/idempotency-keys/{key}`: the caller's own record of a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = IdempotencyKeyView))]
pub struct IdempotencyKey {
    pub key: String,
    /// `in_progress` or `completed`.
    pub state: String,
    /// Digest of the request's fingerprint.
    pub fingerprint: String,
    pub status: Option<u16>,
    pub resource: Option<Resource>,
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub expires_at: Timestamp,
}

/// The resource a key's request created or changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ResourceView))]
pub struct Resource {
    pub kind: String,
    pub id: String,
}
