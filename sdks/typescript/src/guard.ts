// idem-guard for Node: before a handler runs, claim the delivery's run key
// in a store; afterwards, finish the claim. The protocol is the Rust guard's
// (crates/guard/src/guard.rs):
//
// - a completed record answers 200 `{"status":"duplicate",…}` with
//   `Idempotent-Replayed: true`, the handler not run;
// - an in-progress record with an unexpired lease answers 409 (never 503:
//   some senders retry 503 without counting it);
// - otherwise the handler runs, its lease renewed every lease/3, so a slow
//   handler is never run twice because its lease ran out;
// - a 2xx completes the record; anything else deletes it, before the answer
//   goes out, so the sender's retry runs at once;
// - a renewal that finds the claim gone or taken over stops calling it this
//   attempt's: 409 LEASE_LOST, the record left alone.

import type { IncomingMessage, ServerResponse } from "node:http";
import { OidcError, type OidcVerifier, type VerifiedToken } from "./oidc.js";
import { type KeyConfig, KeyError, type RequestHead, deriveRunKey, headerMap, rawHeaderPairs, runKeyOfSignedMessage } from "./runkey.js";
import { SignatureError, type VerifiedDelivery, verifyDelivery } from "./signature.js";
import { type Claim, type ClaimOutcome, type ClaimTerms, type GuardStore, type HandlerOutcome, uuidv7 } from "./stores/store.js";

/** Shortest wait between renewals, so a tiny lease cannot renew in a busy loop. */
const MIN_RENEW_EVERY_MS = 10;

export interface GuardOptions {
  store: GuardStore;
  /** How long a claim survives a guard that died (default 5 min); renewed every third while the handler runs. */
  leaseMs?: number;
  /** How long a record is honoured (default 24 h). */
  retentionMs?: number;
  /** Identity sources and scopes of the run key (default: Idempotency-Key, Cloud Scheduler, Cloud Tasks; no scope). */
  keys?: KeyConfig;
  /** Told when a claim is lost or an outcome could not be recorded. */
  onWarning?: (message: string, detail: Record<string, unknown>) => void;
}

export type LeaseLostReason = "taken" | "unrenewed";

/** How a claimed attempt ended. */
export type GuardAttempt<T> =
  | { state: "done"; value: T; recorded: boolean }
  | { state: "failed"; error: unknown; recorded: boolean }
  | { state: "lease_lost"; reason: LeaseLostReason };

/** What {@link Guard.run} answers. */
export type GuardRun<T> = { state: "completed" } | { state: "in_progress" } | ({ claim: Claim } & GuardAttempt<T>);

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, Math.max(0, ms)));

/** `promise`, or `undefined` once `ms` passed. */
async function within<T>(promise: Promise<T>, ms: number): Promise<{ value: T } | { error: unknown } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ value }),
        (error) => ({ error }),
      ),
      new Promise<undefined>((ok) => (timer = setTimeout(() => ok(undefined), Math.max(0, ms)))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export class Guard {
  readonly store: GuardStore;
  readonly terms: ClaimTerms;
  readonly keys: KeyConfig;
  private readonly warn: NonNullable<GuardOptions["onWarning"]>;

  constructor(options: GuardOptions) {
    this.store = options.store;
    this.terms = { leaseMs: options.leaseMs ?? 5 * 60_000, retentionMs: options.retentionMs ?? 24 * 3600_000 };
    this.keys = options.keys ?? {};
    this.warn = options.onWarning ?? ((message, detail) => console.warn(`idem guard: ${message}`, detail));
  }

  /** The run key of a request, or a thrown {@link KeyError}. */
  runKey(head: RequestHead): string {
    return deriveRunKey(head, this.keys);
  }

  claim(key: string): Promise<ClaimOutcome> {
    return this.store.claim(key, this.terms);
  }

  finish(claim: Claim, outcome: HandlerOutcome): Promise<boolean> {
    return this.store.finish(claim, outcome);
  }

  /**
   * Claims `key` and, when won, runs `work` as the claimed attempt
   * ({@link runClaimed}); a resolved value is a success unless `outcomeOf`
   * says otherwise, a throw is a failure.
   */
  async run<T>(key: string, work: (claim: Claim, signal: AbortSignal) => Promise<T>, outcomeOf: (value: T) => HandlerOutcome = () => "success"): Promise<GuardRun<T>> {
    const claimedAt = Date.now();
    const outcome = await this.claim(key);
    if (outcome.state !== "claimed") return outcome;
    const attempt = await this.runClaimed(outcome.claim, claimedAt, (signal) => work(outcome.claim, signal), outcomeOf);
    return { claim: outcome.claim, ...attempt };
  }

  /**
   * Runs `work` as the attempt holding `claim`, renewing the lease every
   * lease/3. If a renewal finds the claim lost, `work`'s signal is aborted,
   * its outcome is never recorded (another attempt owns the run), and the
   * answer is `lease_lost`. Otherwise its outcome is recorded, retried while
   * the store cannot be reached for as long as the lease last granted holds.
   * `claimedAt` (ms) is from before the claim was asked for: the lease counts from it.
   */
  async runClaimed<T>(claim: Claim, claimedAt: number, work: (signal: AbortSignal) => Promise<T>, outcomeOf: (value: T) => HandlerOutcome = () => "success"): Promise<GuardAttempt<T>> {
    const keeper = this.keep(claim, claimedAt);
    const controller = new AbortController();
    const result = await Promise.race([
      work(controller.signal).then(
        (value) => ({ ok: true as const, value }),
        (error) => ({ ok: false as const, error }),
      ),
      keeper.lost.then((reason) => ({ lost: reason })),
    ]);
    keeper.stop();
    if ("lost" in result) {
      controller.abort(new Error("the claim was lost while its work ran"));
      this.warn("the claim was lost while its work ran; its outcome is not recorded", { runKey: claim.key, attemptId: claim.attemptId, reason: result.lost });
      return { state: "lease_lost", reason: result.lost };
    }
    const outcome: HandlerOutcome = result.ok ? outcomeOf(result.value) : "failure";
    const recorded = await this.finishWhileHeld(claim, outcome, keeper.heldUntil());
    return result.ok ? { state: "done", value: result.value, recorded } : { state: "failed", error: result.error, recorded };
  }

  /** Renews `claim` every lease/3 until stopped; `lost` resolves once the claim is no longer this attempt's. */
  keep(claim: Claim, claimedAt: number): { lost: Promise<LeaseLostReason>; stop: () => void; heldUntil: () => number } {
    const lease = this.terms.leaseMs;
    const every = Math.max(lease / 3, MIN_RENEW_EVERY_MS);
    const retryEvery = Math.max(every / 4, MIN_RENEW_EVERY_MS);
    let heldUntil = claimedAt + lease;
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let wake: () => void = () => {};
    // The wait is cleared on stop: a pending renewal timer would keep the
    // process alive for up to a third of the lease after the handler ended.
    const pause = (ms: number) =>
      new Promise<void>((ok) => {
        wake = ok;
        timer = setTimeout(ok, Math.max(0, ms));
      });
    const lost = (async (): Promise<LeaseLostReason> => {
      let next = claimedAt + every;
      for (;;) {
        await pause(next - Date.now());
        if (stopped) return new Promise<never>(() => {});
        const sent = Date.now();
        // An answer after the lease ran out is not waited for, except by a renewal already late.
        const deadline = Math.max(Math.min(sent + every, heldUntil), sent + MIN_RENEW_EVERY_MS);
        const answer = await within(this.store.renew(claim, this.terms), deadline - sent);
        if (stopped) return new Promise<never>(() => {});
        if (answer && "value" in answer) {
          if (!answer.value) return "taken";
          heldUntil = sent + lease;
          next = sent + every;
          continue;
        }
        const now = Date.now();
        if (now >= heldUntil) return "unrenewed";
        this.warn("renewing a claim's lease failed; retrying until the lease runs out", {
          runKey: claim.key,
          error: answer ? (answer as { error: unknown }).error : `no answer within ${deadline - sent} ms`,
        });
        next = Math.min(now + retryEvery, heldUntil);
      }
    })();
    return {
      lost,
      stop: () => {
        stopped = true;
        clearTimeout(timer);
        wake();
      },
      heldUntil: () => heldUntil,
    };
  }

  /** finish, retried while the store fails or stalls until `heldUntil`: past it another attempt may own the run. */
  private async finishWhileHeld(claim: Claim, outcome: HandlerOutcome, heldUntil: number): Promise<boolean> {
    let pause = MIN_RENEW_EVERY_MS * 5;
    for (;;) {
      const answer = await within(this.finish(claim, outcome), heldUntil - Date.now());
      if (answer && "value" in answer) {
        if (!answer.value) {
          this.warn("attempt finished after losing its claim; its outcome is not recorded", { runKey: claim.key, attemptId: claim.attemptId, outcome });
        }
        return answer.value;
      }
      if (Date.now() + pause >= heldUntil) {
        this.warn("could not record the outcome of a run while its lease held; a retry after the lease may run it again", {
          runKey: claim.key,
          outcome,
          error: answer ? (answer as { error: unknown }).error : "no answer before the lease ran out",
        });
        return false;
      }
      await sleep(pause);
      pause = Math.max(Math.min(pause * 2, this.terms.leaseMs / 12), MIN_RENEW_EVERY_MS);
    }
  }
}

// Express ---------------------------------------------------------------

/** What the guard leaves on the request for the handler. */
export interface GuardContext {
  runKey: string;
  claim: Claim;
  /** This claim's fencing number: pass it to what the handler writes to. */
  fence: bigint;
  /** Set when the delivery's signature was verified. */
  delivery?: VerifiedDelivery;
  /** Set when an OIDC token was verified. */
  token?: VerifiedToken;
  /** Aborted when the claim is lost while the handler runs. */
  signal: AbortSignal;
}

export interface ExpressGuardOptions extends GuardOptions {
  /**
   * Signing secrets (`whsec_…`, several during a rotation): a valid Standard
   * Webhooks signature is then required (401 otherwise), and the run key is
   * the signed `webhook-id` alone, so nothing unsigned can give a signed
   * message a second run.
   */
  secrets?: string[];
  /** With `secrets`: require `Idem-Target-Signature` too (it is verified whenever present). */
  requireTargetSignature?: boolean;
  /** Require an OIDC ID token this verifier accepts (401 otherwise). */
  oidc?: OidcVerifier;
  /** Signature timestamp tolerance (default 300 s). */
  toleranceS?: number;
  /** Largest body read to verify a signature (default 10 MiB); more answers 413. */
  maxBodyBytes?: number;
}

type Req = IncomingMessage & { originalUrl?: string; body?: unknown; rawBody?: Buffer; idem?: GuardContext; _body?: boolean };
type Res = ServerResponse;
type Next = (error?: unknown) => void;

const STATUS_TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  409: "Conflict",
  413: "Payload Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** A problem document as the API's, with the request's ID and path. */
function sendProblem(req: Req, res: Res, status: number, code: string, detail: string, headers: Record<string, string> = {}) {
  const requestId = uuidv7();
  const body = JSON.stringify({
    type: code,
    title: STATUS_TITLES[status] ?? "",
    status,
    detail,
    request_id: requestId,
    instance: (req.originalUrl ?? req.url ?? "/").split("?", 1)[0],
  });
  res.writeHead(status, { "content-type": "application/problem+json", "idem-request-id": requestId, ...headers });
  res.end(body);
}

/** 503: the claim store could not be asked; the sender retries. */
const storeUnavailable = (req: Req, res: Res) => sendProblem(req, res, 503, "UNAVAILABLE", "the guard store is unavailable", { "retry-after": "1" });

async function readBody(req: Req, limit: number): Promise<Buffer | "too_large"> {
  if (Buffer.isBuffer(req.body)) return req.body;
  if (req.rawBody) return req.rawBody;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return "too_large";
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

const SIGNED_ID = "Idempotency-Key differs from the signed Webhook-Id";
const TOKEN_RUN = "Idempotency-Key differs from the ID token's idem_run";

/**
 * The key of a request whose run is named by what authenticated it: a sender
 * that also sends `Idempotency-Key` must send the same value, else it is a
 * captured delivery replayed under a new key.
 */
function namedRunKey(headers: Map<string, string[]>, id: string): string | undefined {
  const keys = headers.get("idempotency-key") ?? [];
  if (keys.length > 1 || (keys.length === 1 && keys[0]!.trim() !== id)) return undefined;
  return runKeyOfSignedMessage(id);
}

/**
 * Express middleware (also plain `(req, res, next)` for Node's http): runs
 * the rest of the chain at most once per delivery. The handler finds
 * {@link GuardContext} as `req.idem`. With `secrets`, the guard reads the body
 * to verify it and leaves it as `req.rawBody` (a Buffer) and `req.body`
 * (parsed for JSON content types): mount it before body parsers, or after
 * `express.raw()`.
 */
export function idemGuard(options: ExpressGuardOptions): (req: Req, res: Res, next: Next) => Promise<void> {
  const guard = new Guard(options);
  const secrets = options.secrets ?? [];
  return async (req, res, next) => {
    const pairs = rawHeaderPairs(req.rawHeaders);
    const headers = headerMap(pairs);
    const uri = req.originalUrl ?? req.url ?? "/";
    let token: VerifiedToken | undefined;
    if (options.oidc) {
      try {
        token = await options.oidc.verifyHeaders(pairs);
      } catch (error) {
        if (!(error instanceof OidcError)) throw error;
        return error.status === 503
          ? sendProblem(req, res, 503, "UNAVAILABLE", error.message, { "retry-after": "1" })
          : sendProblem(req, res, 401, "UNAUTHENTICATED", error.message);
      }
    }
    let key: string;
    let delivery: VerifiedDelivery | undefined;
    if (secrets.length === 0) {
      if (token?.idemRun !== undefined) {
        const named = namedRunKey(headers, token.idemRun);
        if (!named) return sendProblem(req, res, 401, "UNAUTHENTICATED", TOKEN_RUN);
        key = named;
      } else {
        try {
          key = guard.runKey({ uri, headers: pairs });
        } catch (error) {
          if (!(error instanceof KeyError)) throw error;
          return sendProblem(req, res, 400, "INVALID_ARGUMENT", error.message);
        }
      }
    } else {
      const body = await readBody(req, options.maxBodyBytes ?? 10 * 1024 * 1024);
      if (body === "too_large") return sendProblem(req, res, 413, "PAYLOAD_TOO_LARGE", "the request body is larger than the guard reads");
      req.rawBody = body;
      if (!Buffer.isBuffer(req.body)) {
        const type = String(req.headers["content-type"] ?? "");
        let parsed: unknown = body;
        if (/[/+]json\b/i.test(type) && body.length > 0) {
          try {
            parsed = JSON.parse(body.toString("utf8"));
          } catch {
            parsed = body;
          }
        }
        req.body = parsed;
        // Body parsers mounted later see the body as read.
        req._body = true;
      }
      try {
        delivery = verifyDelivery(secrets, { method: req.method ?? "GET", pathAndQuery: uri, headers: pairs, body }, {
          ...(options.requireTargetSignature ? { requireTargetSignature: true } : {}),
          ...(options.toleranceS !== undefined ? { toleranceS: options.toleranceS } : {}),
        });
      } catch (error) {
        if (!(error instanceof SignatureError)) throw error;
        return sendProblem(req, res, 401, "UNAUTHENTICATED", error.message);
      }
      const named = namedRunKey(headers, delivery.webhookId);
      if (!named) return sendProblem(req, res, 401, "UNAUTHENTICATED", SIGNED_ID);
      if (token?.idemRun !== undefined && token.idemRun !== delivery.webhookId) {
        return sendProblem(req, res, 401, "UNAUTHENTICATED", "the ID token's idem_run differs from the signed Webhook-Id");
      }
      key = named;
    }
    if (token && token.idemRun === undefined && options.oidc) {
      // A token that names no run opens the first run it is sent with, and
      // no other while it is accepted.
      const ttl = Math.max(1000, (token.expiresAt + options.oidc.leewayS) * 1000 - Date.now());
      try {
        const bound = await guard.store.bindToken(token.digest, key, ttl);
        if (bound !== key) {
          return sendProblem(req, res, 401, "UNAUTHENTICATED", "this ID token already opened another run: a token without idem_run opens one run, until it expires");
        }
      } catch {
        return storeUnavailable(req, res);
      }
    }

    const claimedAt = Date.now();
    let outcome: ClaimOutcome;
    try {
      outcome = await guard.claim(key);
    } catch {
      return storeUnavailable(req, res);
    }
    if (outcome.state === "completed") {
      res.writeHead(200, { "content-type": "application/json", "idempotent-replayed": "true" });
      res.end(`{"status":"duplicate","run_key":"${key}"}`);
      return;
    }
    if (outcome.state === "in_progress") {
      return sendProblem(req, res, 409, "IDEMPOTENCY_KEY_IN_PROGRESS", `run ${key} is being processed by another attempt`, { "retry-after": "1" });
    }
    const claim = outcome.claim;

    // The handler's answer is held back until its outcome is recorded: a
    // failure's record must be gone before the sender sees the 5xx, and a
    // lost claim must not answer with what the handler wrote.
    const original = { writeHead: res.writeHead, write: res.write, end: res.end };
    let head: unknown[] | undefined;
    const chunks: Array<[unknown, unknown]> = [];
    let answered!: (status: number) => void;
    const ended = new Promise<number>((ok) => (answered = ok));
    let endArgs: unknown[] = [];
    let swallowed = false;
    res.writeHead = function (this: Res, ...args: unknown[]) {
      if (swallowed) return this;
      head = args;
      res.statusCode = args[0] as number;
      return this;
    } as typeof res.writeHead;
    res.write = function (this: Res, chunk: unknown, encoding?: unknown, cb?: unknown) {
      const done = typeof encoding === "function" ? encoding : cb;
      if (!swallowed) chunks.push([chunk, typeof encoding === "string" ? encoding : undefined]);
      if (typeof done === "function") queueMicrotask(done as () => void);
      return true;
    } as typeof res.write;
    res.end = function (this: Res, ...args: unknown[]) {
      if (!swallowed) {
        endArgs = args;
        answered(res.statusCode);
      }
      return this;
    } as typeof res.end;
    const restore = () => Object.assign(res, original);

    const attempt = await guard.runClaimed(
      claim,
      claimedAt,
      (signal) => {
        req.idem = { runKey: key, claim, fence: claim.fence, signal, ...(delivery ? { delivery } : {}), ...(token ? { token } : {}) };
        try {
          next();
        } catch (error) {
          next(error);
        }
        return ended;
      },
      (status) => (status >= 200 && status < 300 ? "success" : "failure"),
    );
    if (attempt.state === "lease_lost") {
      swallowed = true;
      restore();
      const detail =
        attempt.reason === "taken"
          ? `run ${key} stopped being this attempt's while it ran (it was taken over or is gone); this attempt was stopped and its outcome not recorded`
          : `the guard store could not renew run ${key}'s lease before it ran out; this attempt was stopped and its outcome not recorded`;
      if (!res.headersSent) sendProblem(req, res, 409, "LEASE_LOST", detail, { "retry-after": "1" });
      // Whatever the handler writes from now on goes nowhere.
      res.write = function (this: Res, _c: unknown, e?: unknown, cb?: unknown) {
        const done = typeof e === "function" ? e : cb;
        if (typeof done === "function") queueMicrotask(done as () => void);
        return true;
      } as typeof res.write;
      res.end = function (this: Res) {
        return this;
      } as typeof res.end;
      res.writeHead = function (this: Res) {
        return this;
      } as typeof res.writeHead;
      return;
    }
    restore();
    if (head) (original.writeHead as (...a: unknown[]) => unknown).apply(res, head);
    for (const [chunk, encoding] of chunks) {
      (original.write as (...a: unknown[]) => unknown).call(res, chunk, ...(encoding ? [encoding] : []));
    }
    (original.end as (...a: unknown[]) => unknown).apply(res, endArgs);
  };
}
