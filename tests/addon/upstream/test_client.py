"""addon/upstream/client.py against local servers: bodies whole and chunked, keep-alive reuse, TLS
with and without verification, and every way an upstream fails an exchange."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import socket
import ssl
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from addon.upstream.client import Client
from addon.upstream.connect import BodyTooLarge, Broken, ConnectFailed, HeadTooLarge, Proxy
from tests.support.loopback_http import Loopback, Received, RecordingHandler
from tests.support.strict import Strictness


class Scripted(Loopback[Callable[[RecordingHandler, Received], None]]):
    """Answers each request with the next planned writer (default: 200 "ok"), and records the
    client's address of each request: the same address twice is one kept connection."""

    def __init__(self) -> None:
        super().__init__()
        self.peers: list[tuple[str, int]] = []
        # tests of the HTTP client's own framing: any body goes, whatever the path
        self.strictness = Strictness(enabled=False)

    def answer(self, handler: RecordingHandler, received: Received) -> None:
        with self.lock:
            self.peers.append(handler.client_address)
        plan = self.next_plan() or (lambda h, _r: h.send_whole(200, {"content-type": "text/plain"}, b"ok"))
        plan(handler, received)


def run[T](scenario: Callable[[Client], Awaitable[T]], **options: Any) -> T:
    async def main() -> T:
        client = Client(**options)
        try:
            return await scenario(client)
        finally:
            await client.close()

    return asyncio.run(asyncio.wait_for(main(), 30))


@pytest.fixture
def up() -> Iterator[Scripted]:
    with Scripted() as server:
        yield server


def test_a_whole_body_is_read_and_the_request_carries_host_length_and_identity(up: Scripted) -> None:
    async def scenario(client: Client) -> tuple[int, bytes, str | None]:
        response = await client.send("POST", f"{up.url}/v1/messages?beta=true",
                                     {"content-type": "application/json", "accept-encoding": "gzip"},
                                     b'{"a": 1}')
        return response.status, await response.read(1 << 20), response.header("Content-Type")

    assert run(scenario) == (200, b"ok", "text/plain")
    [request] = up.received
    assert (request.method, request.path, request.body) == ("POST", "/v1/messages?beta=true", b'{"a": 1}')
    assert request.header("host") == f"127.0.0.1:{up.port}"
    assert request.header("content-length") == "8"
    assert request.header("accept-encoding") == "identity"


def test_a_chunked_body_arrives_chunk_by_chunk(up: Scripted) -> None:
    def chunks(handler: RecordingHandler, _received: Received) -> None:
        handler.start_chunked(200, {"content-type": "text/event-stream"})
        for part in (b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n"):
            handler.send_chunk(part)
        handler.end_chunked()

    up.plan(chunks)

    async def scenario(client: Client) -> list[bytes]:
        response = await client.send("POST", up.url, {}, b"{}")
        return [chunk async for chunk in response]

    assert b"".join(run(scenario)) == b"data: 1\n\ndata: 2\n\ndata: 3\n\n"


def test_chunks_that_arrive_in_one_read_are_one_piece_and_the_end_after_them_is_kept(up: Scripted) -> None:
    def at_once(handler: RecordingHandler, _received: Received) -> None:
        handler.start_chunked(200, {"content-type": "text/event-stream"})
        handler.wfile.write(b"9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n9\r\ndata: 3\n\n\r\n0\r\n\r\n")
        handler.wfile.flush()

    up.plan(at_once)

    async def scenario(client: Client) -> tuple[list[bytes | None], bool]:
        response = await client.send("POST", up.url, {}, b"{}")
        await asyncio.sleep(0.2)  # the whole body is in the socket before the first read
        got = [await response.next_chunk(), await response.next_chunk(), await response.next_chunk()]
        return got, response.complete

    got, complete = run(scenario)
    assert got == [b"data: 1\n\ndata: 2\n\ndata: 3\n\n", None, None] and complete

def test_a_connection_read_to_its_end_is_kept_and_used_again(up: Scripted) -> None:
    async def scenario(client: Client) -> tuple[int, list[bool]]:
        reused = []
        for _ in range(3):
            response = await client.send("POST", up.url, {}, b"{}")
            await response.read(1024)
            reused.append(response.reused)
        return client.opened, reused

    assert run(scenario) == (1, [False, True, True])
    assert len(set(up.peers)) == 1


def test_a_connection_left_half_read_is_closed_not_kept(up: Scripted) -> None:
    def slow(handler: RecordingHandler, _received: Received) -> None:
        handler.start_chunked(200, {})
        handler.send_chunk(b"first")
        handler.send_chunk(b"second")
        handler.end_chunked()

    up.plan(slow)

    async def scenario(client: Client) -> int:
        response = await client.send("POST", up.url, {}, b"{}")
        await response.next_chunk()
        await response.aclose()
        await (await client.send("POST", up.url, {}, b"{}")).read(1024)
        return client.opened

    assert run(scenario) == 2


def _chunked_answer(headers: dict[str, str]) -> Callable[[RecordingHandler, Received], None]:
    def chunks(handler: RecordingHandler, _received: Received) -> None:
        handler.start_chunked(200, {"content-type": "text/event-stream", **headers})
        handler.send_chunk(b"data: 1\n\n")
        handler.wfile.write(b"9;ext=1\r\ndata: 2\n\n\r\n0\r\nx-trailer: yes\r\n\r\n")
        handler.wfile.flush()

    return chunks


def test_a_connection_whose_chunked_answer_was_read_to_its_end_is_used_again(up: Scripted) -> None:
    # a chunked body is read without h11 (addon/upstream/chunked.py): the connection is still kept
    up.plan(_chunked_answer({}), _chunked_answer({}))

    async def scenario(client: Client) -> tuple[list[bytes], int, list[bool]]:
        bodies, reused = [], []
        for _ in range(3):
            response = await client.send("POST", up.url, {}, b"{}")
            bodies.append(await response.read(1024))
            reused.append(response.reused)
        return bodies, client.opened, reused

    assert run(scenario) == ([b"data: 1\n\ndata: 2\n\n"] * 2 + [b"ok"], 1, [False, True, True])
    assert len(set(up.peers)) == 1


def test_a_chunked_answer_that_says_connection_close_is_not_kept(up: Scripted) -> None:
    up.plan(_chunked_answer({"connection": "close"}))

    async def scenario(client: Client) -> tuple[bytes, int]:
        first = await (await client.send("POST", up.url, {}, b"{}")).read(1024)
        await (await client.send("POST", up.url, {}, b"{}")).read(1024)
        return first, client.opened

    assert run(scenario) == (b"data: 1\n\ndata: 2\n\n", 2)


def test_a_chunked_answer_with_bytes_past_its_end_is_not_kept(up: Scripted) -> None:
    def extra(handler: RecordingHandler, _received: Received) -> None:
        handler.start_chunked(200, {"content-type": "text/event-stream"})
        handler.send_chunk(b"data: 1\n\n")
        # the body's end and an answer nobody asked for in one write: whenever the client reads
        # the end, the stray bytes are there with it (no race with the server's thread)
        handler.wfile.write(b"9\r\ndata: 2\n\n\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n")
        handler.wfile.flush()

    up.plan(extra)

    async def scenario(client: Client) -> tuple[bytes, int]:
        response = await client.send("POST", up.url, {}, b"{}")
        first = await response.read(1024)
        await (await client.send("POST", up.url, {}, b"{}")).read(1024)
        return first, client.opened

    assert run(scenario) == (b"data: 1\n\ndata: 2\n\n", 2)


def test_a_malformed_chunk_is_broken(up: Scripted) -> None:
    def bad(handler: RecordingHandler, _received: Received) -> None:
        handler.start_chunked(200, {})
        handler.wfile.write(b"3\r\nabcXY")
        handler.wfile.flush()

    up.plan(bad)

    async def scenario(client: Client) -> bytes:
        return await (await client.send("POST", up.url, {}, b"{}")).read(1024)

    with pytest.raises(Broken, match="broke off its answer: malformed chunk footer"):
        run(scenario)


def test_a_kept_connection_the_server_closed_meanwhile_is_replaced(up: Scripted) -> None:
    def once(handler: RecordingHandler, _received: Received) -> None:
        handler.send_whole(200, {}, b"ok")
        handler.close_connection = True  # closed after the answer, without saying so

    up.plan(once)

    async def scenario(client: Client) -> tuple[bytes, int]:
        await (await client.send("POST", up.url, {}, b"{}")).read(1024)
        second = await client.send("POST", up.url, {}, b"{}")
        return await second.read(1024), client.opened

    assert run(scenario) == (b"ok", 2)
    assert len(up.received) == 2


def test_a_connection_idle_past_keep_idle_is_not_used_again(up: Scripted) -> None:
    now = [0.0]

    async def scenario(client: Client) -> int:
        await (await client.send("POST", up.url, {}, b"{}")).read(1024)
        now[0] += 31
        await (await client.send("POST", up.url, {}, b"{}")).read(1024)
        return client.opened

    assert run(scenario, keep_idle=30, clock=lambda: now[0]) == 2


def test_idle_connections_per_origin_are_bounded(up: Scripted) -> None:
    async def scenario(client: Client) -> int:
        responses = [await client.send("POST", up.url, {}, b"{}") for _ in range(4)]
        for response in responses:
            await response.read(1024)
        return sum(len(idle) for idle in client._idle.values())

    assert run(scenario, per_origin=2) == 2


def test_a_refused_connection_is_connect_failed(dead_url: str) -> None:
    async def scenario(client: Client) -> None:
        await client.send("POST", dead_url, {}, b"{}")

    with pytest.raises(ConnectFailed, match=r"cannot reach 127\.0\.0\.1"):
        run(scenario)


def test_a_connect_that_never_completes_is_connect_failed_at_the_timeout() -> None:
    # a listener whose backlog is full and never accepts: the SYN waits unanswered
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    fillers = []
    try:
        for _ in range(8):
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(listener.getsockname())
            fillers.append(filler)

        async def scenario(client: Client) -> None:
            await client.send("POST", f"http://127.0.0.1:{listener.getsockname()[1]}", {}, b"{}")

        with pytest.raises(ConnectFailed):
            run(scenario, connect_timeout=0.2)
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def test_a_server_that_dies_mid_body_is_broken(up: Scripted) -> None:
    def dies(handler: RecordingHandler, _received: Received) -> None:
        handler.send_head(200, {"content-length": "100"})
        handler.wfile.write(b"only ten b")
        handler.drop()

    up.plan(dies)

    async def scenario(client: Client) -> bytes:
        return await (await client.send("POST", up.url, {}, b"{}")).read(1 << 20)

    with pytest.raises(Broken, match="broke off"):
        run(scenario)


def test_a_chunked_stream_cut_mid_chunk_is_broken_after_what_came(up: Scripted) -> None:
    def dies(handler: RecordingHandler, _received: Received) -> None:
        handler.start_chunked(200, {})
        handler.send_chunk(b"data: 1\n\n")
        handler.wfile.write(b"20\r\nhalf a chunk")
        handler.drop(reset=True)

    up.plan(dies)

    async def scenario(client: Client) -> list[bytes]:
        got: list[bytes] = []
        response = await client.send("POST", up.url, {}, b"{}")
        with pytest.raises(Broken):
            while (chunk := await response.next_chunk()) is not None:
                got.append(chunk)
        return got

    assert b"".join(run(scenario)).startswith(b"data: 1\n\n")


def test_a_server_that_closes_before_answering_is_broken(up: Scripted) -> None:
    up.plan(lambda handler, _received: handler.drop())

    async def scenario(client: Client) -> None:
        await client.send("POST", up.url, {}, b"{}")

    with pytest.raises(Broken, match="closed the connection before its answer"):
        run(scenario)


def test_a_head_that_never_ends_is_refused_at_its_bound(up: Scripted) -> None:
    def endless(handler: RecordingHandler, _received: Received) -> None:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
        for n in range(10_000):
            handler.wfile.write(b"x-filler-%d: %s\r\n" % (n, b"y" * 100))
        handler.drop()

    up.plan(endless)

    async def scenario(client: Client) -> None:
        await client.send("POST", up.url, {}, b"{}")

    with pytest.raises(HeadTooLarge, match="4096 bytes"):
        run(scenario, max_head=4096)


def test_a_head_that_stalls_is_the_callers_timeout_and_the_connection_is_closed(up: Scripted) -> None:
    release = threading.Event()

    def stalls(handler: RecordingHandler, _received: Received) -> None:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
        handler.wfile.flush()
        release.wait(10)

    up.plan(stalls)

    async def scenario(client: Client) -> int:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await client.send("POST", up.url, {}, b"{}")
        release.set()
        await (await client.send("POST", up.url, {}, b"{}")).read(1024)
        return client.opened

    assert run(scenario) == 2  # the stalled connection was not kept


def test_a_body_past_the_callers_bound_is_refused(up: Scripted) -> None:
    up.plan(lambda handler, _received: handler.send_whole(200, {}, b"x" * 5000))

    async def scenario(client: Client) -> bytes:
        return await (await client.send("POST", up.url, {}, b"{}")).read(4096)

    with pytest.raises(BodyTooLarge, match="4096"):
        run(scenario)


def test_a_read_cancelled_mid_body_closes_the_connection(up: Scripted) -> None:
    release = threading.Event()

    def stalls(handler: RecordingHandler, _received: Received) -> None:
        handler.start_chunked(200, {})
        handler.send_chunk(b"first")
        release.wait(10)
        handler.drop()

    up.plan(stalls)

    async def scenario(client: Client) -> int:
        response = await client.send("POST", up.url, {}, b"{}")
        assert await response.next_chunk() == b"first"
        task = asyncio.create_task(response.next_chunk())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        assert await response.next_chunk() is None  # closed: nothing more is read
        await (await client.send("POST", up.url, {}, b"{}")).read(1024)
        return client.opened

    assert run(scenario) == 2


# -- TLS ---------------------------------------------------------------------------------------
def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test upstream")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@pytest.fixture
def tls_up(tmp_path: Path) -> Iterator[tuple[Scripted, Path]]:
    cert, key = _self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = Scripted()
    # the test server speaks TLS: its listening socket wrapped before it serves (handshake in the
    # handler's thread, on its first read)
    server._server.socket = context.wrap_socket(server._server.socket, server_side=True,
                                                do_handshake_on_connect=False)
    with server:
        yield server, cert


def test_tls_to_a_self_signed_upstream_is_refused_by_default(tls_up: tuple[Scripted, Path]) -> None:
    server, _ = tls_up

    async def scenario(client: Client) -> None:
        await client.send("POST", f"https://127.0.0.1:{server.port}/v1", {}, b"{}")

    with pytest.raises(ConnectFailed, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
        run(scenario)


def test_tls_to_a_self_signed_upstream_works_insecure(tls_up: tuple[Scripted, Path]) -> None:
    server, _ = tls_up

    async def scenario(client: Client) -> bytes:
        return await (await client.send("POST", f"https://127.0.0.1:{server.port}/v1", {}, b"{}")).read(1024)

    assert run(scenario, insecure=True) == b"ok"
    assert server.received[0].header("host") == f"127.0.0.1:{server.port}"


def test_tls_trusts_a_ca_file_the_operator_names(tls_up: tuple[Scripted, Path]) -> None:
    server, cert = tls_up

    async def scenario(client: Client) -> bytes:
        return await (await client.send("POST", f"https://localhost:{server.port}/v1", {}, b"{}")).read(1024)

    assert run(scenario, cafile=str(cert)) == b"ok"


def test_configure_switches_tls_and_drops_the_kept_connections(tls_up: tuple[Scripted, Path]) -> None:
    server, _ = tls_up
    url = f"https://127.0.0.1:{server.port}/v1"

    async def scenario(client: Client) -> None:
        await (await client.send("POST", url, {}, b"{}")).read(1024)
        client.configure(insecure=False)
        await client.send("POST", url, {}, b"{}")

    with pytest.raises(ConnectFailed):
        run(scenario, insecure=True)


# -- through an HTTP proxy (mitmproxy's `upstream:` mode) -------------------------------------------
class ForwardProxy:
    """An HTTP proxy as RFC 9110 §9.3.6 and §7.1 describe one: `CONNECT host:port` opens a tunnel
    (200, then bytes both ways), an absolute-form request is forwarded to its origin in origin
    form; without the right `proxy-authorization` it answers 407 (RFC 9110 §15.5.8). What it was
    asked is kept: (method, target, whether the credentials came)."""

    def __init__(self, authorization: str | None = None) -> None:
        self.authorization = authorization
        self.asked: list[tuple[str, str, bool]] = []
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> ForwardProxy:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *_exc: object) -> None:
        assert self.server is not None
        self.server.close()

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            line, *fields = head.decode("latin-1").split("\r\n")
            method, target, _ = line.split(" ", 2)
            headers = dict(f.split(": ", 1) for f in fields if ": " in f)
            lowered = {k.lower(): v for k, v in headers.items()}
            given = lowered.get("proxy-authorization")
            authorized = self.authorization is None or given == self.authorization
            self.asked.append((method, target, "proxy-authorization" in lowered))
            if not authorized:
                writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                             b"proxy-authenticate: Basic\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
                return
            if method == "CONNECT":
                host, port = target.rsplit(":", 1)
                up_reader, up_writer = await asyncio.open_connection(host, int(port))
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                rest = target.split("://", 1)[1]
                authority, _, path = rest.partition("/")
                host, port = authority.rsplit(":", 1)
                up_reader, up_writer = await asyncio.open_connection(host, int(port))
                kept = [f for f in fields if f and not f.lower().startswith("proxy-")]
                head = "\r\n".join([f"{method} /{path} HTTP/1.1", *kept]) + "\r\n\r\n"
                up_writer.write(head.encode("latin-1"))
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()


AUTH = "Basic dXNlcjpzZWNyZXQ="


def test_an_http_origin_through_a_proxy_is_asked_in_absolute_form_with_the_proxys_credentials(
        up: Scripted) -> None:
    async def scenario(client: Client) -> tuple[bytes, list[tuple[str, str, bool]]]:
        async with ForwardProxy(AUTH) as proxy:
            via = Proxy("http", "127.0.0.1", proxy.port, AUTH)
            answer = await client.send("POST", f"{up.url}/v1/messages", {}, b"{}", via)
            return await answer.read(1024), proxy.asked

    body, asked = run(scenario)
    assert body == b"ok"
    assert asked == [("POST", f"http://127.0.0.1:{up.port}/v1/messages", True)]
    assert [r.path for r in up.received] == ["/v1/messages"]
    assert not up.received[0].header("proxy-authorization")  # the proxy's only


def test_an_https_origin_through_a_proxy_goes_through_a_tunnel_with_tls_inside(
        tls_up: tuple[Scripted, Path]) -> None:
    server, cert = tls_up

    async def scenario(client: Client) -> tuple[bytes, list[tuple[str, str, bool]]]:
        async with ForwardProxy(AUTH) as proxy:
            via = Proxy("http", "127.0.0.1", proxy.port, AUTH)
            url = f"https://localhost:{server.port}/v1/messages"
            return await (await client.send("POST", url, {}, b"{}", via)).read(1024), proxy.asked

    body, asked = run(scenario, cafile=str(cert))
    assert body == b"ok"
    assert asked == [("CONNECT", f"localhost:{server.port}", True)]
    assert not server.received[0].header("proxy-authorization")  # inside the tunnel: not sent


def test_a_proxy_that_refuses_the_credentials_is_a_failed_connect_that_names_it_not_them(
        tls_up: tuple[Scripted, Path]) -> None:
    server, cert = tls_up

    async def scenario(client: Client) -> None:
        async with ForwardProxy("Basic b3RoZXI6b3RoZXI=") as proxy:
            via = Proxy("http", "127.0.0.1", proxy.port, AUTH)
            await client.send("POST", f"https://localhost:{server.port}/v1", {}, b"{}", via)

    refused = (r"cannot reach localhost:\d+ through the proxy 127\.0\.0\.1:\d+: "
               r"the proxy refused the tunnel: .*407")
    with pytest.raises(ConnectFailed, match=refused) as failed:
        run(scenario, cafile=str(cert))
    assert "dXNlcjpzZWNyZXQ=" not in str(failed.value) and "dXNlcjpzZWNyZXQ=" not in repr(
        Proxy("http", "h", 1, AUTH))
    assert server.received == []
