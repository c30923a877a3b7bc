"""addon/patches/replay_client.py: the mitmproxy internals a WebSocket request's replay rests on (a
changed one fails here, by name). The replay itself runs in tests/addon/e2e/test_websocket.py."""

from __future__ import annotations

import inspect

from mitmproxy.addons import clientplayback

from addon.patches import replay_client


def test_mitmproxy_mock_server_hands_the_answer_to_handle_event() -> None:
    """`_Client` overrides the stand-in client's `_handle_event`, where mitmproxy drops the answer."""
    handle = getattr(clientplayback.MockServer, "_handle_event", None)
    assert handle is not None and inspect.isgeneratorfunction(handle), (
        "mitmproxy.addons.clientplayback.MockServer._handle_event is gone or no longer a generator")
    source = inspect.getsource(handle)
    for event in ("ResponseHeaders", "ResponseData", "ResponseEndOfMessage", "ResponseProtocolError"):
        assert event in source, f"MockServer._handle_event no longer receives {event}"
    assert list(inspect.signature(clientplayback.MockServer).parameters) == ["flow", "context"], (
        "mitmproxy.addons.clientplayback.MockServer(flow, context) changed")


def test_mitmproxy_replay_handler_has_what_the_turn_replaces_and_waits_on() -> None:
    """`Turn` puts its `_Client` in `layer.connections[context.client]`, awaits `replay()`, and
    ends the upstream call through `transports` and `done`."""
    source = inspect.getsource(clientplayback.ReplayHandler.__init__)
    assert "self.layer.connections[client] = MockServer(flow, context.fork())" in source, (
        "mitmproxy.addons.clientplayback.ReplayHandler.__init__ no longer installs MockServer as "
        "layer.connections[client]")
    assert "self.done = asyncio.Event()" in source, "ReplayHandler.done is no longer an asyncio.Event"
    assert inspect.iscoroutinefunction(clientplayback.ReplayHandler.replay), (
        "mitmproxy.addons.clientplayback.ReplayHandler.replay is no longer a coroutine")
    assert "transports" in inspect.getsource(clientplayback.ReplayHandler.handle_hook), (
        "ReplayHandler.handle_hook no longer closes its server connections through transports")
    assert issubclass(replay_client.Turn, clientplayback.ReplayHandler)
