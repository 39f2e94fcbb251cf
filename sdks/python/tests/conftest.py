"""A real ``idem serve`` per store (SQLite in a scratch directory, PostgreSQL
in a database made for the run and dropped after), and real PostgreSQL and
Redis for the guard stores.

IDEM_BIN names the binary (else ${CARGO_TARGET_DIR:-<repo>/target}/debug/idem);
IDEM_TEST_DATABASE_URL (a user that may CREATE DATABASE) and
IDEM_TEST_REDIS_URL point at the servers.
"""

from __future__ import annotations

import os
import pathlib
import secrets
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from typing import Iterator

import httpx
import pytest

import idem

SDK = pathlib.Path(__file__).resolve().parent.parent
REPO = SDK.parent.parent
DATABASE_URL = os.environ.get("IDEM_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("IDEM_TEST_REDIS_URL", "redis://127.0.0.1:6379")


def idem_bin() -> str:
    if os.environ.get("IDEM_BIN"):
        return os.environ["IDEM_BIN"]
    target = os.environ.get("CARGO_TARGET_DIR") or str(REPO / "target")
    return str(pathlib.Path(target) / "debug" / "idem")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def database_url(name: str) -> str:
    base, _, _ = DATABASE_URL.rpartition("/")
    return f"{base}/{name}"


class ScratchDatabase:
    """A PostgreSQL database of its own, dropped on close."""

    def __init__(self, prefix: str):
        import psycopg

        self.name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.name}"')
        self.url = database_url(self.name)

    def close(self) -> None:
        import psycopg

        with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


@dataclass
class Server:
    store: str
    base_url: str
    api_key: str
    process: subprocess.Popen
    log: pathlib.Path

    def client(self, **kw) -> idem.Client:
        return idem.Client(self.base_url, self.api_key, **kw)


def wait_ready(url: str, proc: subprocess.Popen, log: pathlib.Path, timeout: float = 60, *, name: str = "idem", any_answer: bool = False) -> None:
    """Waits until ``url`` answers 200 (or, with ``any_answer``, anything)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            answer = httpx.get(url, timeout=2)
        except httpx.HTTPError:
            pass
        else:
            if any_answer or answer.status_code == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{name} did not become ready:\n{log.read_text()[-3000:]}")


def start_serve(store_args: list[str], workdir: pathlib.Path, store: str) -> Server:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    key = "idem_" + secrets.token_hex(20)
    log = workdir / f"serve-{store}.log"
    proc = subprocess.Popen(
        [idem_bin(), "serve", "--listen", f"127.0.0.1:{port}", "--bootstrap-key", key, "--public-url", base, *store_args],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    wait_ready(f"{base}/readyz", proc, log)
    return Server(store, base, key, proc, log)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def workdir() -> Iterator[pathlib.Path]:
    with tempfile.TemporaryDirectory(prefix="idem-sdk-py-") as d:
        yield pathlib.Path(d)


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def server(request, workdir) -> Iterator[Server]:
    """The API on each store in turn: every test using it runs twice."""
    if request.param == "sqlite":
        data = workdir / "data"
        srv = start_serve(["--data-dir", str(data)], workdir, "sqlite")
        try:
            yield srv
        finally:
            stop(srv.process)
    else:
        db = ScratchDatabase("idem_sdk_py")
        try:
            srv = start_serve(["--database-url", db.url], workdir, "postgres")
            try:
                yield srv
            finally:
                stop(srv.process)
        finally:
            db.close()


@pytest.fixture
def client(server) -> Iterator[idem.Client]:
    with server.client() as c:
        yield c


@pytest.fixture
async def aclient(server):
    async with idem.AsyncClient(server.base_url, server.api_key) as c:
        yield c


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def guard_database() -> Iterator[str]:
    """A PostgreSQL database for the guard's tables."""
    db = ScratchDatabase("idem_sdk_py_guard")
    try:
        yield db.url
    finally:
        db.close()
