"""An ASGI app behind the Python guard (idem.guard.GuardMiddleware), served by uvicorn.

Usage: python app.py PORT STORE_URL COUNTER_URL

Run with the venv sdks/python/test.sh makes and sdks/python/src on
PYTHONPATH, as its own tests do.
"""

import asyncio
import json
import sys
from urllib.parse import parse_qs

import httpx
import uvicorn

from idem.guard import GuardMiddleware, PostgresStore, RedisStore

port, store_url, counter = int(sys.argv[1]), sys.argv[2], sys.argv[3]


async def open_store():
    if store_url.startswith("postgres"):
        import psycopg

        store = PostgresStore(await psycopg.AsyncConnection.connect(store_url, autocommit=True))
        await store.create_schema()
        return store
    import redis.asyncio as redis

    # idem-guard's own prefix, the one `idem proxy` uses.
    return RedisStore(redis.Redis.from_url(store_url), prefix="idem:guard:")


async def main() -> None:
    http = httpx.AsyncClient()

    async def handler(scope, receive, send):
        query = {k: v[0] for k, v in parse_qs(scope["query_string"].decode()).items()}
        claim = scope["state"]["idem_claim"]
        answer = await http.post(f"{counter}/execute", params={"k": query["k"], "guard": "python", "run": str(claim.key)})
        outcome = answer.json()["outcome"]
        await asyncio.sleep(int(query["ms"]) / 1000)
        body = json.dumps({"guard": "python", "outcome": outcome}).encode()
        await send({"type": "http.response.start", "status": 500 if outcome == "fail" else 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    app = GuardMiddleware(handler, store=await open_store())
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    await server.serve()


asyncio.run(main())
