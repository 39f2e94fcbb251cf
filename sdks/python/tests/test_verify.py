"""Verifying real deliveries: the Standard Webhooks signature, the target
signature and Idem's OIDC token, each refused when tampered with."""

from __future__ import annotations

import base64
import json
import pathlib
import time

import pytest

from idem import webhooks
from idem.oidc import OidcError, OidcVerifier

from conftest import unique
from receiver import Receiver

TESTDATA = pathlib.Path(__file__).resolve().parent.parent.parent.parent / "crates" / "guard" / "testdata"


@pytest.fixture(scope="module")
def receiver():
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def delivery(server, client, receiver):
    """One real delivery of a task whose target asked for an OIDC token."""
    queue = unique("hooks")
    client.create_queue({"name": queue})
    before = len(receiver.received)
    target = {"url": f"{receiver.url}/hooks/charge?order=42", "json": {"amount": 100}, "oidc": {"audience": "aud-" + queue}}
    done = client.create_task(queue, {"task_id": "d1", "target": target}, wait_ms=20_000)
    assert done["state"] == "succeeded"
    got = receiver.wait_for(before + 1)[before]
    secrets = [s["secret"] for s in client.list_signing_secrets()["secrets"]]
    return got, secrets, "aud-" + queue


def test_a_delivery_signature_verifies_and_tampering_is_refused(delivery):
    got, secrets, _ = delivery
    msg_id = webhooks.verify(secrets, got.headers, got.body)
    assert msg_id == got.header("Idempotency-Key"), "the signed webhook-id is the run key"
    with pytest.raises(webhooks.SignatureError):
        webhooks.verify(secrets, got.headers, got.body.replace(b"100", b"999"))
    other = "whsec_" + base64.b64encode(b"not the organization's secret").decode()
    with pytest.raises(webhooks.SignatureError):
        webhooks.verify([other], got.headers, got.body)
    with pytest.raises(webhooks.SignatureError, match="tolerated window"):
        webhooks.verify(secrets, got.headers, got.body, now=time.time() + 3600)
    unsigned = [(k, v) for k, v in got.headers if k.lower() != "webhook-signature"]
    with pytest.raises(webhooks.SignatureError, match="missing"):
        webhooks.verify(secrets, unsigned, got.body)


def test_a_target_signature_binds_method_path_and_query(delivery):
    got, secrets, _ = delivery
    assert got.path == "/hooks/charge?order=42"
    assert webhooks.verify_target(secrets, got.headers, got.method, got.path, got.body) == got.header("Webhook-Id")
    for method, path in [("POST", "/hooks/refund?order=42"), ("POST", "/hooks/charge?order=43"), ("PUT", got.path)]:
        with pytest.raises(webhooks.SignatureError, match="Idem-Target-Signature"):
            webhooks.verify_target(secrets, got.headers, method, path, got.body)
    without = [(k, v) for k, v in got.headers if k.lower() != "idem-target-signature"]
    with pytest.raises(webhooks.SignatureError):
        webhooks.verify_target(secrets, without, got.method, got.path, got.body)
    assert webhooks.verify_target(secrets, without, got.method, got.path, got.body, required=False)


def _tampered(token: str, **changes) -> str:
    head, claims, sig = token.split(".")
    decoded = json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))
    decoded.update(changes)
    forged = base64.urlsafe_b64encode(json.dumps(decoded).encode()).rstrip(b"=").decode()
    return f"{head}.{forged}.{sig}"


async def test_idem_oidc_tokens_verify_by_the_jwks_and_forgeries_are_refused(server, delivery):
    got, _, audience = delivery
    auth = got.header("Authorization")
    assert auth and auth.startswith("Bearer ")
    token = auth.split(" ", 1)[1]
    verifier = OidcVerifier(server.base_url, [audience], subjects=["org/default"])
    verified = verifier.verify_headers(got.headers)
    assert verified.idem_run == got.header("Idempotency-Key")
    assert verified.subject == "org/default"
    assert (await verifier.verify_async(token)).digest == verified.digest

    with pytest.raises(OidcError, match="signature"):
        verifier.verify(_tampered(token, sub="org/other"))
    with pytest.raises(OidcError, match="signature"):
        verifier.verify(_tampered(token, idem_run="0" * 64))
    with pytest.raises(OidcError, match="audience"):
        OidcVerifier(server.base_url, ["someone-else"]).verify(token)
    with pytest.raises(OidcError, match="not allowed"):
        OidcVerifier(server.base_url, [audience], subjects=["org/other"]).verify(token)
    head, claims, _ = token.split(".")
    with pytest.raises(OidcError):
        verifier.verify(f"{head}.{claims}.")
    none_alg = base64.urlsafe_b64encode(b'{"alg":"none","kid":"x"}').rstrip(b"=").decode()
    with pytest.raises(OidcError, match="not RS256 or ES256"):
        verifier.verify(f"{none_alg}.{claims}.")


def _rs256(claims: dict, kid: str = "test-rsa-1") -> str:
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding

    key = serialization.load_der_private_key((TESTDATA / "rsa-test-key.der").read_bytes(), password=None)

    def enc(b: bytes) -> str:
        return base64.urlsafe_b64encode(b).rstrip(b"=").decode()

    signed = enc(json.dumps({"alg": "RS256", "kid": kid, "typ": "JWT"}).encode()) + "." + enc(json.dumps(claims).encode())
    return signed + "." + enc(key.sign(signed.encode(), padding.PKCS1v15(), hashes.SHA256()))


def test_rs256_tokens_of_any_issuer_and_their_refusals():
    jwk = json.loads((TESTDATA / "rsa-test-key.jwk.json").read_text())
    issuer = Receiver(
        lambda r: (200, {"issuer": issuer_url, "jwks_uri": issuer_url + "/jwks"})
        if r.path.startswith("/.well-known/openid-configuration")
        else (200, {"keys": [jwk]})
    )
    issuer_url = issuer.url
    try:
        now = int(time.time())
        good = {"iss": issuer_url, "aud": "svc", "sub": "sa@example", "iat": now, "exp": now + 300}
        verifier = OidcVerifier(issuer_url, ["svc"])
        assert verifier.verify(_rs256(good)).subject == "sa@example"
        assert verifier.verify(_rs256(good)).idem_run is None
        with pytest.raises(OidcError, match="expired"):
            verifier.verify(_rs256({**good, "exp": now - 120}))
        with pytest.raises(OidcError, match="not valid yet"):
            verifier.verify(_rs256({**good, "nbf": now + 600}))
        with pytest.raises(OidcError, match="issuer"):
            verifier.verify(_rs256({**good, "iss": "https://elsewhere"}))
        with pytest.raises(OidcError, match="no key"):
            verifier.verify(_rs256(good, kid="unknown"))
    finally:
        issuer.close()
