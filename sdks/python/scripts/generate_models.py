"""Regenerates src/idem/models.py, the TypedDicts of the OpenAPI document.

    python scripts/generate_models.py              # from a server this script starts
    python scripts/generate_models.py --input openapi.json
    python scripts/generate_models.py --url http://127.0.0.1:7070/openapi.json

The server started is IDEM_BIN, else ${CARGO_TARGET_DIR:-<repo>/target}/debug/idem.
tests/test_models.py regenerates the module the same way from the document the
binary serves and fails when the committed one differs.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
SDK = HERE.parent
MODELS = SDK / "src" / "idem" / "models.py"

# Fixed so that the output depends on the document alone.
OPTIONS = [
    "--input-file-type", "openapi",
    "--output-model-type", "typing.TypedDict",
    "--target-python-version", "3.10",
    "--use-standard-collections",
    "--use-union-operator",
    "--no-use-closed-typed-dict",
    "--formatters", "builtin",
    "--disable-timestamp",
]

HEADER = '''"""The API's request and response bodies as TypedDicts.

Generated from the OpenAPI document the server serves at /openapi.json by
scripts/generate_models.py; do not edit by hand.
"""
'''


def generate(document: bytes) -> str:
    """The module text for an OpenAPI document."""
    tool = shutil.which("datamodel-codegen") or str(pathlib.Path(sys.executable).parent / "datamodel-codegen")
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "openapi.json"
        out = pathlib.Path(tmp) / "models.py"
        src.write_bytes(document)
        subprocess.run([tool, "--input", str(src), "--output", str(out), *OPTIONS], check=True, capture_output=True)
        text = out.read_text()
    # The tool's own header names a temporary file; ours names the source.
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return HEADER + "".join(lines)


def idem_bin() -> str:
    if os.environ.get("IDEM_BIN"):
        return os.environ["IDEM_BIN"]
    repo = SDK.parent.parent
    target = os.environ.get("CARGO_TARGET_DIR") or str(repo / "target")
    return str(pathlib.Path(target) / "debug" / "idem")


def served_document() -> bytes:
    """Starts the binary on a scratch SQLite store and reads its document."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as data:
        proc = subprocess.Popen(
            [idem_bin(), "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data,
             "--bootstrap-key", "idem_" + secrets.token_hex(20)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/openapi.json", timeout=2) as r:
                        return r.read()
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise
                    time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", help="an OpenAPI document on disk")
    ap.add_argument("--url", help="where a running server serves its document")
    ap.add_argument("--output", default=str(MODELS))
    args = ap.parse_args()
    if args.input:
        doc = pathlib.Path(args.input).read_bytes()
    elif args.url:
        with urllib.request.urlopen(args.url, timeout=10) as r:
            doc = r.read()
    else:
        doc = served_document()
    pathlib.Path(args.output).write_text(generate(doc))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
