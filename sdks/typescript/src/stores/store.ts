// The claim store contract, as idem-guard defines it (crates/guard/src/store).
//
// Each store keeps, per run key, a record (`in_progress` or `completed`, with
// attempt_id, fence, lease and expire_at) that a failed attempt deletes so a
// retry can claim at once, and a fence watermark that failure leaves alone so
// fencing numbers keep growing. The PostgreSQL and Redis stores use the Rust
// guard's tables, keys and scripts: guards of every language on one store see
// each other's claims.

/** A won claim: the right to run the handler for `key` until the lease ends. */
export interface Claim {
  key: string;
  /** Identifies this attempt; finish and renew act only while the record holds it. */
  attemptId: string;
  /** Grows strictly with every claim of the key: pass it downstream to refuse stale writers. */
  fence: bigint;
}

/** How long a claim holds the key, and how long its record is kept. */
export interface ClaimTerms {
  leaseMs: number;
  /** Raised to at least the lease, so a live lease is never ignored as expired. */
  retentionMs: number;
}

export type ClaimOutcome =
  | { state: "claimed"; claim: Claim }
  | { state: "completed" }
  | { state: "in_progress" };

export type HandlerOutcome = "success" | "failure";

export interface RecordView {
  state: "in_progress" | "completed";
  attemptId: string;
  fence: bigint;
}

/** An atomic claim store. */
export interface GuardStore {
  /**
   * Atomically: a live completed record answers `completed`; a live
   * in-progress record with an unexpired lease answers `in_progress`;
   * otherwise a fresh in-progress record is written with a new attempt id and fence.
   */
  claim(key: string, terms: ClaimTerms): Promise<ClaimOutcome>;
  /** Only while the record holds `claim.attemptId` in progress: success completes it, failure deletes it. Answers whether it applied. */
  finish(claim: Claim, outcome: HandlerOutcome): Promise<boolean>;
  /** Only while the record holds the attempt in progress and unexpired: extends its lease (and expiry). Answers whether it did. */
  renew(claim: Claim, terms: ClaimTerms): Promise<boolean>;
  /** Binds a token digest to `key` unless a live binding exists; answers the bound key. */
  bindToken(token: string, key: string, ttlMs: number): Promise<string>;
  /** The record of `key`, unless absent or expired. */
  inspect(key: string): Promise<RecordView | undefined>;
  /** Deletes up to `limit` expired records and fence watermarks. */
  sweep(limit: number): Promise<{ records: number; fences: number; tokens: number }>;
}

export function effectiveRetentionMs(terms: ClaimTerms): number {
  return Math.max(terms.retentionMs, terms.leaseMs);
}

/** Milliseconds as the integer microseconds the stores count in. */
export function micros(ms: number): bigint {
  return BigInt(Math.round(ms * 1000));
}

/** A UUIDv7, as the Rust guard makes attempt ids: time-ordered, so records sort by age. */
export function uuidv7(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  const ms = BigInt(Date.now());
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The next fencing number: past the watermark, and past the clock once the watermark is swept. */
export function nextFence(watermark: bigint | undefined, nowUs: bigint): bigint {
  if (watermark === undefined) return nowUs > 1n ? nowUs : 1n;
  const next = watermark + 1n;
  return next > nowUs ? next : nowUs;
}
