"""Where the leg's client connects (docs/pools.md "The leg, for maintainers", "Through an upstream
proxy"): an upstream's origin, the HTTP proxy a flow's mode sends it through, the TLS context, the
`CONNECT` tunnel through that proxy, and how an exchange fails (the client's errors).
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import certifi

READ_SIZE = 64 * 1024


class ClientError(Exception):
    """Anything that ends an exchange without an answer the caller can read."""

    kind = "broken"


class ConnectFailed(ClientError):
    """No connection: refused, no such host, TLS handshake or certificate, connect timeout."""

    kind = "connect"


class HeadTooLarge(ClientError):
    kind = "head_too_large"


class BodyTooLarge(ClientError):
    kind = "body_too_large"


class Broken(ClientError):
    """The connection failed or the upstream broke the protocol after the request went out."""

    kind = "broken"


@dataclass(frozen=True, slots=True)
class Origin:
    scheme: str
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> tuple[Origin, str]:
        """The origin and the request target (path and query) of an absolute http(s) URL."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return cls(parts.scheme, parts.hostname, port), target

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class Proxy:
    """The HTTP proxy a leg's connections go through: mitmproxy's `upstream:` mode for the flow
    (`flow.server_conn.via`), with the `upstream_auth` option's credentials."""

    scheme: str
    host: str
    port: int
    authorization: str | None = field(default=None, repr=False)
    """The `proxy-authorization` value (`Basic ...`), sent to the proxy only, never shown."""

    @property
    def name(self) -> str:
        return f"{self.host}:{self.port}"


def tls_context(*, insecure: bool = False, cafile: str | None = None) -> ssl.SSLContext:
    """certifi's roots (and `cafile`'s), or no verification with `insecure`."""
    context = ssl.create_default_context(cafile=certifi.where())
    if cafile:
        context.load_verify_locations(cafile=cafile)
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["http/1.1"])
    return context


async def tunnel(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, origin: Origin, via: Proxy,
                  max_head: int) -> None:
    """`CONNECT` to the origin through the proxy; its answer's head read (a 2xx opens the
    tunnel; anything else, e.g. 407 without the right credentials, is a failed connect)."""
    authority = f"[{origin.host}]:{origin.port}" if ":" in origin.host else f"{origin.host}:{origin.port}"
    lines = [f"CONNECT {authority} HTTP/1.1", f"host: {authority}"]
    if via.authorization:
        lines.append(f"proxy-authorization: {via.authorization}")
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    await writer.drain()
    head = b""
    while b"\r\n\r\n" not in head:
        data = await reader.read(READ_SIZE)
        if not data:
            raise TunnelRefused("the proxy closed the connection before answering CONNECT")
        head += data
        if len(head) > max_head:
            raise TunnelRefused(f"the proxy's answer to CONNECT passed {max_head} bytes")
    status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].startswith("2"):
        raise TunnelRefused(f"the proxy refused the tunnel: {status_line[:200]}")
    if not head.endswith(b"\r\n\r\n"):
        raise TunnelRefused("the proxy sent bytes after its answer to CONNECT")


class TunnelRefused(Exception):
    """The proxy did not open the tunnel (why, in its words)."""
