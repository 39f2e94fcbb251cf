-- Idempotency-Key records: an in-progress row is the lock that concurrent
-- requests on any node see; it turns completed in the same transaction as
-- the request's effect.
CREATE TABLE idempotency_keys (
    org            TEXT NOT NULL,
    principal      TEXT NOT NULL,
    key            TEXT NOT NULL,
    fingerprint    TEXT NOT NULL,
    state          TEXT NOT NULL,
    token          TEXT NOT NULL,
    status         BIGINT,
    resource_kind  TEXT,
    resource_id    TEXT,
    body           TEXT,
    created_at     BIGINT NOT NULL,
    locked_until   BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    PRIMARY KEY (org, principal, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
