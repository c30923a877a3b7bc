"""Fixtures for the end-to-end tests: a local provider, real mitmdump with the addon in front of
it, and the official `openai` SDK pointed through the proxy (reverse or regular mode)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import openai
import pytest

from tests.addon.e2e.proxy import MitmDump
from tests.addon.e2e.upstream import Upstream

UPSTREAM_KEY = "sk-ant-e2e-upstream-secret-0123456789"
CLIENT_KEY = "sk-proj-e2e-client-secret-0123456789"
UPSTREAM_MODEL = "claude-haiku-4-5"
CODEX_HEADERS = {"chatgpt-account-id": "acct-e2e", "x-codex-turn-metadata": '{"turn":1}',
                 "originator": "codex_exec"}

StartProxy = Callable[..., MitmDump]


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture
def dead_url() -> str:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def flow_file(tmp_path: Path) -> Path:
    return tmp_path / "flows.mitm"


@pytest.fixture
def start_proxy(tmp_path: Path, upstream: Upstream, flow_file: Path) -> Iterator[StartProxy]:
    """Start mitmdump with the addon routed to the local upstream; stopped (SIGINT) at the end."""
    with ExitStack() as stack:
        def start(mode: str | None = None, **options: str) -> MitmDump:
            options = {"gateway_upstream": "anthropic", "gateway_base_url": upstream.url,
                       "gateway_model": UPSTREAM_MODEL, **options}
            proxy = MitmDump(tmp_path / "conf", mode=mode, options=options, args=["-w", str(flow_file)],
                             env={"ANTHROPIC_API_KEY": UPSTREAM_KEY})
            return stack.enter_context(proxy)
        yield start


@pytest.fixture
def reverse_proxy(start_proxy: StartProxy) -> MitmDump:
    return start_proxy("reverse:https://api.openai.com")


@pytest.fixture
def regular_proxy(start_proxy: StartProxy) -> MitmDump:
    return start_proxy()


def reverse_client(proxy: MitmDump) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=15,
                         default_headers=CODEX_HEADERS)


def regular_client(proxy: MitmDump, base_url: str = "https://api.openai.com/v1") -> openai.OpenAI:
    http_client = httpx.Client(proxy=proxy.url, verify=str(proxy.ca_cert), timeout=15)
    return openai.OpenAI(base_url=base_url, api_key=CLIENT_KEY, max_retries=0, http_client=http_client,
                         default_headers=CODEX_HEADERS)


@pytest.fixture
def client(reverse_proxy: MitmDump) -> openai.OpenAI:
    """The SDK through the reverse proxy, the way Codex is pointed at it with `openai_base_url`."""
    return reverse_client(reverse_proxy)
