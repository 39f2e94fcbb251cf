-- Idempotency-Key records. On SQLite a request's in-progress lock is held
-- in memory (one process owns the file); rows are written completed, in the
-- same transaction as the request's effect.
CREATE TABLE idempotency_keys (
    org            TEXT NOT NULL,
    principal      TEXT NOT NULL,
    key            TEXT NOT NULL,
    fingerprint    TEXT NOT NULL,
    state          TEXT NOT NULL,
    token          TEXT NOT NULL,
    status         INTEGER,
    resource_kind  TEXT,
    resource_id    TEXT,
    body           TEXT,
    created_at     INTEGER NOT NULL,
    locked_until   INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    PRIMARY KEY (org, principal, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
