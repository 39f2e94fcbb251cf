"""Run keys against the vectors every language's guard shares."""

from __future__ import annotations

import json
import pathlib

import pytest

from idem.guard import keys

# Relative to sdks/python: the file idem-guard's own tests read.
VECTORS = pathlib.Path(__file__).resolve().parent.parent / "../../crates/guard/testdata/run-keys.json"

ERRORS = {
    "missing_identity": keys.MissingIdentity,
    "repeated_header": keys.RepeatedHeader,
    "missing_scope": keys.MissingScope,
    "invalid_schedule_time": keys.InvalidScheduleTime,
    "repeated_query_parameter": keys.RepeatedQueryParameter,
}


def load():
    data = json.loads(VECTORS.read_text())
    assert data["vectors"], "the file holds vectors"
    return data["vectors"]


def source(spec):
    if isinstance(spec, str):
        return {
            "idempotency-key": keys.IdentitySource.idempotency_key,
            "cloud-scheduler": keys.IdentitySource.cloud_scheduler,
            "cloud-tasks": keys.IdentitySource.cloud_tasks,
        }[spec]()
    return keys.IdentitySource.header(spec["header"])


def scope(spec):
    if "header" in spec:
        return keys.Scope.header(spec["header"])
    if "path_segment" in spec:
        return keys.Scope.path_segment(spec["path_segment"])
    return keys.Scope.query_param(spec["query"])


@pytest.mark.parametrize("vector", load(), ids=lambda v: v["name"])
def test_run_key_vector(vector):
    config = keys.KeyConfig(scopes=[scope(s) for s in vector.get("scopes", [])])
    if "sources" in vector:
        config.sources = [source(s) for s in vector["sources"]]
    path, _, query = vector["uri"].partition("?")
    request = keys.Request([tuple(h) for h in vector["headers"]], path, query)
    derive = lambda: config.derive(request, signed_message_id=vector.get("signed_webhook_id"))  # noqa: E731
    if "error" in vector:
        with pytest.raises(ERRORS[vector["error"]]):
            derive()
    else:
        assert derive() == vector["run_key"]
