-- Idem schema, PostgreSQL dialect. Times are microseconds since the Unix epoch.
CREATE TABLE organizations (
    name        TEXT PRIMARY KEY,
    created_at  BIGINT NOT NULL
);

CREATE TABLE principals (
    org         TEXT NOT NULL,
    name        TEXT NOT NULL,
    kind        TEXT NOT NULL,
    role        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (org, name)
);

CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    org           TEXT NOT NULL,
    principal     TEXT NOT NULL,
    key_hash      TEXT NOT NULL UNIQUE,
    created_at    BIGINT NOT NULL,
    last_used_at  BIGINT
);
CREATE INDEX api_keys_by_principal ON api_keys (org, principal);

CREATE TABLE signing_secrets (
    org         TEXT NOT NULL,
    id          TEXT NOT NULL,
    secret      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (org, id)
);

CREATE TABLE queues (
    org         TEXT NOT NULL,
    name        TEXT NOT NULL,
    state       TEXT NOT NULL,
    config      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (org, name)
);

-- A task keeps its row after it ends (the tombstone) so its ID stays taken
-- until dedup_expires_at; uid tells generations of one ID apart.
CREATE TABLE tasks (
    org                  TEXT NOT NULL,
    queue                TEXT NOT NULL,
    task_id              TEXT NOT NULL,
    uid                  TEXT NOT NULL,
    status               TEXT NOT NULL,
    target               TEXT NOT NULL,
    body_form            TEXT,
    body                 BYTEA,
    schedule_time        BIGINT NOT NULL,
    next_attempt_at      BIGINT NOT NULL,
    dispatch_deadline_s  BIGINT NOT NULL,
    retry_config         TEXT NOT NULL,
    attempt_count        BIGINT NOT NULL,
    first_attempt_at     BIGINT,
    lease_expires_at     BIGINT,
    cancel_requested     BIGINT NOT NULL,
    created_at           BIGINT NOT NULL,
    finished_at          BIGINT,
    dedup_expires_at     BIGINT,
    last_attempt         TEXT,
    PRIMARY KEY (org, queue, task_id)
);
CREATE INDEX tasks_due ON tasks (next_attempt_at) WHERE status = 'pending';
CREATE INDEX tasks_tombstones ON tasks (dedup_expires_at) WHERE dedup_expires_at IS NOT NULL;

CREATE TABLE attempts (
    task_uid     TEXT NOT NULL,
    attempt      BIGINT NOT NULL,
    started_at   BIGINT NOT NULL,
    finished_at  BIGINT,
    status_code  BIGINT,
    error        TEXT,
    duration_ms  BIGINT,
    PRIMARY KEY (task_uid, attempt)
);
