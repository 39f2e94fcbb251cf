"""The committed TypedDicts match the document the binary serves."""

from __future__ import annotations

import pathlib

import httpx

import generate_models

MODELS = pathlib.Path(__file__).resolve().parent.parent / "src" / "idem" / "models.py"


def test_models_are_generated_from_the_served_document(server):
    document = httpx.get(server.base_url + "/openapi.json", timeout=10).content
    fresh = generate_models.generate(document)
    assert fresh == MODELS.read_text(), (
        "src/idem/models.py is stale against the server's OpenAPI document: "
        "run python scripts/generate_models.py and commit the result"
    )
