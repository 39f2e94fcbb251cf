"""Verifying Idem's OIDC ID tokens (``Authorization: Bearer <JWT>`` on a
delivery whose target asked for ``oidc``), or any OpenID Provider's.

The token must be signed RS256 or ES256 by the issuer key its ``kid`` names
(the key decides the algorithm: ``none`` and HMAC are refused), carry the
issuer as ``iss`` and one of the audiences as ``aud``, and have ``exp`` in
the future and any ``nbf`` in the past, within a leeway. The issuer's
discovery document (``<issuer>/.well-known/openid-configuration``, which
must name the same issuer) gives its JWKS (Idem's is
``/.well-known/jwks.json``); both are fetched when first needed and cached,
fetched again for an unknown ``kid`` (a rotation) at most every 30 s, and
after an hour. Idem's tokens name their run in ``idem_run``.

Needs the ``oidc`` extra (``cryptography``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import httpx

__all__ = ["OidcError", "OidcVerifier", "VerifiedToken", "bearer"]

DEFAULT_LEEWAY = 30.0
REFETCH_INTERVAL = 30.0
MAX_KEY_AGE = 3600.0


class OidcError(ValueError):
    """The token is missing, malformed, expired, for another audience or
    issuer, badly signed or not allowed: answer 401."""


class OidcUnavailable(OidcError):
    """The issuer's keys could not be fetched (and none are cached): answer
    503, so that the sender retries."""


@dataclass(frozen=True)
class VerifiedToken:
    subject: str | None
    email: str | None
    # The run key of the delivery an Idem token was minted for.
    idem_run: str | None
    expires_at: int
    audience: Any
    # SHA-256 of the signed part: what binds a token without idem_run to
    # the first run it opened.
    digest: str
    claims: Mapping[str, Any]


def bearer(headers: Mapping[str, str] | Sequence[tuple[str, str]]) -> str | None:
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    for k, v in pairs:
        if k.lower() == "authorization":
            scheme, _, token = v.strip().partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def _required_bearer(headers: Mapping[str, str] | Sequence[tuple[str, str]]) -> str:
    token = bearer(headers)
    if token is None:
        raise OidcError("send Authorization: Bearer <OIDC ID token>")
    return token


def _b64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _public_key(jwk: Mapping[str, Any]) -> tuple[Any, str] | None:
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    kty = jwk.get("kty")
    if kty == "RSA" and jwk.get("alg", "RS256") == "RS256":
        n = int.from_bytes(_b64(jwk["n"]), "big")
        e = int.from_bytes(_b64(jwk["e"]), "big")
        return rsa.RSAPublicNumbers(e, n).public_key(), "RS256"
    if kty == "EC" and jwk.get("crv") == "P-256" and jwk.get("alg", "ES256") == "ES256":
        x = int.from_bytes(_b64(jwk["x"]), "big")
        y = int.from_bytes(_b64(jwk["y"]), "big")
        return ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key(), "ES256"
    # A key of a type this verifier does not use is skipped, not an error.
    return None


def _check_signature(key: Any, alg: str, signed: bytes, signature: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    try:
        if alg == "RS256":
            key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
        else:
            if len(signature) != 64:
                return False
            der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
            key.verify(der, signed, ec.ECDSA(hashes.SHA256()))
        return True
    except InvalidSignature:
        return False


class OidcVerifier:
    """Checks ID tokens of ``issuer`` for any of ``audiences``.

    ``subjects`` and ``emails``, when given, narrow who may send (Idem's
    subjects are ``org/<organization>``). :meth:`verify` blocks on fetches;
    :meth:`verify_async` is its asyncio twin.
    """

    def __init__(self, issuer: str, audiences: Sequence[str], *, subjects: Sequence[str] = (), emails: Sequence[str] = (), leeway: float = DEFAULT_LEEWAY, refetch_interval: float = REFETCH_INTERVAL, jwks_uri: str | None = None):
        if not audiences:
            raise ValueError("at least one audience")
        self.issuer = issuer
        self.audiences = list(audiences)
        self.subjects = set(subjects)
        self.emails = {e.lower() for e in emails}
        self.leeway = leeway
        self.refetch_interval = refetch_interval
        self._jwks_uri = jwks_uri
        self._keys: dict[str, tuple[Any, str]] = {}
        self._fetched_at = 0.0
        self._lock = threading.Lock()

    # --- parsing and checks, no I/O ------------------------------------

    def _parse(self, token: str) -> tuple[dict[str, Any], dict[str, Any], bytes, bytes]:
        parts = token.split(".")
        if len(parts) != 3:
            raise OidcError("the bearer token is not a JWT")
        try:
            header = json.loads(_b64(parts[0]))
            claims = json.loads(_b64(parts[1]))
            signature = _b64(parts[2])
        except (ValueError, UnicodeDecodeError) as e:
            raise OidcError(f"the bearer token is not a usable ID token: {e}") from e
        if not isinstance(header, dict) or not isinstance(claims, dict):
            raise OidcError("the bearer token is not a usable ID token")
        if header.get("alg") not in ("RS256", "ES256"):
            raise OidcError(f"algorithm {header.get('alg')!r} is not RS256 or ES256")
        if not header.get("kid"):
            raise OidcError("the token names no key (kid)")
        return header, claims, f"{parts[0]}.{parts[1]}".encode(), signature

    def _needs_fetch(self, kid: str) -> bool:
        age = time.monotonic() - self._fetched_at
        if not self._fetched_at or age > MAX_KEY_AGE:
            return True
        return kid not in self._keys and age > self.refetch_interval

    def _store_keys(self, jwks: Mapping[str, Any]) -> None:
        keys = {}
        for jwk in jwks.get("keys", []):
            if not jwk.get("kid"):
                continue
            found = _public_key(jwk)
            if found:
                keys[jwk["kid"]] = found
        self._keys = keys
        self._fetched_at = time.monotonic()

    def _discovery_url(self) -> str:
        return self.issuer.rstrip("/") + "/.well-known/openid-configuration"

    def _jwks_from(self, discovery: Mapping[str, Any]) -> str:
        if discovery.get("issuer") != self.issuer:
            raise OidcUnavailable(f"the discovery document names issuer {discovery.get('issuer')!r}, not {self.issuer!r}")
        uri = discovery.get("jwks_uri")
        if not uri:
            raise OidcUnavailable("the discovery document names no jwks_uri")
        return uri

    def _check(self, header: Mapping[str, Any], claims: Mapping[str, Any], signed: bytes, signature: bytes) -> VerifiedToken:
        found = self._keys.get(header["kid"])
        if found is None:
            raise OidcError(f"no key of the issuer has ID {header['kid']!r}")
        key, alg = found
        # The key's algorithm, not the token's: a token cannot choose how it
        # is checked.
        if header["alg"] != alg or not _check_signature(key, alg, signed, signature):
            raise OidcError("the token's signature does not verify")
        now = time.time()
        for claim in ("exp", "iss", "aud"):
            if claim not in claims:
                raise OidcError(f"the token has no {claim}")
        if claims["iss"] != self.issuer:
            raise OidcError("the token is for another issuer")
        aud = claims["aud"]
        auds = aud if isinstance(aud, list) else [aud]
        if not any(a in self.audiences for a in auds):
            raise OidcError("the token is for another audience")
        if not isinstance(claims["exp"], (int, float)) or claims["exp"] + self.leeway < now:
            raise OidcError("the token has expired")
        nbf = claims.get("nbf")
        if nbf is not None and (not isinstance(nbf, (int, float)) or nbf - self.leeway > now):
            raise OidcError("the token is not valid yet")
        if self.subjects or self.emails:
            email = claims.get("email")
            ok = claims.get("sub") in self.subjects or (
                claims.get("email_verified") is not False and isinstance(email, str) and email.lower() in self.emails
            )
            if not ok:
                raise OidcError("the token's subject is not allowed")
        run = claims.get("idem_run")
        if run is not None and (not isinstance(run, str) or not run):
            raise OidcError("idem_run is empty")
        return VerifiedToken(
            subject=claims.get("sub"),
            email=claims.get("email"),
            idem_run=run,
            expires_at=int(claims["exp"]),
            audience=aud,
            digest=hashlib.sha256(signed).hexdigest(),
            claims=dict(claims),
        )

    def _fetch_failed(self, e: Exception) -> None:
        # Keys fetched before still hold while the issuer is away; the next
        # fetch waits for the refetch interval.
        if not self._keys:
            raise OidcUnavailable(f"the issuer's keys could not be fetched: {e}") from e
        self._fetched_at = time.monotonic()

    # --- blocking -------------------------------------------------------

    def _fetch(self) -> None:
        try:
            with httpx.Client(timeout=10) as http:
                uri = self._jwks_uri or self._jwks_from(http.get(self._discovery_url()).raise_for_status().json())
                self._store_keys(http.get(uri).raise_for_status().json())
        except (httpx.HTTPError, ValueError) as e:
            self._fetch_failed(e)

    def verify(self, token: str) -> VerifiedToken:
        header, claims, signed, signature = self._parse(token)
        with self._lock:
            if self._needs_fetch(header["kid"]):
                self._fetch()
        return self._check(header, claims, signed, signature)

    def verify_headers(self, headers: Mapping[str, str] | Sequence[tuple[str, str]]) -> VerifiedToken:
        return self.verify(_required_bearer(headers))

    # --- asyncio --------------------------------------------------------

    async def _fetch_async(self) -> None:
        try:
            async with httpx.AsyncClient(timeout=10) as http:
                uri = self._jwks_uri or self._jwks_from((await http.get(self._discovery_url())).raise_for_status().json())
                self._store_keys((await http.get(uri)).raise_for_status().json())
        except (httpx.HTTPError, ValueError) as e:
            self._fetch_failed(e)

    async def verify_async(self, token: str) -> VerifiedToken:
        header, claims, signed, signature = self._parse(token)
        if self._needs_fetch(header["kid"]):
            await self._fetch_async()
        return self._check(header, claims, signed, signature)

    async def verify_headers_async(self, headers: Mapping[str, str] | Sequence[tuple[str, str]]) -> VerifiedToken:
        return await self.verify_async(_required_bearer(headers))

