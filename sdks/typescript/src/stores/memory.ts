// An in-process store, for tests and single-process handlers that accept
// losing records on restart. JavaScript runs each method body up to its
// first await without interleaving, so every operation here is atomic.

import {
  type Claim,
  type ClaimOutcome,
  type ClaimTerms,
  type GuardStore,
  type HandlerOutcome,
  type RecordView,
  effectiveRetentionMs,
  micros,
  nextFence,
  uuidv7,
} from "./store.js";

interface Row {
  state: "in_progress" | "completed";
  attemptId: string;
  fence: bigint;
  leaseUs: bigint;
  expireUs: bigint;
}

export class MemoryGuardStore implements GuardStore {
  private readonly records = new Map<string, Row>();
  private readonly fences = new Map<string, { fence: bigint; expireUs: bigint }>();
  private readonly tokens = new Map<string, { key: string; expireUs: bigint }>();

  /** `now` in milliseconds since the epoch; tests may move it instead of sleeping. */
  constructor(private readonly now: () => number = Date.now) {}

  private nowUs(): bigint {
    return micros(this.now());
  }

  async claim(key: string, terms: ClaimTerms): Promise<ClaimOutcome> {
    const now = this.nowUs();
    const row = this.records.get(key);
    if (row && row.expireUs > now) {
      if (row.state === "completed") return { state: "completed" };
      if (row.leaseUs > now) return { state: "in_progress" };
    }
    const expireUs = now + micros(effectiveRetentionMs(terms));
    const mark = this.fences.get(key);
    const fence = nextFence(mark?.fence, now);
    this.fences.set(key, { fence, expireUs: mark && mark.expireUs > expireUs ? mark.expireUs : expireUs });
    const attemptId = uuidv7();
    this.records.set(key, { state: "in_progress", attemptId, fence, leaseUs: now + micros(terms.leaseMs), expireUs });
    return { state: "claimed", claim: { key, attemptId, fence } };
  }

  async finish(claim: Claim, outcome: HandlerOutcome): Promise<boolean> {
    const row = this.records.get(claim.key);
    if (!row || row.attemptId !== claim.attemptId || row.state !== "in_progress") return false;
    if (outcome === "success") row.state = "completed";
    else this.records.delete(claim.key);
    return true;
  }

  async renew(claim: Claim, terms: ClaimTerms): Promise<boolean> {
    const now = this.nowUs();
    const row = this.records.get(claim.key);
    if (!row || row.attemptId !== claim.attemptId || row.state !== "in_progress" || row.expireUs <= now) return false;
    const lease = now + micros(terms.leaseMs);
    const expire = now + micros(effectiveRetentionMs(terms));
    if (lease > row.leaseUs) row.leaseUs = lease;
    if (expire > row.expireUs) row.expireUs = expire;
    return true;
  }

  async bindToken(token: string, key: string, ttlMs: number): Promise<string> {
    const now = this.nowUs();
    const bound = this.tokens.get(token);
    if (bound && bound.expireUs > now) return bound.key;
    this.tokens.set(token, { key, expireUs: now + micros(ttlMs) });
    return key;
  }

  async inspect(key: string): Promise<RecordView | undefined> {
    const row = this.records.get(key);
    if (!row || row.expireUs <= this.nowUs()) return undefined;
    return { state: row.state, attemptId: row.attemptId, fence: row.fence };
  }

  async sweep(limit: number): Promise<{ records: number; fences: number; tokens: number }> {
    const now = this.nowUs();
    const sweepMap = <V extends { expireUs: bigint }>(map: Map<string, V>) => {
      let n = 0;
      for (const [k, v] of map) {
        if (n >= limit) break;
        if (v.expireUs <= now) {
          map.delete(k);
          n++;
        }
      }
      return n;
    };
    return { records: sweepMap(this.records), fences: sweepMap(this.fences), tokens: sweepMap(this.tokens) };
  }
}
