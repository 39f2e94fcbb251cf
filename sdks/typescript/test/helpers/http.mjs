// Small loopback HTTP servers the tests deliver to or pass through.
import { createServer, request as httpRequest } from "node:http";

/** A target recording every delivery; `answer(delivery)` gives its status (200 by default). */
export async function startTarget(answer = () => 200) {
  const deliveries = [];
  const waiters = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const delivery = { method: req.method, url: req.url, headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) };
    deliveries.push(delivery);
    for (const w of waiters.splice(0)) w();
    const status = await answer(delivery);
    res.writeHead(status, { "content-type": "text/plain" });
    res.end(String(status));
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    deliveries,
    /** Resolves once at least `n` deliveries came, or rejects after `ms`. */
    async waitFor(n, ms = 15000) {
      const deadline = Date.now() + ms;
      while (deliveries.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} deliveries, got ${deliveries.length}`);
        await new Promise((ok) => {
          waiters.push(ok);
          setTimeout(ok, 100);
        });
      }
      return deliveries;
    },
    close: () => new Promise((ok) => server.close(ok)),
  };
}

/**
 * A proxy to `upstream` that forwards every request and, when
 * `drop(req)` says so, lets the upstream answer and then cuts the client's
 * connection instead of passing the answer on: a response lost on the way back.
 */
export async function startDroppingProxy(upstream, drop) {
  const seen = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    seen.push({ method: req.method, url: req.url, headers: req.headers });
    const target = new URL(req.url, upstream);
    const headers = { ...req.headers, host: target.host };
    const upstreamRes = await new Promise((ok, fail) => {
      const r = httpRequest(target, { method: req.method, headers }, ok);
      r.on("error", fail);
      r.end(body);
    });
    const answer = [];
    for await (const c of upstreamRes) answer.push(c);
    if (drop(req)) {
      req.socket.destroy();
      return;
    }
    res.writeHead(upstreamRes.statusCode, upstreamRes.headers);
    res.end(Buffer.concat(answer));
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return { url: `http://127.0.0.1:${server.address().port}`, seen, close: () => new Promise((ok) => { server.closeAllConnections?.(); server.close(ok); }) };
}
