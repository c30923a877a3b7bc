"""Fixtures of the end-to-end tests that need more than a fake: the real Chat Completions server
(tests/support/chat_server.py, docs/real-servers.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from tests.support.chat_server import ChatServer, ensure_server


@pytest.fixture(scope="session")
def chat_server(request: pytest.FixtureRequest) -> Iterator[ChatServer]:
    """llama-cpp-python's server with SmolLM2-135M, one per test session. The first use on a
    machine builds llama-cpp-python (13 to 25 minutes on 2 cores), and says so on the terminal
    even while pytest captures output."""
    capture = request.config.pluginmanager.getplugin("capturemanager")
    reporter = request.config.pluginmanager.getplugin("terminalreporter")

    def notify(line: str) -> None:
        uncaptured = capture.global_and_fixture_disabled() if capture else contextlib.nullcontext()
        with uncaptured:
            if reporter is not None:
                reporter.write_line(line)
            else:
                print(line, flush=True)

    with ensure_server(notify) as server:
        yield server
