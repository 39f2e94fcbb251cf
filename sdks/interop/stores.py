"""Makes and removes what the test puts in PostgreSQL and Redis.

  stores.py createdb BASE_URL NAME        prints the new database's URL
  stores.py dropdb BASE_URL NAME
  stores.py redis-clean REDIS_URL KEYS_FILE

Run with the venv of sdks/python/test.sh (psycopg, redis) and
sdks/python/src on PYTHONPATH (run keys are derived as the guards do).
"""

import sys
from urllib.parse import urlsplit, urlunsplit


def with_database(url: str, name: str) -> str:
    u = urlsplit(url)
    return urlunsplit(u._replace(path="/" + name))


def main() -> None:
    command, url, arg = sys.argv[1:4]
    if command in ("createdb", "dropdb"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            if command == "createdb":
                conn.execute(f'CREATE DATABASE "{arg}"')
                print(with_database(url, arg))
            else:
                conn.execute(f'DROP DATABASE IF EXISTS "{arg}" WITH (FORCE)')
    elif command == "redis-clean":
        import redis

        from idem.guard import KeyConfig, Request

        prefix = "idem:guard:"
        client = redis.Redis.from_url(url)
        with open(arg) as f:
            runs = [line.strip() for line in f if line.strip()]
        # The guards store a run under its derived key (a SHA-256), not the sender's.
        keys = [str(KeyConfig().derive(Request.from_mapping({"Idempotency-Key": run}, "/run"))) for run in runs]
        pipe = client.pipeline()
        for key in keys:
            pipe.delete(f"{prefix}run:{key}", f"{prefix}fence:{key}")
        if keys:
            pipe.zrem(f"{prefix}runs-by-expiry", *keys)
            pipe.zrem(f"{prefix}fences-by-expiry", *keys)
        pipe.execute()
    else:
        sys.exit(f"unknown command {command}")


main()
