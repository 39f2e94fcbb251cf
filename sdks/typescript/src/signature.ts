// Verifying Idem's deliveries: the Standard Webhooks signature
// (`Webhook-Id`, `Webhook-Timestamp`, `Webhook-Signature`, checked with the
// `standardwebhooks` library's own signing) and `Idem-Target-Signature`,
// which binds the method, path, query and body, so a captured delivery
// cannot be re-sent to another route of the receiver. The checks and their
// order are idem-guard's (crates/guard/src/signature.rs): the head first
// (headers present once, timestamp within tolerance, a bounded signature
// list), then the body, then the target.

import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { type HeaderInput, headerMap } from "./runkey.js";

/** How far a timestamp may be from now, either way: 5 minutes, as Idem's guard. */
export const DEFAULT_TOLERANCE_S = 5 * 60;
/** The longest signature list read, and the most entries: a sender holds one secret per rotation step. */
export const MAX_SIGNATURE_LIST_BYTES = 4096;
export const MAX_SIGNATURES = 32;

export type SignatureErrorKind =
  | "missing_header"
  | "repeated_header"
  | "invalid_timestamp"
  | "stale"
  | "too_many_signatures"
  | "no_match"
  | "target_mismatch"
  | "invalid_secret";

/** A delivery whose signature was refused: answer 401. */
export class SignatureError extends Error {
  override name = "SignatureError";
  constructor(
    readonly kind: SignatureErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** A delivery as received. */
export interface Delivery {
  /** The request method, as the request line carries it. */
  method: string;
  /** Path and query as the request line carries them (`/hooks/pay?x=1`). */
  pathAndQuery: string;
  headers: HeaderInput;
  /** The raw body, exactly as received. */
  body: Uint8Array | string;
}

export interface VerifyOptions {
  /** Unix seconds; the clock by default. */
  nowS?: number;
  toleranceS?: number;
  /** Refuse a delivery without `Idem-Target-Signature` (off for receivers behind something that rewrites paths). */
  requireTargetSignature?: boolean;
}

/** What a verified delivery says. */
export interface VerifiedDelivery {
  /** The signed `webhook-id`: for Idem, the run key. */
  webhookId: string;
  timestamp: number;
  /** Whether an `Idem-Target-Signature` was present and verified. */
  targetSigned: boolean;
}

function keyOf(secret: string): Buffer {
  const text = secret.trim();
  if (!text.startsWith("whsec_")) throw new SignatureError("invalid_secret", "a signing secret starts with whsec_");
  const encoded = text.slice("whsec_".length);
  const key = Buffer.from(encoded, "base64");
  if (key.length === 0 || key.toString("base64").replace(/=+$/, "") !== encoded.replace(/=+$/, "")) {
    throw new SignatureError("invalid_secret", "the part after whsec_ is not valid base64");
  }
  return key;
}

function single(headers: Map<string, string[]>, name: string): string {
  const values = headers.get(name) ?? [];
  if (values.length === 0) throw new SignatureError("missing_header", `missing ${name} header`);
  if (values.length > 1) throw new SignatureError("repeated_header", `${name} header is sent more than once`);
  const value = values[0]!.trim();
  if (value === "" || !/^[\x20-\x7e]*$/.test(value)) throw new SignatureError("missing_header", `missing ${name} header`);
  return value;
}

/** The `v1,` tags of a signature list within its bounds; others are skipped. */
function candidates(list: string): Buffer[] {
  const entries = list.split(/[ \t\n\f\r]+/).filter(Boolean);
  if (Buffer.byteLength(list) > MAX_SIGNATURE_LIST_BYTES || entries.length > MAX_SIGNATURES) {
    throw new SignatureError("too_many_signatures", "Webhook-Signature is too long");
  }
  return entries.filter((e) => e.startsWith("v1,")).map((e) => Buffer.from(e.slice(3), "base64")).filter((t) => t.length === 32);
}

const bytesOf = (body: Uint8Array | string) => (typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength));

/**
 * Verifies a delivery's Standard Webhooks signature against any of
 * `secrets` (`whsec_…`, several during a rotation) and, when present (or
 * required), its `Idem-Target-Signature`. Throws {@link SignatureError}.
 */
export function verifyDelivery(secrets: readonly string[], delivery: Delivery, options: VerifyOptions = {}): VerifiedDelivery {
  const headers = headerMap(delivery.headers);
  const id = single(headers, "webhook-id");
  const timestampText = single(headers, "webhook-timestamp");
  const signatures = single(headers, "webhook-signature");
  if (!/^[+-]?\d{1,18}$/.test(timestampText)) throw new SignatureError("invalid_timestamp", "Webhook-Timestamp is not Unix seconds");
  const timestamp = Number(timestampText);
  const now = options.nowS ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceS ?? DEFAULT_TOLERANCE_S)) {
    throw new SignatureError("stale", "Webhook-Timestamp is outside the tolerated window");
  }
  const tags = candidates(signatures);
  const body = bytesOf(delivery.body);
  let matched = false;
  for (const secret of secrets) {
    keyOf(secret);
    // The library's own signing: the one the Standard Webhooks scheme defines.
    const expected = Buffer.from(new Webhook(secret.trim()).sign(id, new Date(timestamp * 1000), body).slice(3), "base64");
    if (tags.some((tag) => timingSafeEqual(tag, expected))) {
      matched = true;
      break;
    }
  }
  if (!matched) throw new SignatureError("no_match", "no valid signature");

  const targetValues = headers.get("idem-target-signature") ?? [];
  if (targetValues.length === 0) {
    if (options.requireTargetSignature) throw new SignatureError("missing_header", "missing idem-target-signature header");
    return { webhookId: id, timestamp, targetSigned: false };
  }
  const targetList = single(headers, "idem-target-signature");
  const targetTags = candidates(targetList);
  for (const secret of secrets) {
    const expected = targetTag(keyOf(secret), id, timestampText, delivery.method, delivery.pathAndQuery, body);
    if (targetTags.some((tag) => timingSafeEqual(tag, expected))) return { webhookId: id, timestamp, targetSigned: true };
  }
  throw new SignatureError("target_mismatch", "Idem-Target-Signature does not match this request's method, path and query");
}

function targetTag(key: Buffer, id: string, timestamp: string, method: string, pathAndQuery: string, body: Buffer): Buffer {
  const mac = createHmac("sha256", key);
  for (const part of [id, timestamp, method, pathAndQuery]) mac.update(part).update(".");
  mac.update(createHash("sha256").update(body).digest("hex"));
  return mac.digest();
}

/**
 * The headers Idem would sign a delivery with (Standard Webhooks and target
 * signature): for testing a receiver without a server.
 */
export function signDelivery(
  secrets: readonly string[],
  delivery: Omit<Delivery, "headers"> & { webhookId: string; timestamp?: number },
): Record<string, string> {
  const timestamp = delivery.timestamp ?? Math.floor(Date.now() / 1000);
  const body = bytesOf(delivery.body);
  return {
    "webhook-id": delivery.webhookId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": secrets.map((s) => new Webhook(s.trim()).sign(delivery.webhookId, new Date(timestamp * 1000), body)).join(" "),
    "idem-target-signature": secrets
      .map((s) => `v1,${targetTag(keyOf(s), delivery.webhookId, String(timestamp), delivery.method, delivery.pathAndQuery, body).toString("base64")}`)
      .join(" "),
  };
}
