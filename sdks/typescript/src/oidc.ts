// OIDC ID tokens from senders (Idem's own, minted per delivery attempt and
// naming their run in `idem_run`; Google's for Cloud Scheduler and Cloud
// Tasks; any OpenID Provider's), checked with Node's crypto as idem-guard
// checks them (crates/guard/src/oidc.rs): RS256 or ES256 by the key the `kid`
// names (the key decides the algorithm; `none` and HMAC are refused), `iss`,
// an allowed `aud`, `exp` and `nbf` within a leeway, and optionally allowed
// subjects or emails. The issuer's discovery document names its JWKS; both
// are fetched when first needed and cached.

import { createHash, createPublicKey, verify as verifySignature, type KeyObject } from "node:crypto";
import { type HeaderInput, headerMap } from "./runkey.js";

export const DEFAULT_LEEWAY_S = 30;
/** Least time between two fetches of the keys for an unknown `kid`, so made-up key IDs cannot make a fetching loop. */
export const DEFAULT_REFETCH_INTERVAL_MS = 30_000;
/** Cached keys older than this are fetched again before use, so a withdrawn key stops being accepted. */
const MAX_KEY_AGE_MS = 60 * 60 * 1000;

export type OidcErrorKind = "missing" | "malformed" | "unknown_key" | "invalid" | "not_allowed" | "unavailable";

/** A refused token: 401, or 503 (`unavailable`) when the issuer's keys could not be fetched. */
export class OidcError extends Error {
  override name = "OidcError";
  constructor(
    readonly kind: OidcErrorKind,
    message: string,
  ) {
    super(message);
  }
  get status(): 401 | 503 {
    return this.kind === "unavailable" ? 503 : 401;
  }
}

/** What a verified token says of its sender. */
export interface VerifiedToken {
  subject: string | undefined;
  email: string | undefined;
  /** Idem's tokens: the run key of the delivery they were minted for. */
  idemRun: string | undefined;
  /** `exp`, Unix seconds. */
  expiresAt: number;
  /** Lowercase hex SHA-256 of the signed part (header and claims), for binding a token to the one run it opened. */
  digest: string;
  claims: Record<string, unknown>;
}

export interface OidcVerifierOptions {
  /** The issuer exactly as the tokens' `iss` has it (Idem's `--public-url`). */
  issuer: string;
  /** Accepted `aud` values; any one matches. */
  audiences: string[];
  /** Only these `sub` values (Idem's are `org/<organization>`), or an email below. */
  subjects?: string[];
  /** Only these verified emails, or a subject above. */
  emails?: string[];
  leewayS?: number;
  refetchIntervalMs?: number;
  fetch?: typeof fetch;
}

interface Key {
  key: KeyObject;
  alg: "RS256" | "ES256";
}

const b64url = (s: string) => Buffer.from(s, "base64url");

const unknownKey = (kid: string) => new OidcError("unknown_key", `no key of the issuer has ID ${JSON.stringify(kid)}`);

/** The key's algorithm: the one its JWK names, or ES256 for a P-256 key and RS256 for an RSA key. */
function algorithmOf(jwk: Record<string, unknown>): "RS256" | "ES256" | undefined {
  const byType = jwk["kty"] === "EC" && jwk["crv"] === "P-256" ? "ES256" : jwk["kty"] === "RSA" ? "RS256" : undefined;
  if (!byType) return undefined;
  const named = jwk["alg"];
  if (named === undefined) return byType;
  return named === byType ? byType : undefined;
}

export class OidcVerifier {
  private keys = new Map<string, Key>();
  private fetchedAt: number | undefined;
  private fetching: Promise<void> | undefined;
  private readonly options: Required<Omit<OidcVerifierOptions, "fetch">>;
  private readonly fetchImpl: typeof fetch;

  constructor(options: OidcVerifierOptions) {
    this.options = {
      issuer: options.issuer,
      audiences: options.audiences,
      subjects: options.subjects ?? [],
      emails: options.emails ?? [],
      leewayS: options.leewayS ?? DEFAULT_LEEWAY_S,
      refetchIntervalMs: options.refetchIntervalMs ?? DEFAULT_REFETCH_INTERVAL_MS,
    };
    this.fetchImpl = options.fetch ?? globalThis.fetch;
  }

  get leewayS(): number {
    return this.options.leewayS;
  }

  /** Checks the `Authorization: Bearer …` token of a request's headers. */
  async verifyHeaders(headers: HeaderInput): Promise<VerifiedToken> {
    const value = headerMap(headers).get("authorization")?.[0];
    const space = value?.indexOf(" ") ?? -1;
    const token = value && space > 0 && value.slice(0, space).toLowerCase() === "bearer" ? value.slice(space + 1).trim() : "";
    if (!token) throw new OidcError("missing", "send Authorization: Bearer <OIDC ID token>");
    return this.verify(token);
  }

  /** Checks one token. */
  async verify(token: string, nowS = Date.now() / 1000): Promise<VerifiedToken> {
    const parts = token.split(".");
    if (parts.length !== 3) throw new OidcError("malformed", "the bearer token is not a usable ID token: not a JWT");
    let header: Record<string, unknown>;
    let claims: Record<string, unknown>;
    try {
      header = JSON.parse(b64url(parts[0]!).toString("utf8"));
      claims = JSON.parse(b64url(parts[1]!).toString("utf8"));
    } catch {
      throw new OidcError("malformed", "the bearer token is not a usable ID token: its parts are not JSON");
    }
    if (header["alg"] !== "RS256" && header["alg"] !== "ES256") {
      throw new OidcError("malformed", `the bearer token is not a usable ID token: algorithm ${JSON.stringify(header["alg"])} is not RS256 or ES256`);
    }
    const kid = header["kid"];
    if (typeof kid !== "string") throw new OidcError("malformed", "the bearer token is not a usable ID token: the token names no key (kid)");
    const key = await this.key(kid);
    // The key's algorithm, not the token's: a token cannot choose how it is checked.
    if (header["alg"] !== key.alg) throw new OidcError("invalid", `the ID token is invalid: signed ${String(header["alg"])}, its key is ${key.alg}`);
    const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
    const signature = b64url(parts[2]!);
    const ok =
      key.alg === "ES256"
        ? verifySignature("sha256", signed, { key: key.key, dsaEncoding: "ieee-p1363" }, signature)
        : verifySignature("sha256", signed, key.key, signature);
    if (!ok) throw new OidcError("invalid", "the ID token is invalid: InvalidSignature");
    const o = this.options;
    const exp = claims["exp"];
    if (typeof exp !== "number") throw new OidcError("invalid", "the ID token is invalid: missing exp");
    if (exp + o.leewayS < nowS) throw new OidcError("invalid", "the ID token is invalid: ExpiredSignature");
    const nbf = claims["nbf"];
    if (typeof nbf === "number" && nbf - o.leewayS > nowS) throw new OidcError("invalid", "the ID token is invalid: ImmatureSignature");
    if (claims["iss"] !== o.issuer) throw new OidcError("invalid", "the ID token is invalid: InvalidIssuer");
    const aud = claims["aud"];
    const auds = Array.isArray(aud) ? aud : aud === undefined ? [] : [aud];
    if (!auds.some((a) => o.audiences.includes(a as string))) throw new OidcError("invalid", "the ID token is invalid: InvalidAudience");
    const sub = typeof claims["sub"] === "string" ? (claims["sub"] as string) : undefined;
    const email = typeof claims["email"] === "string" ? (claims["email"] as string) : undefined;
    const allowed =
      (o.subjects.length === 0 && o.emails.length === 0) ||
      (sub !== undefined && o.subjects.includes(sub)) ||
      (claims["email_verified"] !== false && email !== undefined && o.emails.some((e) => e.toLowerCase() === email.toLowerCase()));
    if (!allowed) throw new OidcError("not_allowed", "the ID token's subject is not allowed here");
    const idemRun = claims["idem_run"];
    if (idemRun !== undefined && typeof idemRun !== "string") throw new OidcError("invalid", "the ID token is invalid: idem_run is not a string");
    if (idemRun === "") throw new OidcError("invalid", "the ID token is invalid: idem_run is empty");
    return {
      subject: sub,
      email,
      idemRun,
      expiresAt: exp,
      digest: createHash("sha256").update(signed).digest("hex"),
      claims,
    };
  }

  private async key(kid: string): Promise<Key> {
    const fresh = this.fetchedAt !== undefined && Date.now() - this.fetchedAt < MAX_KEY_AGE_MS;
    const known = this.keys.get(kid);
    if (known && fresh) return known;
    // One fetch at a time; a request that waited on it looks again first.
    while (this.fetching) await this.fetching.catch(() => {});
    if (this.fetchedAt !== undefined && Date.now() - this.fetchedAt < this.options.refetchIntervalMs) {
      const found = this.keys.get(kid);
      if (found) return found;
      throw unknownKey(kid);
    }
    this.fetching = this.fetchKeys();
    try {
      await this.fetching;
    } catch (error) {
      // Keys fetched before still hold while the issuer is away.
      if (known) return known;
      throw error;
    } finally {
      this.fetching = undefined;
    }
    const found = this.keys.get(kid);
    if (!found) throw unknownKey(kid);
    return found;
  }

  private async getJson(url: string): Promise<any> {
    try {
      const r = await this.fetchImpl(url, { signal: AbortSignal.timeout(10_000) });
      if (!r.ok) throw new Error(`answered ${r.status}`);
      return await r.json();
    } catch (error) {
      throw new OidcError("unavailable", `the issuer's keys could not be fetched: ${url}: ${(error as Error).message}`);
    }
  }

  private async fetchKeys(): Promise<void> {
    const issuer = this.options.issuer;
    const discovery = await this.getJson(`${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`);
    // OpenID Connect Discovery 1.0 §4.3: the document must name the issuer it was fetched for.
    if (discovery?.issuer !== issuer) {
      throw new OidcError("unavailable", `the discovery document names issuer ${JSON.stringify(discovery?.issuer)}, not ${JSON.stringify(issuer)}`);
    }
    const set = await this.getJson(discovery.jwks_uri);
    const keys = new Map<string, Key>();
    // A key of a type or algorithm this verifier does not use is skipped, not a reason to refuse the others.
    for (const jwk of Array.isArray(set?.keys) ? set.keys : []) {
      const alg = algorithmOf(jwk);
      if (typeof jwk?.kid !== "string" || !alg) continue;
      try {
        keys.set(jwk.kid, { key: createPublicKey({ key: jwk, format: "jwk" }), alg });
      } catch {
        continue;
      }
    }
    this.keys = keys;
    this.fetchedAt = Date.now();
  }
}
