"""Schemathesis hooks for scripts/api-conformance.

A client sends one Idempotency-Key per logical request (API.md §2), and
Idem answers a key reused with another request 422: Hypothesis, which
draws keys from their schema, gives many different requests the same
simplest key ("0"). Each request keeps the key it was generated with,
made its own by a suffix, so the run exercises the key's syntax without
claiming that one key stands for unrelated requests. A key outside the
syntax is left as generated: its 400 is what the run should see.
"""

import itertools
import re

import schemathesis

_BARE = re.compile(r"^[\x21\x23-\x2B\x2D-\x7E](?:[\x20-\x2B\x2D-\x7E]*[\x21-\x2B\x2D-\x7E])?$")
_QUOTED = re.compile(r'^"(?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\[\\"])+"$')
_MAX = 255
_calls = itertools.count()


def _own(key: str) -> str:
    suffix = f"-{next(_calls)}"
    if _BARE.match(key):
        return key[: _MAX - len(suffix)].rstrip(" ") + suffix
    if _QUOTED.match(key):
        inner = key[1:-1][: _MAX - 2 - len(suffix)]
        # A cut must not leave a lone escape before the suffix.
        while inner.endswith("\\") and (len(inner) - len(inner.rstrip("\\"))) % 2:
            inner = inner[:-1]
        return f'"{inner}{suffix}"'
    return key


@schemathesis.hook
def before_call(context, case, **kwargs):
    if not case.headers:
        return
    for name in list(case.headers):
        if name.lower() == "idempotency-key" and isinstance(case.headers[name], str):
            case.headers[name] = _own(case.headers[name])
