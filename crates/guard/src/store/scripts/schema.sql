CREATE TABLE IF NOT EXISTS idem_guard_runs (
    key text PRIMARY KEY,
    state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
    attempt_id text NOT NULL,
    fence bigint NOT NULL,
    lease_expires timestamptz NOT NULL,
    expire_at timestamptz NOT NULL,
    claimed_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS idem_guard_runs_expire ON idem_guard_runs (expire_at);
CREATE TABLE IF NOT EXISTS idem_guard_fences (
    key text PRIMARY KEY,
    fence bigint NOT NULL,
    expire_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS idem_guard_fences_expire ON idem_guard_fences (expire_at);
CREATE TABLE IF NOT EXISTS idem_guard_tokens (
    token text PRIMARY KEY,
    key text NOT NULL,
    expire_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS idem_guard_tokens_expire ON idem_guard_tokens (expire_at);
