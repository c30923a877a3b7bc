"""Captures: a saved Codex turn and the upstream's raw answer, redacted, replayable offline.

A capture folder holds `capture.json` (dialect, model, base URL, file names), `request.json` (the
client's Responses body) and the upstream's own answer bytes. The same folder drives
`python -m translators capture DIR` and `python -m addon replay DIR` (through mitmdump).
"""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import re
from pathlib import Path
from typing import Any

from mitmproxy import http

from addon.observe import flowinfo
from addon.upstream import credentials
from translators import client_dialects
from translators import dialect as dialects

# Values that identify a user or a machine, not what the model sees.
_REDACT_KEYS = {"client_metadata", "prompt_cache_key", "safety_identifier", "user"}
KEY_NAMED = ("*_API_KEY", "*_KEY", "*_TOKEN")
"""Environment variables named like a credential, whoever's; each dialect adds its own
(`Vendor.key_env`, `Vendor.secret_env`)."""


def _keylike() -> re.Pattern[str]:
    """Strings shaped like a key of any registered dialect's vendor (`Vendor.key_shapes`: OpenAI
    and Anthropic `sk-...`, AWS access key ids, Google `AIza...`), starting a word: `sk-` inside a
    word is no key (Claude Code's prompt names `<task-notification>`)."""
    shapes = tuple(dict.fromkeys(s for d in dialects.every() for s in d.vendor.key_shapes))
    return _compiled(shapes)


@functools.lru_cache(maxsize=8)
def _compiled(shapes: tuple[str, ...]) -> re.Pattern[str]:
    if not shapes:
        return re.compile(r"(?!)")  # matches nothing
    return re.compile(r"(?<![A-Za-z0-9_-])(" + "|".join(shapes) + ")")


def redact_request(body: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in body.items() if k not in _REDACT_KEYS}
    if "prompt_cache_key" in body:
        out["prompt_cache_key"] = "redacted"
    return out


def scrub(data: bytes, secrets: list[str]) -> bytes:
    """Remove every known secret value and anything shaped like an API key."""
    for secret in secrets:
        if secret:
            data = data.replace(secret.encode(), b"<redacted>")
    text = _keylike().sub("<redacted>", data.decode("utf-8", "surrogateescape"))
    return text.encode("utf-8", "surrogateescape")


def known_secrets() -> list[str]:
    """The values of the environment's credentials (`KEY_NAMED`, and each dialect's variables)."""
    patterns = list(KEY_NAMED)
    for found in dialects.every():
        patterns += [*found.vendor.secret_env, *([found.vendor.key_env] if found.vendor.key_env else [])]
    names = [n for n in os.environ if any(fnmatch.fnmatchcase(n, p) for p in patterns)]
    return [os.environ[n] for n in names if len(os.environ[n]) >= 8]


def save(root: Path, flow: http.HTTPFlow) -> Path | None:
    """`write`, and a capture that cannot be written is a note on the flow, not an exception
    (which would cost the flow its comment and mark, set after this)."""
    try:
        return write(root, flow)
    except (OSError, ValueError) as exc:
        info = flow.metadata.get(flowinfo.KEY)
        if isinstance(info, dict):
            info.setdefault("notes", []).append(f"capture not written to {root}: {exc}")
        return None


def write(root: Path, flow: http.HTTPFlow) -> Path | None:
    """Files 0600 in folders 0700: a capture holds the whole conversation."""
    info = flow.metadata.get(flowinfo.KEY)
    translation = flow.metadata.get(flowinfo.TRANSLATION)
    raw = flow.metadata.get(flowinfo.UPSTREAM_RESPONSE)
    client = flow.metadata.get(flowinfo.CLIENT_REQUEST)
    if not info or not translation or raw is None or not client or flow.response is None:
        return None
    secrets = [*credentials.secrets_of(flow), *known_secrets()]  # what was sent, exactly, first
    folder = root / f"{int(flow.timestamp_created * 1000)}-{info['upstream']}-{flow.id[:8]}"
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.mkdir(mode=0o700, exist_ok=True)
    folder.chmod(0o700)  # mkdir's mode is cut by the umask
    speaks = client_dialects.get(translation.get("client") or client_dialects.DEFAULT)
    body = {k: v for k, v in redact_request(json.loads(client)).items() if k not in speaks.private}
    found = dialects.find(info["upstream"])
    upstream_name = f"upstream.{found.vendor.capture_suffix if found else 'body'}"  # the dialect's own suffix
    _private(folder / "request.json", scrub(json.dumps(body, indent=1).encode(), secrets))
    _private(folder / upstream_name, scrub(raw, secrets))
    base_url = info.get("url", "")[: -len(translation["path"])] if info.get("url") else ""
    meta = {"dialect": info["upstream"], "model": translation["model"], "base_url": base_url,
            "request": "request.json", "upstream": upstream_name, "status": flow.response.status_code,
            "client": speaks.name,
            "content_type": flow.response.headers.get("content-type", "")}
    _private(folder / "capture.json", json.dumps(meta, indent=1).encode())
    return folder


def _private(path: Path, data: bytes) -> None:
    """Written readable by its owner only, from the first byte on."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its old mode through O_CREAT
    with os.fdopen(fd, "wb") as f:
        f.write(data)
