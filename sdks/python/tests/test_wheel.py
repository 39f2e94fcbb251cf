"""The built wheel, installed into a fresh virtualenv, against the binary."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

SDK = pathlib.Path(__file__).resolve().parent.parent

USE = textwrap.dedent(
    """
    import sys, uuid
    import idem, idem.guard, idem.webhooks
    assert idem.__file__.startswith(sys.prefix), idem.__file__
    base, key = sys.argv[1], sys.argv[2]
    with idem.Client(base, key) as c:
        queue = "wheel-" + uuid.uuid4().hex[:8]
        c.create_queue({"name": queue, "mode": "pull"})
        made = c.create_task(queue, {"task_id": "w1", "payload": {"json": {"n": 1}}})
        assert made.status == 201, made
        stats = idem.Worker(c, queue, lambda t: {"n": t["payload"]["json"]["n"]}, wait_ms=100).run(stop_when_idle=True)
        assert stats.completed == 1, stats
        print(c.get_task(queue, "w1")["state"])
    """
)


def built_wheel(tmp: pathlib.Path) -> pathlib.Path:
    if os.environ.get("IDEM_SDK_WHEEL"):
        return pathlib.Path(os.environ["IDEM_SDK_WHEEL"])
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp / "dist"), str(SDK)], check=True, capture_output=True)
    return next((tmp / "dist").glob("idem_client-*.whl"))


@pytest.mark.parametrize("server", ["sqlite"], indirect=True)
def test_the_wheel_installs_into_a_fresh_virtualenv_and_works(server, tmp_path):
    wheel = built_wheel(tmp_path)
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"{wheel}[oidc]"], check=True)
    out = subprocess.run([str(python), "-c", USE, server.base_url, server.api_key], check=True, capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip() == "succeeded"
