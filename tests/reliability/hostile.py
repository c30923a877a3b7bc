"""What the hostile-client tests share (issue 35; docs/reliability.md "Hostile clients"): a team
gateway (client keys, the SQLite store) through real mitmdump, in reverse mode before a local
target that records what reaches it, routed to a local Anthropic upstream; the proxy's memory and
descriptors read from /proc; a raw client that counts what it sent before it was answered.

Nothing here measures time: a test waits on a condition (`tests/support/wait.until`) and asserts
what was sent, kept or answered.
"""

from __future__ import annotations

import json
import select
import socket
import ssl
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from addon.team import clients_file as keys
from tests.addon.e2e.upstream import Upstream
from tests.support.mitmdump import MitmDump

MiB = 1024 * 1024
KEY = keys.KEY_PREFIX + "ana-hostile-e2e-0123456789abcdef"
"""The one client's key."""
UPSTREAM_KEY = "sk-ant-hostile-operator-0123456789"
MATCH = ("/v1/responses", "/v1/messages", "/v1/messages/count_tokens")
"""gateway_match on any host: the reverse target is local, not api.openai.com."""


def clients_file(path: Path) -> Path:
    path.write_text(keys.table(keys.Client("ana", keys.hash_key(KEY))), encoding="utf-8")
    return path


def team(tmp: Path, target: Upstream, upstream: Upstream, *, mode: str | None = None,
         options: Mapping[str, str] | None = None, match: Sequence[str] = MATCH,
         env: Mapping[str, str] | None = None) -> MitmDump:
    """mitmdump with the gateway and client keys; `target` is the reverse target (or, in regular
    mode, just a host on the network); turns go to `upstream` as Anthropic."""
    tmp.mkdir(parents=True, exist_ok=True)
    settings = {"gateway_clients": str(clients_file(tmp / "clients.toml")),
                "gateway_upstream": "anthropic", "gateway_base_url": upstream.url,
                "gateway_model": "claude-haiku-4-5", "gateway_key_env": "ANTHROPIC_API_KEY",
                "gateway_capabilities": "table", "gateway_store_path": str(tmp / "store.sqlite"),
                **(options or {})}
    args = [arg for pattern in match for arg in ("--set", f"gateway_match={pattern}")]
    return MitmDump(tmp / "conf", mode=mode or f"reverse:http://127.0.0.1:{target.port}", options=settings,
                    args=[*args, "-w", str(tmp / "flows.mitm")],
                    env={"ANTHROPIC_API_KEY": UPSTREAM_KEY, **(env or {})})


def status_of(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a process, in KiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0])
    return found


def rss_mib(pid: int) -> float:
    return status_of(pid)["VmRSS"] / 1024


def descriptors(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def turn_body(model: str = "gpt-5.5", text: str = "hi", **more: Any) -> bytes:
    return json.dumps({"model": model, "input": text, "stream": True, **more}).encode()


def connect(port: int, source: str = "127.0.0.1", timeout: float = 30) -> socket.socket:
    """A TCP connection to the proxy from `source` (any 127.0.0.0/8 address: Linux routes them all
    to loopback, so a test can be several clients)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0))
    return sock


def answered(sock: socket.socket) -> bytes:
    """Whatever the proxy has sent so far, without waiting (b"" when nothing; the connection may
    have been closed after it)."""
    out = b""
    while select.select([sock], [], [], 0)[0]:
        try:
            chunk = sock.recv(65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    return out


def post_until_answered(port: int, path: str, headers: Mapping[str, str], total: int,
                        chunk: int = MiB) -> tuple[bytes, int]:
    """POST `total` bytes of chunked body to `path`, `chunk` by chunk, stopping as soon as the proxy
    answers or stops reading; (the answer's first bytes, the body bytes sent before it came)."""
    sock = connect(port)
    head = [f"POST {path} HTTP/1.1", "Host: gateway.test", "Content-Type: application/json",
            "Transfer-Encoding: chunked", *(f"{k}: {v}" for k, v in headers.items())]
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
    piece = b"%x\r\n%s\r\n" % (chunk, b"x" * chunk)
    sent, got = 0, b""
    try:
        while sent < total and not got:
            sock.sendall(piece)
            sent += chunk
            got = answered(sock)
        if not got:
            sock.sendall(b"0\r\n\r\n")
    except OSError:
        pass  # the proxy stopped reading (it answered and closed)
    sock.settimeout(60)
    try:
        while b"\r\n\r\n" not in got and (more := sock.recv(65536)):
            got += more
    except OSError:
        pass
    sock.close()
    return got, sent


def tls_context() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context
