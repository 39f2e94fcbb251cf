// A typed client of Idem's HTTP API, with the retry discipline of
// idem-client (crates/client): every POST and PATCH carries ONE
// Idempotency-Key per logical call, the same on every attempt, so the server
// runs the first attempt that reaches it and replays its result to the
// others. What is retried is what says "the answer was lost or the server
// could not take the request now": network errors and timeouts, 429 (not a
// quota's RESOURCE_EXHAUSTED), 5xx, and 409 IDEMPOTENCY_KEY_IN_PROGRESS (the
// first attempt is still running). Any other 4xx would only repeat itself.

import { randomUUID } from "node:crypto";
import {
  DecodeError,
  InvalidRequestError,
  ProblemError,
  TransportError,
  UnexpectedStatusError,
  looksLikeProblem,
  problemError,
} from "./errors.js";
import type * as T from "./types.js";

/** How calls are retried. */
export interface RetryPolicy {
  /** Attempts in all, the first included; 1 disables retries. */
  maxAttempts: number;
  /** No retry starts later than this after the call began. */
  maxElapsedMs: number;
  /** Wait before the first retry, before jitter; doubles per retry. */
  initialBackoffMs: number;
  /** Longest wait computed from the backoff (a longer Retry-After is still honoured). */
  maxBackoffMs: number;
  /** How long one attempt may take, its answer's body included. */
  attemptTimeoutMs: number;
}

/** 5 attempts within 30 s, backoff 200 ms to 5 s, 30 s per attempt: idem-client's defaults. */
export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 5,
  maxElapsedMs: 30_000,
  initialBackoffMs: 200,
  maxBackoffMs: 5_000,
  attemptTimeoutMs: 30_000,
};

export interface ClientOptions {
  /** `http://127.0.0.1:7070`; a path prefix is kept. */
  baseUrl: string | URL;
  /** Sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  retry?: Partial<RetryPolicy>;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  userAgent?: string;
}

/** An answer, with what the server said about it. */
export interface ApiResponse<V> {
  value: V;
  /** 201 for creates; 200, 202 or 204 otherwise. */
  status: number;
  /** The server replayed an earlier request's result (`Idempotent-Replayed: true`): the effect happened once, earlier. */
  replayed: boolean;
  /** `Idem-Request-Id`, to quote when asking about this answer. */
  requestId: string | undefined;
  /** The key sent with every attempt (keyed POST and PATCH only). */
  idempotencyKey: string | undefined;
  /** Attempts made, the first included. */
  attempts: number;
  headers: Headers;
}

/** Per-call settings. */
export interface CallOptions {
  /** A key of the caller's instead of a fresh one: reuse an earlier call's key to get its result. */
  idempotencyKey?: string;
  /** Aborts the call (not retried). */
  signal?: AbortSignal;
}

type JsonBody = { kind: "json"; text: string };
type RawBody = { kind: "raw"; bytes: Uint8Array | string; contentType: string };
type FormBody = { kind: "form"; build: () => FormData };

interface Call {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  segments: string[];
  /** A custom method after the last segment (`tasks:batch`): part of the route, not data to encode. */
  verb?: string;
  query?: Record<string, string | number | boolean | undefined | null>;
  body?: JsonBody | RawBody | FormBody;
  /** Whether a POST or PATCH carries a key: not on the pull routes, which ignore one. */
  keyed?: boolean;
  /** Added to the attempt timeout, for calls the server holds on purpose (`wait_ms`). */
  extraTimeMs?: number;
  options?: CallOptions;
}

/** A fresh idempotency key: a random UUID, one per logical call. */
export function newIdempotencyKey(): string {
  return randomUUID();
}

function checkKey(key: string): void {
  if (key.length < 1 || key.length > 255 || !/^[\x20-\x7e]+$/.test(key)) {
    throw new InvalidRequestError("an idempotency key is 1-255 printable ASCII characters");
  }
}

/** `Retry-After` as delay-seconds or an HTTP date, in milliseconds. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function transientStatus(status: number, code: string | undefined): boolean {
  // A quota stays reached until someone deletes or raises something.
  return (
    (status === 429 && code !== "RESOURCE_EXHAUSTED") ||
    status >= 500 ||
    (status === 409 && code === "IDEMPOTENCY_KEY_IN_PROGRESS")
  );
}

/** The wait before retry `n` (1 for the first): jittered into [backoff/2, backoff], never shorter than Retry-After. */
export function retryDelay(policy: RetryPolicy, n: number, retryAfterMs: number | undefined): number {
  const backoff = Math.min(policy.initialBackoffMs * 2 ** Math.min(n - 1, 30), policy.maxBackoffMs);
  const jittered = backoff / 2 + Math.random() * (backoff / 2);
  return Math.max(jittered, retryAfterMs ?? 0);
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((ok, fail) => {
    if (signal?.aborted) return fail(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      ok();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      fail(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

function json(value: unknown): JsonBody {
  return { kind: "json", text: JSON.stringify(value) };
}

/** Options of a task create beyond its content. */
export interface CreateTaskOptions extends CallOptions {
  /** Wait up to this long (1–30000 ms) for a final state: 200 if it got there, 202 if not. */
  waitMs?: number;
  /**
   * Sends the task as `multipart/form-data`, these bytes as its `body` part
   * (no base64 inflation; the content type becomes the delivery's, or the
   * pull task's payload). The task's own target body or payload must be unset.
   */
  upload?: { bytes: Uint8Array | string; contentType?: string; fileName?: string };
}

export interface BatchOptions extends CallOptions {
  /** All or nothing: the first item that cannot be created fails the call, and none is created. */
  atomic?: boolean;
  /** `ndjson` sends one task per line (`application/x-ndjson`); problems then name items by line. */
  format?: "json" | "ndjson";
}

export interface ClaimOptions extends CallOptions {
  /** 1–100 (default 1). */
  maxTasks?: number;
  /** How long the server waits for a due task when none is (0–30000 ms). */
  waitMs?: number;
  /** Each lease's length, 1–3600 s (default 60); heartbeats extend it. */
  leaseS?: number;
  /** Only tasks with this tag. */
  tag?: string;
}

/** A client of one Idem server. */
export class IdemClient {
  readonly baseUrl: URL;
  readonly retry: RetryPolicy;
  private readonly apiKey: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly userAgent: string;

  constructor(options: ClientOptions) {
    const base = new URL(options.baseUrl);
    if (base.protocol !== "http:" && base.protocol !== "https:") {
      throw new InvalidRequestError(`base URL ${base} is not http or https`);
    }
    if (base.search || base.hash) throw new InvalidRequestError("the base URL must not have a query or fragment");
    // Paths are appended to the base's path.
    if (!base.pathname.endsWith("/")) base.pathname += "/";
    this.baseUrl = base;
    this.apiKey = options.apiKey;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.userAgent = options.userAgent ?? "idem-client-typescript/0.1.0";
  }

  private url(call: Call): URL {
    let path = this.baseUrl.pathname + "v1";
    for (const s of call.segments) path += "/" + encodeURIComponent(s);
    if (call.verb) path += ":" + call.verb;
    const url = new URL(this.baseUrl);
    url.pathname = path;
    for (const [k, v] of Object.entries(call.query ?? {})) {
      if (v !== undefined && v !== null) url.searchParams.append(k, String(v));
    }
    return url;
  }

  /** Sends `call`, retrying transient failures per the policy, and decodes a success answer. */
  private async execute<V>(call: Call): Promise<ApiResponse<V>> {
    const keyed = (call.method === "POST" || call.method === "PATCH") && call.keyed !== false;
    const key = keyed ? (call.options?.idempotencyKey ?? newIdempotencyKey()) : undefined;
    if (key !== undefined) checkKey(key);
    const url = this.url(call);
    const policy = this.retry;
    const started = Date.now();
    const userSignal = call.options?.signal;
    // The same on every attempt: one key per logical call.
    const headers: Record<string, string> = { "user-agent": this.userAgent, accept: "application/json" };
    if (this.apiKey !== undefined) headers["authorization"] = `Bearer ${this.apiKey}`;
    if (key !== undefined) headers["idempotency-key"] = key;
    if (call.body?.kind === "json") headers["content-type"] = "application/json";
    else if (call.body?.kind === "raw") headers["content-type"] = call.body.contentType;
    let attempts = 0;
    /** The wait before another attempt, or undefined when the policy allows none. */
    const retryWait = (retryAfterMs: number | undefined): number | undefined => {
      if (attempts >= Math.max(1, policy.maxAttempts)) return undefined;
      const wait = retryDelay(policy, attempts, retryAfterMs);
      return Date.now() - started + wait > policy.maxElapsedMs ? undefined : wait;
    };
    for (;;) {
      attempts++;
      let body: RequestInit["body"] | undefined;
      if (call.body?.kind === "json") body = call.body.text;
      else if (call.body?.kind === "raw") body = call.body.bytes as RequestInit["body"];
      // A form is consumed by sending: each attempt builds its own (the
      // boundary differs, which the server's fingerprint ignores).
      else if (call.body?.kind === "form") body = call.body.build();
      const timeout = AbortSignal.timeout(policy.attemptTimeoutMs + (call.extraTimeMs ?? 0));
      const signal = userSignal ? AbortSignal.any([userSignal, timeout]) : timeout;
      let status: number;
      let responseHeaders: Headers;
      let bytes: Uint8Array;
      try {
        const response = await this.fetchImpl(url, { method: call.method, headers, body, signal, redirect: "manual" });
        status = response.status;
        responseHeaders = response.headers;
        // Read in full inside the attempt: a connection lost mid-body is a
        // lost answer, retried like any other.
        bytes = new Uint8Array(await response.arrayBuffer());
      } catch (error) {
        if (userSignal?.aborted) throw userSignal.reason;
        const wait = retryWait(undefined);
        if (wait === undefined) {
          const cause = (error as Error)?.cause ?? error;
          throw new TransportError(
            `no answer from ${call.method} ${url.pathname} after ${attempts} attempt(s): ${(cause as Error)?.message ?? cause}`,
            attempts,
            key,
            { cause: error },
          );
        }
        await sleep(wait, userSignal);
        continue;
      }
      const requestId = responseHeaders.get("idem-request-id") ?? undefined;
      const text = new TextDecoder().decode(bytes);
      if (status < 200 || status >= 300) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        const problem = looksLikeProblem(parsed) ? parsed : undefined;
        const retryAfterMs = parseRetryAfter(responseHeaders.get("retry-after"));
        if (transientStatus(status, problem?.type)) {
          const wait = retryWait(retryAfterMs);
          if (wait !== undefined) {
            await sleep(wait, userSignal);
            continue;
          }
        }
        if (problem) {
          throw problemError(problem, { ...(requestId ? { requestId } : {}), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
        }
        throw new UnexpectedStatusError(status, requestId, text.slice(0, 200));
      }
      let value: V;
      try {
        value = (text === "" ? undefined : JSON.parse(text)) as V;
      } catch (error) {
        throw new DecodeError(status, requestId, { cause: error });
      }
      return {
        value,
        status,
        replayed: responseHeaders.get("idempotent-replayed")?.trim().toLowerCase() === "true",
        requestId,
        idempotencyKey: key,
        attempts,
        headers: responseHeaders,
      };
    }
  }

  /** Every item of a list, page after page, following `next_page_token`. */
  async *paginate<V>(fetchPage: (page: T.PageOptions) => Promise<ApiResponse<T.Page<V>>>, options: T.PageOptions = {}): AsyncGenerator<V> {
    let token = options.page_token;
    do {
      const page = (await fetchPage({ ...options, ...(token !== undefined ? { page_token: token } : {}) })).value;
      yield* page.items;
      token = page.next_page_token ?? undefined;
    } while (token);
  }

  // Health -------------------------------------------------------------

  /** `GET /readyz`: whether the server and its store are ready. */
  async ready(options: CallOptions = {}): Promise<boolean> {
    const r = await this.fetchImpl(new URL("readyz", this.baseUrl), options.signal ? { signal: options.signal } : {});
    await r.arrayBuffer();
    return r.ok;
  }

  /** `GET /openapi.json`: the document this client's types come from. */
  openapi(): Promise<unknown> {
    return this.rootJson("openapi.json");
  }

  /** `GET /.well-known/openid-configuration` (no API key needed). */
  getOpenIdConfiguration(): Promise<T.OpenIdConfiguration> {
    return this.rootJson<T.OpenIdConfiguration>(".well-known/openid-configuration");
  }

  /** `GET /.well-known/jwks.json`: the keys Idem's ID tokens are signed with. */
  getJwks(): Promise<T.Jwks> {
    return this.rootJson<T.Jwks>(".well-known/jwks.json");
  }

  /** A document outside /v1, fetched once, without key or retries. */
  private async rootJson<V>(path: string): Promise<V> {
    const r = await this.fetchImpl(new URL(path, this.baseUrl));
    return (await r.json()) as V;
  }

  // Queues -------------------------------------------------------------

  /** `POST /v1/queues` (admin): 201, or 409 QUEUE_ALREADY_EXISTS. */
  createQueue(queue: T.NewQueue, options?: CallOptions) {
    return this.execute<T.Queue>({ method: "POST", segments: ["queues"], body: json(queue), options });
  }
  listQueues(page: T.PageOptions = {}, options?: CallOptions) {
    return this.execute<T.Page<T.Queue>>({ method: "GET", segments: ["queues"], query: { ...page }, options });
  }
  iterateQueues(page: T.PageOptions = {}) {
    return this.paginate((p) => this.listQueues(p), page);
  }
  getQueue(queue: string, options?: CallOptions) {
    return this.execute<T.Queue>({ method: "GET", segments: ["queues", queue], options });
  }
  /** `GET /v1/queues/{queue}/groups`: the groups with live tasks, by name (`id_prefix` filters). */
  listQueueGroups(queue: string, filter: T.GroupFilter = {}, options?: CallOptions) {
    return this.execute<T.Page<T.Group>>({ method: "GET", segments: ["queues", queue, "groups"], query: { ...filter }, options });
  }
  iterateQueueGroups(queue: string, filter: T.GroupFilter = {}) {
    return this.paginate((p) => this.listQueueGroups(queue, { ...filter, ...p }), filter);
  }
  /** `PATCH /v1/queues/{queue}`: `null` removes a callback. */
  updateQueue(queue: string, patch: T.QueuePatch, options?: CallOptions) {
    return this.execute<T.Queue>({ method: "PATCH", segments: ["queues", queue], body: json(patch), options });
  }
  deleteQueue(queue: string, options?: CallOptions) {
    return this.execute<void>({ method: "DELETE", segments: ["queues", queue], options });
  }
  pauseQueue(queue: string, options?: CallOptions) {
    return this.execute<T.Queue>({ method: "POST", segments: ["queues", queue, "pause"], options });
  }
  resumeQueue(queue: string, options?: CallOptions) {
    return this.execute<T.Queue>({ method: "POST", segments: ["queues", queue, "resume"], options });
  }
  /** Cancels every task not running. */
  purgeQueue(queue: string, options?: CallOptions) {
    return this.execute<T.Purged>({ method: "POST", segments: ["queues", queue, "purge"], options });
  }

  // Tasks --------------------------------------------------------------

  /**
   * `POST /v1/queues/{queue}/tasks` (writer): 201 with the task, or 409
   * TASK_ALREADY_EXISTS when its ID is taken. With `waitMs`, 200 once final
   * or 202 as it is.
   */
  createTask(queue: string, task: T.NewTask, options: CreateTaskOptions = {}) {
    const { waitMs, upload } = options;
    let body: JsonBody | FormBody = json(task);
    if (upload) {
      const taskText = JSON.stringify(task);
      body = {
        kind: "form",
        build: () => {
          const form = new FormData();
          form.append("task", new Blob([taskText], { type: "application/json" }));
          const blob = new Blob([upload.bytes as Uint8Array<ArrayBuffer>], upload.contentType ? { type: upload.contentType } : {});
          form.append("body", blob, upload.fileName ?? "body");
          return form;
        },
      };
    }
    return this.execute<T.Task>({
      method: "POST",
      segments: ["queues", queue, "tasks"],
      query: { wait_ms: waitMs === undefined ? undefined : Math.max(1, Math.round(waitMs)) },
      body,
      extraTimeMs: waitMs ?? 0,
      options,
    });
  }

  /**
   * `POST /v1/queues/{queue}/tasks:batch` (writer): 1–1000 tasks in one
   * commit, answered item by item in request order.
   */
  createTasks(queue: string, tasks: T.NewTask[], options: BatchOptions = {}) {
    const ndjson = options.format === "ndjson";
    return this.execute<T.BatchResults>({
      method: "POST",
      segments: ["queues", queue, "tasks"],
      verb: "batch",
      query: ndjson && options.atomic !== undefined ? { atomic: options.atomic } : {},
      body: ndjson
        ? { kind: "raw", contentType: "application/x-ndjson", bytes: tasks.map((t) => JSON.stringify(t)).join("\n") + "\n" }
        : json({ tasks, ...(options.atomic !== undefined ? { atomic: options.atomic } : {}) }),
      options,
    });
  }

  /** Tasks of a queue, filtered by state, ID prefix and creation time. */
  listTasks(queue: string, filter: T.TaskFilter = {}, options?: CallOptions) {
    return this.execute<T.Page<T.Task>>({ method: "GET", segments: ["queues", queue, "tasks"], query: { ...filter }, options });
  }
  iterateTasks(queue: string, filter: T.TaskFilter = {}) {
    return this.paginate((p) => this.listTasks(queue, { ...filter, ...p }), filter);
  }
  getTask(queue: string, taskId: string, options?: CallOptions) {
    return this.execute<T.Task>({ method: "GET", segments: ["queues", queue, "tasks", taskId], options });
  }
  /** `DELETE …/tasks/{id}`: cancels a task that has not finished (a running attempt is aborted). */
  cancelTask(queue: string, taskId: string, options?: CallOptions) {
    return this.execute<T.Task>({ method: "DELETE", segments: ["queues", queue, "tasks", taskId], options });
  }
  listTaskAttempts(queue: string, taskId: string, page: T.PageOptions = {}, options?: CallOptions) {
    return this.execute<T.Page<T.Attempt>>({ method: "GET", segments: ["queues", queue, "tasks", taskId, "attempts"], query: { ...page }, options });
  }
  iterateTaskAttempts(queue: string, taskId: string, page: T.PageOptions = {}) {
    return this.paginate((p) => this.listTaskAttempts(queue, taskId, p), page);
  }
  /** Dispatches a scheduled or backing-off task now. */
  runTask(queue: string, taskId: string, options?: CallOptions) {
    return this.execute<T.Task>({ method: "POST", segments: ["queues", queue, "tasks", taskId, "run"], options });
  }
  /** Runs a failed or cancelled task again: same ID and run key, a fresh retry budget. */
  redriveTask(queue: string, taskId: string, options?: CallOptions) {
    return this.execute<T.Task>({ method: "POST", segments: ["queues", queue, "tasks", taskId, "redrive"], options });
  }
  /** Runs the queue's matching ended tasks again, in one transaction. */
  redriveTasks(queue: string, filter: T.RedriveFilter = {}, options?: CallOptions) {
    return this.execute<T.Redriven>({ method: "POST", segments: ["queues", queue, "tasks"], verb: "redrive", body: json(filter), options });
  }

  // Pull queues --------------------------------------------------------
  // These routes ignore Idempotency-Key, so none is sent; a retried call
  // that had gone through answers 409 (WORK_ALREADY_CLAIMED, LEASE_LOST) or,
  // for complete and fail, replays.

  /** `POST …/tasks:claim` (writer): leases up to `maxTasks` due tasks, waiting up to `waitMs` for one. */
  claimTasks(queue: string, options: ClaimOptions = {}) {
    const body: T.ClaimRequest = {};
    if (options.maxTasks !== undefined) body.max_tasks = options.maxTasks;
    if (options.waitMs !== undefined) body.wait_ms = options.waitMs;
    if (options.leaseS !== undefined) body.lease_s = options.leaseS;
    if (options.tag !== undefined) body.tag = options.tag;
    return this.execute<T.ClaimedTasks>({
      method: "POST",
      segments: ["queues", queue, "tasks"],
      verb: "claim",
      body: json(body),
      keyed: false,
      extraTimeMs: options.waitMs ?? 0,
      options,
    });
  }
  /** Leases one task; 409 WORK_ALREADY_CLAIMED if it is leased, to the caller too. */
  claimTask(queue: string, taskId: string, leaseS?: number, options?: CallOptions) {
    return this.work<T.Task>(queue, taskId, "claim", leaseS === undefined ? {} : { lease_s: leaseS }, options);
  }
  /** Extends the lease to end `leaseS` from now. */
  heartbeatTask(queue: string, taskId: string, attemptId: string, leaseS?: number, options?: CallOptions) {
    return this.work<T.Task>(queue, taskId, "heartbeat", { attempt_id: attemptId, ...(leaseS === undefined ? {} : { lease_s: leaseS }) }, options);
  }
  /** Ends the leased task `succeeded`, with an optional result. */
  completeTask(queue: string, taskId: string, attemptId: string, result?: unknown, options?: CallOptions) {
    return this.work<T.Task>(queue, taskId, "complete", { attempt_id: attemptId, ...(result === undefined ? {} : { result }) }, options);
  }
  /** Fails the leased attempt; the retry policy queues the task again or fails it. */
  failTask(queue: string, taskId: string, attemptId: string, error: string, options?: CallOptions) {
    return this.work<T.Task>(queue, taskId, "fail", { attempt_id: attemptId, error }, options);
  }
  /** Gives the task back, due now; the attempt does not count. */
  releaseTask(queue: string, taskId: string, attemptId: string, options?: CallOptions) {
    return this.work<T.Task>(queue, taskId, "release", { attempt_id: attemptId }, options);
  }
  /** Hands the lease (same attempt, fresh term) to another principal. */
  reassignTask(queue: string, taskId: string, attemptId: string, principal: string, leaseS?: number, options?: CallOptions) {
    return this.work<T.Task>(queue, taskId, "reassign", { attempt_id: attemptId, principal, ...(leaseS === undefined ? {} : { lease_s: leaseS }) }, options);
  }
  /** (admin) Leases a task nobody holds to `principal`. */
  assignTask(queue: string, taskId: string, principal: string, leaseS?: number, options?: CallOptions) {
    return this.work<T.Task>(queue, taskId, "assign", { principal, ...(leaseS === undefined ? {} : { lease_s: leaseS }) }, options);
  }
  /** `POST …/tasks:end`: completes or fails up to 100 leased attempts, answered end by end. */
  endTasks(queue: string, ends: T.EndTask[], options?: CallOptions) {
    return this.execute<T.EndedTasks>({ method: "POST", segments: ["queues", queue, "tasks"], verb: "end", body: json({ ends }), keyed: false, options });
  }
  private work<V>(queue: string, taskId: string, action: string, body: unknown, options?: CallOptions) {
    return this.execute<V>({ method: "POST", segments: ["queues", queue, "tasks", taskId, action], body: json(body), keyed: false, options });
  }

  // Jobs ---------------------------------------------------------------

  createJob(job: T.NewJob, options?: CallOptions) {
    return this.execute<T.Job>({ method: "POST", segments: ["jobs"], body: json(job), options });
  }
  listJobs(page: T.PageOptions = {}, options?: CallOptions) {
    return this.execute<T.Page<T.Job>>({ method: "GET", segments: ["jobs"], query: { ...page }, options });
  }
  iterateJobs(page: T.PageOptions = {}) {
    return this.paginate((p) => this.listJobs(p), page);
  }
  getJob(job: string, options?: CallOptions) {
    return this.execute<T.Job>({ method: "GET", segments: ["jobs", job], options });
  }
  /** `PATCH /v1/jobs/{job}`; `expected_updated_at` guards against lost updates (409 STALE_VERSION). */
  updateJob(job: string, patch: T.JobPatch, options?: CallOptions) {
    return this.execute<T.Job>({ method: "PATCH", segments: ["jobs", job], body: json(patch), options });
  }
  deleteJob(job: string, options?: CallOptions) {
    return this.execute<void>({ method: "DELETE", segments: ["jobs", job], options });
  }
  pauseJob(job: string, options?: CallOptions) {
    return this.execute<T.Job>({ method: "POST", segments: ["jobs", job, "pause"], options });
  }
  resumeJob(job: string, options?: CallOptions) {
    return this.execute<T.Job>({ method: "POST", segments: ["jobs", job, "resume"], options });
  }
  /** Starts a manual run now. */
  runJob(job: string, options?: CallOptions) {
    return this.execute<T.Run>({ method: "POST", segments: ["jobs", job, "run"], options });
  }
  listJobRuns(job: string, page: T.PageOptions = {}, options?: CallOptions) {
    return this.execute<T.Page<T.Run>>({ method: "GET", segments: ["jobs", job, "runs"], query: { ...page }, options });
  }
  iterateJobRuns(job: string, page: T.PageOptions = {}) {
    return this.paginate((p) => this.listJobRuns(job, p), page);
  }
  getJobRun(job: string, runId: string, options?: CallOptions) {
    return this.execute<T.Run>({ method: "GET", segments: ["jobs", job, "runs", runId], options });
  }
  /** A run's attempts, oldest first: each with its duration and, when the target refused it, the start of its answer (`response`). */
  listJobRunAttempts(job: string, runId: string, page: T.PageOptions = {}, options?: CallOptions) {
    return this.execute<T.Page<T.Attempt>>({ method: "GET", segments: ["jobs", job, "runs", runId, "attempts"], query: { ...page }, options });
  }
  iterateJobRunAttempts(job: string, runId: string, page: T.PageOptions = {}) {
    return this.paginate((p) => this.listJobRunAttempts(job, runId, p), page);
  }
  /** The next instants a schedule fires at, computed as the scheduler would. */
  previewSchedule(request: T.SchedulePreviewRequest, options?: CallOptions) {
    return this.execute<T.SchedulePreview>({ method: "POST", segments: ["schedules", "preview"], body: json(request), keyed: false, options });
  }

  // Tenancy ------------------------------------------------------------

  createPrincipal(principal: T.NewPrincipal, options?: CallOptions) {
    return this.execute<T.Principal>({ method: "POST", segments: ["principals"], body: json(principal), options });
  }
  listPrincipals(page: T.PageOptions = {}, options?: CallOptions) {
    return this.execute<T.Page<T.Principal>>({ method: "GET", segments: ["principals"], query: { ...page }, options });
  }
  iteratePrincipals(page: T.PageOptions = {}) {
    return this.paginate((p) => this.listPrincipals(p), page);
  }
  /** Changes a principal's role (a person's operation). */
  updatePrincipal(name: string, patch: T.PrincipalPatch, options?: CallOptions) {
    return this.execute<T.Principal>({ method: "PATCH", segments: ["principals", name], body: json(patch), options });
  }
  /** A new API key, shown once (and again only by a replay of this call's key). */
  createApiKey(principal: string, options?: CallOptions) {
    return this.execute<T.NewApiKey>({ method: "POST", segments: ["principals", principal, "keys"], options });
  }
  listApiKeys(principal: string, page: T.PageOptions = {}, options?: CallOptions) {
    return this.execute<T.Page<T.ApiKey>>({ method: "GET", segments: ["principals", principal, "keys"], query: { ...page }, options });
  }
  iterateApiKeys(principal: string, page: T.PageOptions = {}) {
    return this.paginate((p) => this.listApiKeys(principal, p), page);
  }
  getApiKey(principal: string, id: string, options?: CallOptions) {
    return this.execute<T.ApiKey>({ method: "GET", segments: ["principals", principal, "keys", id], options });
  }
  revokeApiKey(principal: string, id: string, options?: CallOptions) {
    return this.execute<void>({ method: "DELETE", segments: ["principals", principal, "keys", id], options });
  }
  /** (admins of `default`, a person) A new organization and its first admin key. */
  createOrganization(name: string, options?: CallOptions) {
    return this.execute<T.Organization>({ method: "POST", segments: ["organizations"], body: json({ name }), options });
  }
  listSigningSecrets(options?: CallOptions) {
    return this.execute<T.SigningSecrets>({ method: "GET", segments: ["signing-secrets"], options });
  }
  /** Adds a signing secret; the old ones stay valid until deleted. */
  rotateSigningSecret(options?: CallOptions) {
    return this.execute<T.SigningSecret>({ method: "POST", segments: ["signing-secrets", "rotate"], options });
  }
  getSigningSecret(id: string, options?: CallOptions) {
    return this.execute<T.SigningSecret>({ method: "GET", segments: ["signing-secrets", id], options });
  }
  deleteSigningSecret(id: string, options?: CallOptions) {
    return this.execute<void>({ method: "DELETE", segments: ["signing-secrets", id], options });
  }

  // Event webhooks -----------------------------------------------------

  createWebhook(webhook: T.NewWebhook, options?: CallOptions) {
    return this.execute<T.Webhook>({ method: "POST", segments: ["webhooks"], body: json(webhook), options });
  }
  listWebhooks(page: T.PageOptions = {}, options?: CallOptions) {
    return this.execute<T.Page<T.Webhook>>({ method: "GET", segments: ["webhooks"], query: { ...page }, options });
  }
  iterateWebhooks(page: T.PageOptions = {}) {
    return this.paginate((p) => this.listWebhooks(p), page);
  }
  getWebhook(id: string, options?: CallOptions) {
    return this.execute<T.Webhook>({ method: "GET", segments: ["webhooks", id], options });
  }
  deleteWebhook(id: string, options?: CallOptions) {
    return this.execute<void>({ method: "DELETE", segments: ["webhooks", id], options });
  }

  /** The caller's own record of an Idempotency-Key. */
  getIdempotencyKey(key: string, options?: CallOptions) {
    return this.execute<T.IdempotencyKeyRecord>({ method: "GET", segments: ["idempotency-keys", key], options });
  }
}

export { ProblemError };
