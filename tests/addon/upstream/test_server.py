"""addon/upstream/server.py with a plain asyncio client speaking HTTP/1.1 (h11 on the client's side):
tickets, streamed and whole answers, kept connections, and a client that leaves. Each client test
runs over a socket and over the pipe mitmproxy reaches the server through in the gateway
(addon/patches/loopback_pipe.py; mitmproxy's end: tests/support/loopback_pipe.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import h11
import pytest

from addon.upstream.client import Client
from addon.upstream.runner import Reply, Runner
from addon.upstream.server import LoopbackServer, Tickets
from tests.addon.upstream.test_runner import deployment, leg_for
from tests.support import loopback_pipe
from tests.support.fake_upstream import FakeUpstream, anthropic_text, json_reply

THROUGH = ["socket", "pipe"]


class Plain:
    """One client connection: `request(path)` -> (status, headers, body chunks as they came)."""

    def __init__(self, reader: asyncio.StreamReader, writer: Any) -> None:
        self.reader, self.writer = reader, writer
        self.conn = h11.Connection(h11.CLIENT)

    @classmethod
    async def to(cls, server: LoopbackServer, through: str) -> Plain:
        if through == "pipe":
            return cls(*loopback_pipe.connect(server))
        return cls(*await asyncio.open_connection("127.0.0.1", server.port))

    async def send(self, path: str, body: bytes = b"") -> None:
        headers = [("host", "127.0.0.1"), ("content-length", str(len(body)))]
        self.writer.write(self.conn.send(h11.Request(method="POST", target=path, headers=headers)))
        if body:
            self.writer.write(self.conn.send(h11.Data(data=body)))
        self.writer.write(self.conn.send(h11.EndOfMessage()))
        await self.writer.drain()

    async def event(self) -> Any:
        while (event := self.conn.next_event()) is h11.NEED_DATA:
            self.conn.receive_data(await self.reader.read(65536))
        return event

    async def request(self, path: str, body: bytes = b"") -> tuple[int, dict[str, str], list[bytes]]:
        await self.send(path, body)
        head = await self.event()
        chunks = []
        while not isinstance(event := await self.event(), h11.EndOfMessage):
            chunks.append(bytes(event.data))
        self.conn.start_next_cycle()
        headers = {k.decode(): v.decode() for k, v in head.headers}
        return head.status_code, headers, chunks

    def close(self) -> None:
        self.writer.transport.abort()


def served(scenario: Callable[[LoopbackServer], Awaitable[Any]], **options: Any) -> Any:
    async def main() -> Any:
        server = LoopbackServer(**options)
        await server.start()
        try:
            return await scenario(server)
        finally:
            await server.close()

    return asyncio.run(asyncio.wait_for(main(), 30))


def whole(body: bytes, status: int = 200) -> Callable[[], Awaitable[Reply]]:
    async def answer() -> Reply:
        return Reply(status, [("content-type", "application/json")], body, "upstream")

    return answer


async def _chunks(*parts: bytes, gate: asyncio.Event | None = None) -> AsyncIterator[bytes]:
    for part in parts:
        if gate is not None:
            await gate.wait()
        yield part


@pytest.mark.parametrize("through", THROUGH)
def test_a_ticket_is_answered_once_and_its_answer_streams_chunk_by_chunk(through: str) -> None:
    async def scenario(server: LoopbackServer) -> Any:
        async def answer() -> Reply:
            return Reply(200, [("content-type", "text/event-stream")], _chunks(b"a\n\n", b"b\n\n", b"c\n\n"),
                         "stream")

        path = server.issue(answer)
        client = await Plain.to(server, through)
        first = await client.request(path, b'{"ignored": true}')
        again = await client.request(path)
        client.close()
        return first, again

    (status, headers, chunks), (missing, _, body) = served(scenario)
    assert (status, headers.get("transfer-encoding")) == (200, "chunked")
    assert chunks == [b"a\n\n", b"b\n\n", b"c\n\n"]
    assert (missing, b"".join(body)) == (404, b"unknown ticket\n")


@pytest.mark.parametrize("through", THROUGH)
def test_an_attached_writer_writes_chunks_between_the_iterators_and_the_connection_goes_on(
        through: str) -> None:
    async def scenario(server: LoopbackServer) -> Any:
        sinks: list[Callable[[bytes], Awaitable[None]]] = []
        written = asyncio.Event()

        async def body() -> AsyncIterator[bytes]:
            yield b"a\n\n"
            await written.wait()  # the attempts write on their own meanwhile (runner.py `_Client.put`)

        async def write_rest() -> None:
            while not sinks:
                await asyncio.sleep(0)
            for part in (b"b\n\n", b"", b"c\n\n"):
                await sinks[0](part)
            written.set()

        async def answer() -> Reply:
            return Reply(200, [("content-type", "text/event-stream")], body(), "stream", attach=sinks.append)

        writer = asyncio.create_task(write_rest())
        client = await Plain.to(server, through)
        first = await client.request(server.issue(answer))
        then = await client.request(server.issue(whole(b'{"n": 2}')))
        client.close()
        await writer
        return first, then

    (status, headers, chunks), (s2, _, b2) = served(scenario)
    assert (status, headers.get("transfer-encoding")) == (200, "chunked")
    assert chunks == [b"a\n\n", b"b\n\n", b"c\n\n"]
    assert (s2, b"".join(b2)) == (200, b'{"n": 2}')


@pytest.mark.parametrize("through", THROUGH)
def test_a_whole_answer_has_its_length_and_the_connection_serves_the_next_ticket(through: str) -> None:
    async def scenario(server: LoopbackServer) -> Any:
        client = await Plain.to(server, through)
        one = await client.request(server.issue(whole(b'{"n": 1}')))
        two = await client.request(server.issue(whole(b'{"error": {}}', 429)))
        client.close()
        return one, two

    (s1, h1, b1), (s2, _, b2) = served(scenario)
    assert (s1, h1["content-length"], b"".join(b1)) == (200, "8", b'{"n": 1}')
    assert (s2, b"".join(b2)) == (429, b'{"error": {}}')


@pytest.mark.parametrize("through", THROUGH)
def test_an_unknown_path_is_404(through: str) -> None:
    async def scenario(server: LoopbackServer) -> int:
        client = await Plain.to(server, through)
        status, _, _ = await client.request("/not-a-ticket")
        client.close()
        return status

    assert served(scenario) == 404


def test_tickets_expire_and_the_table_is_bounded() -> None:
    now = [0.0]
    tickets = Tickets(size=2, ttl=10, clock=lambda: now[0])
    answer = whole(b"")
    first, second = tickets.issue(answer), tickets.issue(answer)
    third = tickets.issue(answer)  # the table holds two: the oldest goes
    assert tickets.take(first) is None and len(tickets) == 2
    now[0] = 10
    assert tickets.take(second) is None and tickets.take(third) is None and len(tickets) == 0
    fourth = tickets.issue(answer)
    tickets.discard(fourth)
    assert tickets.take(fourth) is None
    assert len({Tickets().issue(answer) for _ in range(100)}) == 100


@pytest.mark.parametrize("through", THROUGH)
def test_a_client_that_leaves_before_the_head_cancels_the_answer(through: str) -> None:
    async def scenario(server: LoopbackServer) -> bool:
        started, cancelled = asyncio.Event(), asyncio.Event()

        async def answer() -> Reply:
            started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            raise AssertionError("not reached")

        client = await Plain.to(server, through)
        await client.send(server.issue(answer))
        await started.wait()
        client.writer.close()
        await asyncio.wait_for(cancelled.wait(), 10)
        return cancelled.is_set()

    assert served(scenario)


@pytest.mark.parametrize("through", THROUGH)
def test_a_client_that_leaves_mid_body_closes_the_body(through: str) -> None:
    async def scenario(server: LoopbackServer) -> bool:
        closed, gate = asyncio.Event(), asyncio.Event()

        async def body() -> AsyncIterator[bytes]:
            try:
                yield b"first"
                await gate.wait()
                yield b"never"
            finally:
                closed.set()

        async def answer() -> Reply:
            return Reply(200, [("content-type", "text/event-stream")], body(), "stream")

        client = await Plain.to(server, through)
        await client.send(server.issue(answer))
        await client.event()  # the head
        assert bytes((await client.event()).data) == b"first"
        client.writer.close()
        await asyncio.wait_for(closed.wait(), 10)
        return True

    assert served(scenario)


@pytest.mark.parametrize("through", THROUGH)
def test_a_slow_answer_holds_up_no_other_connection(through: str) -> None:
    async def scenario(server: LoopbackServer) -> list[str]:
        gate = asyncio.Event()
        order: list[str] = []

        async def slow() -> Reply:
            return Reply(200, [], _chunks(b"slow", gate=gate), "stream")

        first, second = await Plain.to(server, through), await Plain.to(server, through)

        async def run_slow() -> None:
            await first.request(server.issue(slow))
            order.append("slow")

        slow_task = asyncio.create_task(run_slow())
        await second.request(server.issue(whole(b"quick")))
        order.append("quick")
        gate.set()
        await slow_task
        first.close()
        second.close()
        return order

    assert served(scenario) == ["quick", "slow"]


def test_a_head_past_its_bound_ends_the_connection() -> None:
    async def scenario(server: LoopbackServer) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"POST /x HTTP/1.1\r\nhost: 127.0.0.1\r\n" + b"x-filler: " + b"y" * 10_000)
        await writer.drain()
        return await reader.read()

    assert served(scenario, max_head=4096) == b""


def test_a_connection_that_sends_nothing_is_closed() -> None:
    async def scenario(server: LoopbackServer) -> bytes:
        reader, _writer = await asyncio.open_connection("127.0.0.1", server.port)
        return await reader.read()

    assert served(scenario, head_seconds=0.2) == b""


@pytest.mark.parametrize("through", THROUGH)
def test_closing_the_server_ends_its_connections_at_once(through: str) -> None:
    async def scenario(server: LoopbackServer) -> None:
        client = await Plain.to(server, through)
        await client.request(server.issue(whole(b"x")))
        closing = asyncio.create_task(server.close())
        # its kept connection waits for a next request for an hour: only the cancellation ends it
        done, _ = await asyncio.wait({closing}, timeout=10)
        assert closing in done, "a cancelled connection went on serving"
        assert await client.reader.read() == b""

    served(scenario, head_seconds=3600)


def test_the_port_is_loopback_and_ephemeral() -> None:
    async def scenario(server: LoopbackServer) -> str:
        return server.base_url

    url = served(scenario)
    assert url.startswith("http://127.0.0.1:") and int(url.rsplit(":", 1)[1]) > 0


@pytest.mark.parametrize("through", THROUGH)
def test_a_leg_answered_through_the_server_end_to_end(through: str) -> None:
    """What mitmproxy will do: ask the loopback server for a ticket whose answer is a leg's
    (runner.py), here with a local upstream that answers 529 first and then a stream."""
    answers = [json_reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
               anthropic_text("through the loopback")]
    with FakeUpstream(lambda _b, _h, _p: answers.pop(0) if len(answers) > 1 else answers[0]) as up:
        leg = leg_for([deployment("a", up.url)])

        async def scenario(server: LoopbackServer) -> tuple[int, bytes]:
            client = Client()
            runner = Runner(client)
            try:
                plain = await Plain.to(server, through)
                status, _, chunks = await plain.request(server.issue(lambda: runner.answer(leg)))
                plain.close()
                return status, b"".join(chunks)
            finally:
                await client.close()

        status, body = served(scenario)
    assert status == 200 and b"through the loopback" in body
    assert [a.outcome for a in leg.attempts] == ["retried", "answered"]
    assert json.loads(body.split(b"data: ")[-1])["type"] == "response.completed"
