// PostgreSQL, on idem-guard's own tables (idem_guard_runs, idem_guard_fences,
// idem_guard_tokens) with its statements, so guards of every language on one
// database see each other's claims. "Now" is the database's
// clock_timestamp(): nodes with skewed clocks still agree on leases.

import {
  type Claim,
  type ClaimOutcome,
  type ClaimTerms,
  type GuardStore,
  type HandlerOutcome,
  type RecordView,
  effectiveRetentionMs,
  micros,
  uuidv7,
} from "./store.js";

/** What the store needs of a `pg.Pool` or `pg.Client`. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>;
}

/** The lock idem-guard takes while creating its schema: nodes starting at once would race on the catalog. */
const SCHEMA_LOCK = 0x1de79a4d;

// One simple-protocol query is one implicit transaction, so the advisory
// lock is held until the schema is committed.
/** idem-guard's tables, as `crates/guard/src/store/scripts/schema.sql` has them (a test compares). */
export const TABLES = `
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
`;

const SCHEMA = `
SET LOCAL statement_timeout = 0;
SELECT pg_advisory_xact_lock(${SCHEMA_LOCK});
${TABLES}`;

const takeOver = (column: string) =>
  `    ${column} = CASE WHEN r.expire_at <= EXCLUDED.claimed_at OR (r.state = 'in_progress' AND r.lease_expires <= EXCLUDED.claimed_at) THEN EXCLUDED.${column} ELSE r.${column} END`;

// The Rust guard's claim statement: the fence upsert locks the key's
// watermark, so claims of one key run one after another; the record is
// rewritten only when it may be taken over, and `attempt_id = $2` in
// RETURNING means this claim won.
const CLAIM = `
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS t),
fence AS (
    INSERT INTO idem_guard_fences AS f (key, fence, expire_at)
    SELECT $1, GREATEST((extract(epoch FROM clock.t) * 1000000)::bigint, 1),
           clock.t + $4::bigint * interval '1 microsecond'
    FROM clock
    ON CONFLICT (key) DO UPDATE
        SET fence = GREATEST(f.fence + 1, EXCLUDED.fence),
            expire_at = GREATEST(f.expire_at, EXCLUDED.expire_at)
    RETURNING f.fence
)
INSERT INTO idem_guard_runs AS r
    (key, state, attempt_id, fence, lease_expires, expire_at, claimed_at)
SELECT $1, 'in_progress', $2, fence.fence,
       clock.t + $3::bigint * interval '1 microsecond',
       clock.t + $4::bigint * interval '1 microsecond',
       clock.t
FROM fence, clock
ON CONFLICT (key) DO UPDATE SET
${["state", "attempt_id", "fence", "lease_expires", "expire_at", "claimed_at"].map(takeOver).join(",\n")}
RETURNING r.attempt_id, r.state, r.fence::text AS fence
`;

const FINISH_SUCCESS = `
UPDATE idem_guard_runs SET state = 'completed'
WHERE key = $1 AND attempt_id = $2 AND state = 'in_progress'`;

const FINISH_FAILURE = `
DELETE FROM idem_guard_runs
WHERE key = $1 AND attempt_id = $2 AND state = 'in_progress'`;

const RENEW = `
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS t)
UPDATE idem_guard_runs r
SET lease_expires = GREATEST(r.lease_expires, clock.t + $3::bigint * interval '1 microsecond'),
    expire_at = GREATEST(r.expire_at, clock.t + $4::bigint * interval '1 microsecond')
FROM clock
WHERE r.key = $1 AND r.attempt_id = $2 AND r.state = 'in_progress' AND r.expire_at > clock.t`;

const BIND_TOKEN = `
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS t)
INSERT INTO idem_guard_tokens AS b (token, key, expire_at)
SELECT $1, $2, clock.t + $3::bigint * interval '1 microsecond' FROM clock
ON CONFLICT (token) DO UPDATE SET
    key = CASE WHEN b.expire_at <= (SELECT t FROM clock) THEN EXCLUDED.key ELSE b.key END,
    expire_at = CASE WHEN b.expire_at <= (SELECT t FROM clock)
        THEN EXCLUDED.expire_at ELSE b.expire_at END
RETURNING b.key`;

const INSPECT = `
SELECT state, attempt_id, fence::text AS fence FROM idem_guard_runs
WHERE key = $1 AND expire_at > clock_timestamp()`;

const sweepStatement = (table: string, column: string) => `
WITH doomed AS (
    SELECT ${column} FROM ${table} WHERE expire_at <= clock_timestamp()
    ORDER BY expire_at LIMIT $1 FOR UPDATE SKIP LOCKED
)
DELETE FROM ${table} x USING doomed WHERE x.${column} = doomed.${column}`;

export class PostgresGuardStore implements GuardStore {
  private constructor(private readonly db: Queryable) {}

  /** A store on `db` (a `pg.Pool`, best, or a connected `pg.Client`), its tables created if missing. */
  static async create(db: Queryable): Promise<PostgresGuardStore> {
    await db.query(SCHEMA);
    return new PostgresGuardStore(db);
  }

  async claim(key: string, terms: ClaimTerms): Promise<ClaimOutcome> {
    const attemptId = uuidv7();
    const { rows } = await this.db.query(CLAIM, [
      key,
      attemptId,
      micros(terms.leaseMs).toString(),
      micros(effectiveRetentionMs(terms)).toString(),
    ]);
    const row = rows[0] as { attempt_id: string; state: string; fence: string };
    if (row.attempt_id === attemptId) return { state: "claimed", claim: { key, attemptId, fence: BigInt(row.fence) } };
    return row.state === "completed" ? { state: "completed" } : { state: "in_progress" };
  }

  async finish(claim: Claim, outcome: HandlerOutcome): Promise<boolean> {
    const { rowCount } = await this.db.query(outcome === "success" ? FINISH_SUCCESS : FINISH_FAILURE, [claim.key, claim.attemptId]);
    return rowCount === 1;
  }

  async renew(claim: Claim, terms: ClaimTerms): Promise<boolean> {
    const { rowCount } = await this.db.query(RENEW, [
      claim.key,
      claim.attemptId,
      micros(terms.leaseMs).toString(),
      micros(effectiveRetentionMs(terms)).toString(),
    ]);
    return rowCount === 1;
  }

  async bindToken(token: string, key: string, ttlMs: number): Promise<string> {
    const { rows } = await this.db.query(BIND_TOKEN, [token, key, micros(ttlMs).toString()]);
    return (rows[0] as { key: string }).key;
  }

  async inspect(key: string): Promise<RecordView | undefined> {
    const { rows } = await this.db.query(INSPECT, [key]);
    const row = rows[0] as { state: "in_progress" | "completed"; attempt_id: string; fence: string } | undefined;
    return row && { state: row.state, attemptId: row.attempt_id, fence: BigInt(row.fence) };
  }

  async sweep(limit: number): Promise<{ records: number; fences: number; tokens: number }> {
    const records = await this.db.query(sweepStatement("idem_guard_runs", "key"), [limit]);
    const fences = await this.db.query(sweepStatement("idem_guard_fences", "key"), [limit]);
    const tokens = await this.db.query(sweepStatement("idem_guard_tokens", "token"), [limit]);
    return { records: records.rowCount ?? 0, fences: fences.rowCount ?? 0, tokens: tokens.rowCount ?? 0 };
  }
}
