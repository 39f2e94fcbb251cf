// Verifying real deliveries of the server (Standard Webhooks signature,
// Idem-Target-Signature, OIDC ID token), and tampered ones refused.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { generateKeyPairSync, sign } from "node:crypto";
import { IdemClient, OidcError, OidcVerifier, SignatureError, rawHeaderPairs, signDelivery, verifyDelivery } from "../dist/index.js";
import { STORES, startServer } from "./helpers/server.mjs";
import { startTarget } from "./helpers/http.mjs";

const refused = (kind) => (e) => e instanceof SignatureError && e.kind === kind;

for (const store of STORES) {
  describe(`real deliveries on ${store}`, () => {
    let server, idem, target, delivery, secrets;
    before(async () => {
      server = await startServer({ store });
      idem = new IdemClient({ baseUrl: server.url, apiKey: server.apiKey });
      target = await startTarget();
      await idem.rotateSigningSecret();
      secrets = (await idem.listSigningSecrets()).value.secrets.map((s) => s.secret);
      await idem.createQueue({ name: "hooks" });
      const task = await idem.createTask(
        "hooks",
        { task_id: "pay-1", target: { url: `${target.url}/hooks/pay?order=42`, json: { amount: 100 }, oidc: { audience: "https://pay.internal" } } },
        { waitMs: 15000 },
      );
      assert.equal(task.value.state, "succeeded");
      [delivery] = await target.waitFor(1);
    });
    after(async () => {
      await target?.close();
      await server?.stop();
    });

    const asReceived = (overrides = {}) => ({
      method: delivery.method,
      pathAndQuery: delivery.url,
      headers: rawHeaderPairs(delivery.rawHeaders),
      body: delivery.body,
      ...overrides,
    });

    test("a delivery verifies by either secret of a rotation, target signature included", () => {
      assert.equal(secrets.length, 2);
      for (const secret of secrets) {
        const verified = verifyDelivery([secret], asReceived(), { requireTargetSignature: true });
        assert.equal(verified.webhookId, delivery.headers["idempotency-key"]);
        assert.equal(verified.targetSigned, true);
      }
    });

    test("tampered deliveries are refused", () => {
      assert.throws(() => verifyDelivery(secrets, asReceived({ body: Buffer.from('{"amount":1000}') })), refused("no_match"));
      assert.throws(() => verifyDelivery(secrets, asReceived({ pathAndQuery: "/admin/refund-everything?all=1" })), refused("target_mismatch"));
      assert.throws(() => verifyDelivery(secrets, asReceived({ pathAndQuery: "/hooks/pay?order=43" })), refused("target_mismatch"));
      assert.throws(() => verifyDelivery(secrets, asReceived({ method: "PUT" })), refused("target_mismatch"));
      assert.throws(() => verifyDelivery(["whsec_" + Buffer.from("another secret").toString("base64")], asReceived()), refused("no_match"));
      const ts = Number(delivery.headers["webhook-timestamp"]);
      assert.throws(() => verifyDelivery(secrets, asReceived(), { nowS: ts + 301 }), refused("stale"));
      const withoutTarget = rawHeaderPairs(delivery.rawHeaders).filter(([n]) => n.toLowerCase() !== "idem-target-signature");
      assert.equal(verifyDelivery(secrets, asReceived({ headers: withoutTarget })).targetSigned, false);
      assert.throws(() => verifyDelivery(secrets, asReceived({ headers: withoutTarget }), { requireTargetSignature: true }), refused("missing_header"));
      const twice = [...rawHeaderPairs(delivery.rawHeaders), ["Webhook-Id", "other"]];
      assert.throws(() => verifyDelivery(secrets, asReceived({ headers: twice })), refused("repeated_header"));
      const forgedId = rawHeaderPairs(delivery.rawHeaders).map(([n, v]) => [n, n.toLowerCase() === "webhook-id" ? "forged" : v]);
      assert.throws(() => verifyDelivery(secrets, asReceived({ headers: forgedId })), refused("no_match"));
    });

    test("signDelivery signs as the server does", () => {
      const ts = Number(delivery.headers["webhook-timestamp"]);
      const ours = signDelivery([secrets[0]], { webhookId: delivery.headers["webhook-id"], timestamp: ts, method: delivery.method, pathAndQuery: delivery.url, body: delivery.body });
      assert.ok(delivery.headers["webhook-signature"].split(" ").includes(ours["webhook-signature"]));
      assert.ok(delivery.headers["idem-target-signature"].split(" ").includes(ours["idem-target-signature"]));
    });

    test("Idem's OIDC token verifies by its JWKS and names the run; altered or misdirected tokens do not", async () => {
      const token = delivery.headers.authorization.slice("Bearer ".length);
      const verifier = new OidcVerifier({ issuer: server.url, audiences: ["https://pay.internal"], subjects: ["org/default"] });
      const verified = await verifier.verifyHeaders(rawHeaderPairs(delivery.rawHeaders));
      assert.equal(verified.idemRun, delivery.headers["idempotency-key"]);
      assert.equal(verified.subject, "org/default");
      assert.match(verified.digest, /^[0-9a-f]{64}$/);
      const [h, p, s] = token.split(".");
      const claims = JSON.parse(Buffer.from(p, "base64url"));
      const forged = Buffer.from(JSON.stringify({ ...claims, idem_run: "another-run" })).toString("base64url");
      await assert.rejects(verifier.verify(`${h}.${forged}.${s}`), (e) => e instanceof OidcError && e.kind === "invalid");
      await assert.rejects(
        new OidcVerifier({ issuer: server.url, audiences: ["https://elsewhere"] }).verify(token),
        (e) => e instanceof OidcError && e.kind === "invalid" && /Audience/.test(e.message),
      );
      await assert.rejects(
        new OidcVerifier({ issuer: server.url, audiences: ["https://pay.internal"], subjects: ["org/acme"] }).verify(token),
        (e) => e instanceof OidcError && e.kind === "not_allowed",
      );
      await assert.rejects(verifier.verifyHeaders([]), (e) => e instanceof OidcError && e.kind === "missing" && e.status === 401);
    });
  });
}

describe("RS256 tokens of another issuer", () => {
  let issuer, url, privateKey, otherKey;
  const kid = "k1";
  before(async () => {
    ({ privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 }));
    ({ privateKey: otherKey } = generateKeyPairSync("rsa", { modulusLength: 2048 }));
    const jwk = { ...privateKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" };
    for (const p of ["d", "p", "q", "dp", "dq", "qi"]) delete jwk[p];
    issuer = createServer((req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.url === "/.well-known/openid-configuration") res.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` }));
      else if (req.url === "/jwks") res.end(JSON.stringify({ keys: [jwk, { kty: "oct", kid: "hmac", k: "c2VjcmV0" }] }));
      else res.writeHead(404).end("{}");
    });
    await new Promise((ok) => issuer.listen(0, "127.0.0.1", ok));
    url = `http://127.0.0.1:${issuer.address().port}`;
  });
  after(() => new Promise((ok) => issuer.close(ok)));

  const now = () => Math.floor(Date.now() / 1000);
  const token = (claims, { header = { alg: "RS256", kid }, key = privateKey } = {}) => {
    const enc = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const signed = `${enc(header)}.${enc(claims)}`;
    const signature = header.alg === "RS256" ? sign("sha256", Buffer.from(signed), key).toString("base64url") : "";
    return `${signed}.${signature}`;
  };
  const good = () => ({ iss: url, aud: "svc", sub: "scheduler@example.iam", email: "scheduler@example.iam", iat: now(), exp: now() + 600 });
  const verifier = () => new OidcVerifier({ issuer: url, audiences: ["svc"], emails: ["Scheduler@example.iam"] });
  const kind = (k) => (e) => e instanceof OidcError && e.kind === k;

  test("a valid token passes, with its email allowed", async () => {
    const v = await verifier().verify(token(good()));
    assert.equal(v.email, "scheduler@example.iam");
    assert.equal(v.idemRun, undefined);
  });

  test("expired, not yet valid, wrong issuer, wrong key, unknown key, none and HMAC are refused", async () => {
    const v = verifier();
    await assert.rejects(v.verify(token({ ...good(), exp: now() - 120 })), kind("invalid"));
    await assert.rejects(v.verify(token({ ...good(), nbf: now() + 120 })), kind("invalid"));
    await assert.rejects(v.verify(token({ ...good(), iss: "https://evil.example" })), kind("invalid"));
    await assert.rejects(v.verify(token(good(), { key: otherKey })), kind("invalid"));
    await assert.rejects(v.verify(token(good(), { header: { alg: "RS256", kid: "nope" } })), kind("unknown_key"));
    await assert.rejects(v.verify(token(good(), { header: { alg: "none", kid } })), kind("malformed"));
    await assert.rejects(v.verify(token(good(), { header: { alg: "HS256", kid: "hmac" } })), kind("malformed"));
    await assert.rejects(v.verify(token({ ...good(), email_verified: false })), kind("not_allowed"));
    await assert.rejects(v.verify("not-a-jwt"), kind("malformed"));
  });
});
