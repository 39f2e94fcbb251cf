"""The guard's Redis scripts and PostgreSQL tables are idem-guard's own, so
that a Rust, a TypeScript and a Python guard on one store share claims:
each text here must be the Rust guard's, word for word."""

import pathlib

import pytest

from idem.guard import stores

SCRIPTS = pathlib.Path(__file__).resolve().parent.parent / "../../crates/guard/src/store/scripts"


def words(text: str) -> str:
    # Layout may differ; the words may not.
    return " ".join(text.split())


@pytest.mark.parametrize(
    "name, text",
    [
        ("now", stores.LUA_NOW),
        ("claim", stores.LUA_CLAIM),
        ("finish", stores.LUA_FINISH),
        ("renew", stores.LUA_RENEW),
        ("bind_token", stores.LUA_BIND_TOKEN),
        ("inspect", stores.LUA_INSPECT),
    ],
)
def test_each_redis_script_is_idem_guards(name, text):
    assert words(text) == words((SCRIPTS / f"{name}.lua").read_text())


def test_the_postgresql_tables_are_idem_guards():
    assert words(stores.PG_SCHEMA) == words((SCRIPTS / "schema.sql").read_text())
