// Run keys: the identity of one logical delivery, the same on every retry.
//
// The encoding is idem-guard's byte for byte (crates/guard/src/key.rs), so
// that a Rust, a TypeScript and a Python guard sharing one store agree on
// which deliveries are the same run. The shared vectors in
// crates/guard/testdata/run-keys.json pin it.

import { createHash } from "node:crypto";

/** Bumped whenever the encoding changes, so keys of two encodings never collide. */
const KEY_DOMAIN = Buffer.from("idem-guard/run-key/v1");

/** Where the identity of a delivery comes from. */
export type IdentitySource =
  | "idempotency-key"
  | "cloud-scheduler"
  | "cloud-tasks"
  | { header: string }
  | { custom: string; extract: (request: RequestHead) => string | undefined | null };

/** Extra context joined into the key: job names repeat across projects. */
export type Scope = { header: string } | { path_segment: number } | { query: string };

/** How run keys are derived: sources tried in order, then every scope. */
export interface KeyConfig {
  sources?: IdentitySource[];
  scopes?: Scope[];
}

export const DEFAULT_SOURCES: IdentitySource[] = ["idempotency-key", "cloud-scheduler", "cloud-tasks"];

/**
 * Header input: ordered pairs (repeats kept), a `Headers`, or a plain object
 * whose array values are repeats. Node's `req.headers` joins repeats of most
 * headers with commas; pass `rawHeaders` pairs where repeats matter.
 */
export type HeaderInput =
  | Iterable<readonly [string, string]>
  | Record<string, string | string[] | undefined>;

/** What a run key is derived from. */
export interface RequestHead {
  /** Path and query as received (`/projects/acme/run?tenant=t1`). */
  uri: string;
  headers: HeaderInput;
  /** The `webhook-id` of a message whose signature was verified. */
  signedWebhookId?: string;
}

export type KeyErrorKind =
  | "missing_identity"
  | "repeated_header"
  | "missing_scope"
  | "invalid_schedule_time"
  | "repeated_query_parameter";

/** No run key could be derived: the guard answers 400 and the handler does not run. */
export class KeyError extends Error {
  override name = "KeyError";
  constructor(
    readonly kind: KeyErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** Lowercased header names to their values, in order. */
export function headerMap(input: HeaderInput): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    const list = out.get(key);
    if (list) list.push(value);
    else out.set(key, [value]);
  };
  if (typeof (input as Iterable<unknown>)[Symbol.iterator] === "function") {
    for (const [name, value] of input as Iterable<readonly [string, string]>) add(name, value);
  } else {
    for (const [name, value] of Object.entries(input as Record<string, string | string[] | undefined>)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) add(name, v);
    }
  }
  return out;
}

/** Node's `rawHeaders` (name, value, name, value, …) as pairs. */
export function rawHeaderPairs(raw: readonly string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
  return pairs;
}

/** Hashes ordered parts, each length-prefixed, so `["ab","c"]` ≠ `["a","bc"]`. */
export function runKeyFromParts(parts: ReadonlyArray<string | Uint8Array>): string {
  const hash = createHash("sha256");
  const len = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(n));
    return b;
  };
  hash.update(len(KEY_DOMAIN.length));
  hash.update(KEY_DOMAIN);
  hash.update(len(parts.length));
  for (const part of parts) {
    const bytes = typeof part === "string" ? Buffer.from(part, "utf8") : part;
    hash.update(len(bytes.length));
    hash.update(bytes);
  }
  return hash.digest("hex");
}

/**
 * The key of a message whose signature (or Idem ID token) was verified: its
 * signed ID alone, encoded as the unscoped `Idempotency-Key` source is, since
 * Idem sends its run key as both. Nothing unsigned can give it a second run.
 */
export function runKeyOfSignedMessage(webhookId: string): string {
  return runKeyFromParts(["idempotency-key", webhookId]);
}

/** Whether `key` is 64 lowercase hex characters, as run keys are. */
export function isRunKey(key: string): boolean {
  return /^[0-9a-f]{64}$/.test(key);
}

const ASCII_WS = /^[ \t\n\f\r]+|[ \t\n\f\r]+$/g;

function singleHeader(headers: Map<string, string[]>, name: string): string | undefined {
  const values = headers.get(name.toLowerCase());
  if (!values || values.length === 0) return undefined;
  if (values.length > 1) {
    throw new KeyError("repeated_header", `header ${name.toLowerCase()} is sent more than once`);
  }
  const trimmed = values[0]!.replace(ASCII_WS, "");
  return trimmed === "" ? undefined : trimmed;
}

function describe(source: IdentitySource): string {
  if (source === "idempotency-key") return "Idempotency-Key";
  if (source === "cloud-scheduler") return "X-CloudScheduler-JobName with X-CloudScheduler-ScheduleTime";
  if (source === "cloud-tasks") return "X-CloudTasks-QueueName with X-CloudTasks-TaskName";
  if ("header" in source) return `header ${source.header.toLowerCase()}`;
  return `custom identity ${JSON.stringify(source.custom)}`;
}

function extract(source: IdentitySource, head: RequestHead, headers: Map<string, string[]>): Array<string | Uint8Array> | undefined {
  if (source === "idempotency-key") {
    const key = singleHeader(headers, "idempotency-key");
    return key === undefined ? undefined : ["idempotency-key", key];
  }
  if (source === "cloud-scheduler") {
    const job = singleHeader(headers, "x-cloudscheduler-jobname");
    const at = singleHeader(headers, "x-cloudscheduler-scheduletime");
    if (job === undefined || at === undefined) return undefined;
    return ["cloud-scheduler", job, scheduleInstant(at)];
  }
  if (source === "cloud-tasks") {
    const queue = singleHeader(headers, "x-cloudtasks-queuename");
    const task = singleHeader(headers, "x-cloudtasks-taskname");
    if (queue === undefined || task === undefined) return undefined;
    return ["cloud-tasks", queue, task];
  }
  if ("header" in source) {
    const name = source.header.toLowerCase();
    const value = singleHeader(headers, name);
    return value === undefined ? undefined : [`header:${name}`, value];
  }
  const value = source.extract(head);
  return value ? [`custom:${source.custom}`, value] : undefined;
}

function scopeLabel(scope: Scope): string {
  if ("header" in scope) return `header:${scope.header.toLowerCase()}`;
  if ("path_segment" in scope) return `path:${scope.path_segment}`;
  return `query:${scope.query}`;
}

function scopeValue(scope: Scope, head: RequestHead, headers: Map<string, string[]>): string | Uint8Array {
  let value: string | Uint8Array | undefined;
  const [pathPart, queryPart = ""] = splitUri(head.uri);
  if ("header" in scope) {
    value = singleHeader(headers, scope.header);
  } else if ("path_segment" in scope) {
    const segment = pathPart.split("/").slice(1)[scope.path_segment];
    value = segment ? segment : undefined;
  } else {
    const wanted = Buffer.from(scope.query, "utf8");
    let found: Buffer | undefined;
    for (const pair of queryPart.split("&")) {
      const eq = pair.indexOf("=");
      const [k, v] = eq < 0 ? [pair, ""] : [pair.slice(0, eq), pair.slice(eq + 1)];
      if (percentDecode(k).equals(wanted)) {
        if (found) {
          throw new KeyError("repeated_query_parameter", `query parameter ${JSON.stringify(scope.query)} is sent more than once`);
        }
        found = percentDecode(v);
      }
    }
    value = found && found.length > 0 ? found : undefined;
  }
  if (value === undefined) {
    throw new KeyError("missing_scope", `scope ${scopeLabel(scope)} is missing from the request`);
  }
  return value;
}

function splitUri(uri: string): [string, string | undefined] {
  const noFragment = uri.split("#", 1)[0]!;
  const q = noFragment.indexOf("?");
  return q < 0 ? [noFragment, undefined] : [noFragment.slice(0, q), noFragment.slice(q + 1)];
}

/** `%XX` escapes and `+` as space, so equivalent spellings give one scope. */
function percentDecode(s: string): Buffer {
  const bytes = Buffer.from(s, "utf8");
  const out: number[] = [];
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    if (b === 0x25) {
      const hex = bytes.subarray(i + 1, i + 3).toString("latin1");
      if (/^[0-9a-fA-F]{2}$/.test(hex)) {
        out.push(parseInt(hex, 16));
        i += 3;
        continue;
      }
      out.push(b);
      i += 1;
    } else if (b === 0x2b) {
      out.push(0x20);
      i += 1;
    } else {
      out.push(b);
      i += 1;
    }
  }
  return Buffer.from(out);
}

/** Derives the run key of a request, or throws a {@link KeyError}. */
export function deriveRunKey(head: RequestHead, config: KeyConfig = {}): string {
  if (head.signedWebhookId !== undefined) return runKeyOfSignedMessage(head.signedWebhookId);
  const headers = headerMap(head.headers);
  const sources = config.sources ?? DEFAULT_SOURCES;
  let parts: Array<string | Uint8Array> | undefined;
  for (const source of sources) {
    parts = extract(source, head, headers);
    if (parts) break;
  }
  if (!parts) {
    throw new KeyError("missing_identity", `no run identity: expected ${sources.map(describe).join(", or ")}`);
  }
  for (const scope of config.scopes ?? []) {
    parts.push(scopeLabel(scope));
    parts.push(scopeValue(scope, head, headers));
  }
  return runKeyFromParts(parts);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * An `X-CloudScheduler-ScheduleTime` as the instant it names, written as UTC
 * RFC 3339 with the fewest fractional digits: spellings of one instant (an
 * offset instead of `Z`, fractional zeros) are one run, and the usual
 * `…T12:00:00Z` stays as it came.
 */
export function scheduleInstant(text: string): string {
  const invalid = () =>
    new KeyError("invalid_schedule_time", `X-CloudScheduler-ScheduleTime ${JSON.stringify(text)} is not an RFC 3339 instant`);
  const m =
    /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2})(?::?(\d{2}))?)?)$/.exec(text);
  if (!m) throw invalid();
  const [, ys, mos, ds, hs, mis, ss = "0", frac = "", z, sign, ohs, oms = "0", oss = "0"] = m;
  const year = Number(ys), month = Number(mos), day = Number(ds);
  const hour = Number(hs), minute = Number(mis);
  let second = Number(ss);
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const dim = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  if (month < 1 || month > 12 || dim === undefined || day < 1 || day > dim) throw invalid();
  if (hour > 23 || minute > 59 || second > 60) throw invalid();
  // A leap second is clamped, as the Rust guard's parser does.
  if (second === 60) second = 59;
  let offsetS = 0;
  if (!z) {
    const oh = Number(ohs), om = Number(oms), os = Number(oss);
    if (oh > 23 || om > 59 || os > 59) throw invalid();
    offsetS = (sign === "-" ? -1 : 1) * (oh * 3600 + om * 60 + os);
  }
  const epochS = Date.UTC(year, month - 1, day, hour, minute, second) / 1000 - offsetS;
  const d = new Date(epochS * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  const nanos = frac.padEnd(9, "0").replace(/0+$/, "");
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}` +
    (nanos ? `.${nanos}` : "") +
    "Z"
  );
}
