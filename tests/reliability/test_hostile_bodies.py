"""Issue 35, case 3, through real mitmdump: an answer known from the request's head (no key, a body
past the bound) goes out at once, and the body is never read (addon/patches/early_answer.py).

Before: mitmproxy read the whole body first (a 1,000 MiB keyless POST took the proxy from 3.8 to
6.7 GB); an `Expect: 100-continue` client was even asked for it; a keyed chunked body past
`gateway_max_request_bytes` was read whole before its 413."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.addon.e2e.upstream import Upstream
from tests.reliability.hostile import KEY, MiB, connect, post_until_answered, rss_mib, team, turn_body
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(180)
BOUND = 4 * MiB
"""gateway_max_request_bytes of this module's proxy."""
SENT = 256 * MiB
"""What a client tries to send; the proxy must answer long before."""


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture(scope="module")
def target() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory, target: Upstream,
          upstream: Upstream) -> Iterator[MitmDump]:
    tmp = tmp_path_factory.mktemp("bodies")
    with team(tmp, target, upstream, options={"gateway_max_request_bytes": str(BOUND)}) as proxy:
        yield proxy


@pytest.mark.parametrize("path", ["/v1/responses", "/v1/messages", "//v1/Responses/", "/v1/conversations"])
def test_a_keyless_body_is_answered_401_before_it_is_read(proxy: MitmDump, target: Upstream,
                                                          path: str) -> None:
    before = rss_mib(proxy.pid)
    answer, sent = post_until_answered(proxy.port, path, {}, SENT)
    assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]
    assert sent < 64 * MiB, f"the client sent {sent // MiB} MiB before its 401: the body was read"
    assert rss_mib(proxy.pid) - before < 64, "the proxy kept the body it never needed"
    assert target.received == []


def test_a_keyed_chunked_body_past_the_bound_is_413_as_it_arrives(proxy: MitmDump,
                                                                  upstream: Upstream) -> None:
    before = rss_mib(proxy.pid)
    answer, sent = post_until_answered(proxy.port, "/v1/responses", {"Authorization": f"Bearer {KEY}"}, SENT)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert b"request_too_large" in answer
    assert sent < 64 * MiB, f"the client sent {sent // MiB} MiB before its 413"
    assert rss_mib(proxy.pid) - before < 64
    assert upstream.received == []


def test_an_expect_100_continue_client_gets_the_answer_not_a_continue(proxy: MitmDump) -> None:
    sock = connect(proxy.port)
    sock.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 3000000\r\nExpect: 100-continue\r\n\r\n")
    first = sock.recv(65536)
    sock.close()
    assert first.startswith(b"HTTP/1.1 401 "), first[:100]


def test_over_http2_the_answer_comes_and_the_stream_is_reset(proxy: MitmDump) -> None:
    before = rss_mib(proxy.pid)
    command = (f"head -c {SENT} /dev/zero | curl -sk --http2 -o - -w '\\n%{{http_code}} %{{http_version}}' "
               "-H 'content-type: application/json' -H 'transfer-encoding: chunked' --data-binary @- "
               f"https://127.0.0.1:{proxy.port}/v1/responses")
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=120)
    assert done.stdout.endswith("401 2"), (done.stdout[-300:], done.stderr[-300:])
    assert rss_mib(proxy.pid) - before < 64


@pytest.mark.parametrize("key", [None, KEY])
def test_a_body_with_trailer_fields_is_answered_and_writes_no_traceback(proxy: MitmDump,
                                                                        key: str | None) -> None:
    """mitmproxy raised NotImplementedError at a chunked body's trailer fields: a traceback in the log
    per request, whoever sent it, and no answer. They are dropped (RFC 9112 7.1.2)."""
    sock = connect(proxy.port)
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    body = turn_body()
    sock.sendall(f"POST /v1/responses HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: application/json\r\n"
                 f"Transfer-Encoding: chunked\r\n{auth}\r\n".encode()
                 + b"%x\r\n%s\r\n0\r\nX-Checksum: 1\r\n\r\n" % (len(body), body))
    first = sock.recv(65536)
    sock.close()
    assert first.startswith(b"HTTP/1.1 200 " if key else b"HTTP/1.1 401 "), first[:100]
    assert "Traceback" not in proxy.log and "crashed" not in proxy.log


def test_the_proxy_serves_the_next_turn(proxy: MitmDump, upstream: Upstream, tmp_path: Path) -> None:
    before = len(upstream.received)
    answer = httpx.post(f"{proxy.url}/v1/responses", content=turn_body(),
                        headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"},
                        timeout=30)
    assert answer.status_code == 200
    assert "response.completed" in answer.text
    assert len(upstream.received) == before + 1
