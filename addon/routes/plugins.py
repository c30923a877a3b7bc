"""The addon's side of the dialect registry (translators/dialect.py): dialects defined outside the
package, and each dialect's settings (its own options and environment variables) read here, since
the translators read no environment.

`$GATEWAY_DIALECTS` names modules (comma-separated, importable from the working directory or
PYTHONPATH) that each define a `DIALECT` (or call `translators.dialect.register` on import), a
`CLIENT_DIALECT` (`translators.client_dialects.register`), or both; they are imported when the
addon loads, before it declares its options (docs/adding-a-dialect.md).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

from translators import client_dialects
from translators import dialect as dialects
from translators.dialect import Dialect, Settings

EXTRA_ENV = "GATEWAY_DIALECTS"


def load_extra(environ: Mapping[str, str] = os.environ) -> list[str]:
    """Import the modules `$GATEWAY_DIALECTS` names and register their `DIALECT`; their names."""
    loaded = []
    for name in environ.get(EXTRA_ENV, "").split(","):
        if not name.strip():
            continue
        module = importlib.import_module(name.strip())
        found = getattr(module, "DIALECT", None)
        if isinstance(found, Dialect):
            dialects.register(found)
        if isinstance(speaks := getattr(module, "CLIENT_DIALECT", None), client_dialects.ClientDialect):
            client_dialects.register(speaks)  # a client side of its own (addon/serve/client_side.py)
        loaded.append(name.strip())
    return loaded


def settings(options: Any, environ: Mapping[str, str] = os.environ) -> dict[str, Settings]:
    """Each dialect's settings: the values of its options in `options` (mitmproxy's, or any
    object with those attributes) and the environment variables it declared."""
    out = {}
    for found in dialects.every():
        values = {o.name: getattr(options, o.name) for o in found.options if hasattr(options, o.name)}
        declared = {n: environ[n] for n in found.environ if n in environ}
        out[found.name] = Settings(options=values, environ=declared)
    return out


def passes_through(upstream: Dialect | str, client: str = client_dialects.DEFAULT) -> bool:
    """The upstream (a route's `Dialect`, or a saved translation's dialect name) speaks this
    client's own dialect (and keeps its own state); another client reaches it through the IR
    (translators/dialect.py `passes_through`)."""
    found = dialects.find(upstream) if isinstance(upstream, str) else upstream
    return found is not None and dialects.passes_through(found, client_dialects.get(client).takes_passthrough)
