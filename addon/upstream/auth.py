"""Upstream credentials. They come from the environment (or the credential source a signing dialect
brings, `Signing.source`), never from the flow: the client's own key, account headers and cookies are removed
before a request leaves for another vendor. Which variable a route reads is `routing.key_env_for`;
where a key goes, which headers are secret and how a request is signed is the dialect's to say
(translators/dialect.py); the headers built here go on the wire only (`addon/upstream/credentials.py`),
never into the flow."""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from addon.serve import client_facts
from addon.upstream import credentials
from translators import dialect as dialects
from translators.dialect import Dialect, Settings, ToSign


def clean_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() in client_facts.KEEP}


def takes_client_credentials(dialect: Dialect, base_url: str) -> bool:
    """Only the client's own vendor's hosts (`Vendor.client_credentials_hosts`), over HTTPS, may
    see the client's own key and account headers."""
    hosts = dialect.vendor.client_credentials_hosts
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    return parts.scheme == "https" and any(host == h or host.endswith("." + h) for h in hosts)


def client_credentials(headers: dict[str, str]) -> dict[str, str]:
    """Take the client's own credentials out of `headers` (a passthrough route to the client's own
    vendor that names no key: they go along, on the wire only)."""
    return {name: headers.pop(name) for name in list(headers) if name.lower() in client_facts.CREDENTIALS}


def upstream_credentials(route: Any, headers: dict[str, str], url: str, content: bytes,
                         settings: Mapping[str, Settings] | None = None,
                         now: Callable[[], datetime.datetime] | None = None
                         ) -> tuple[dict[str, str], str | None]:
    """The credential headers of one upstream request, and a note when the route's key is
    missing. `headers` (the request's other headers) loses the client's credentials if the
    route replaces them, and gains what a signature adds besides them (e.g. a date)."""
    found = route.dialect
    key = read_key(route.key_env) if route.key_env else None
    note = f"no upstream key: ${route.key_env} is not set" if route.key_env and key is None else None
    if found.signing is not None:
        # signed last, over the final URL, headers and body bytes; nothing changes after. No
        # key: the dialect's credential source (a signature, never the secret itself), whatever the host
        identity = found.signing.source.find() if key is None else None
        clock = now or (lambda: datetime.datetime.now(datetime.UTC))
        signed = found.signing.sign(ToSign("POST", url, headers, content, key, identity,
                                           (settings or {}).get(found.name) or Settings(), clock()))
        headers.update(signed.headers)
        return signed.secret, None  # no bearer key: the credential source signed it
    if takes_client_credentials(found, route.base_url):
        own = client_credentials(headers)
        if key is None and route.key_env is None:
            return own, None  # the client's own account, as it would reach its vendor without us
    return key_headers(found, key), note


def key_headers(dialect: Dialect, key: str | None) -> dict[str, str]:
    """Where the dialect wants its key (`Vendor.key_headers`)."""
    if not key:
        return {}
    return dialect.vendor.key_headers(key)


def read_key(env_name: str) -> str | None:
    value = os.environ.get(env_name, "").strip()
    return value or None


def secret_headers() -> frozenset[str]:
    """Every request header that may carry a credential: each dialect's, and the client's own."""
    names = {name.lower() for found in dialects.every() for name in found.vendor.secret_headers}
    return frozenset(names | set(client_facts.CREDENTIALS))


_REDACTED = credentials.PLACEHOLDER.encode()


def redact_request(headers: Any) -> None:
    """Before a flow is saved (`-w` writes after the addon's `response` hook): no key on disk.
    Each secret field's value is replaced where it stands. Read from the fields in one pass:
    `Headers.keys()` looks each name up again through every field (~30 us a request, most of
    the step, docs/benchmarks.md "The fixed cost of a turn")."""
    secret = secret_headers()
    fields = headers.fields
    redacted = tuple((name, _REDACTED) if name.decode("utf-8", "surrogateescape").lower() in secret
                     else (name, value) for name, value in fields)
    if redacted != fields:
        headers.fields = redacted
