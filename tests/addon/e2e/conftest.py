"""Fixtures for the end-to-end tests: a local provider, real mitmdump with the addon in front of
it, and the official `openai` SDK pointed through the proxy (reverse or regular mode).

mitmdump takes a second or more to start on a busy machine, so one proxy (with its own confdir
and `-w` file) serves a whole test module; the local upstream is reset before every test.
Sharing it also shows the proxy keeps serving after each error case.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path

import httpx
import openai
import pytest

from tests.addon.e2e.upstream import Upstream
from tests.support.mitmdump import GATEWAY, MitmDump

UPSTREAM_KEY = "sk-ant-e2e-upstream-secret-0123456789"
CLIENT_KEY = "sk-proj-e2e-client-secret-0123456789"
UPSTREAM_MODEL = "claude-haiku-4-5"
CODEX_HEADERS = {"chatgpt-account-id": "acct-e2e", "x-codex-turn-metadata": '{"turn":1}',
                 "originator": "codex_exec"}

StartProxy = Callable[..., MitmDump]


@pytest.fixture(scope="module")
def upstream_server() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture
def upstream(upstream_server: Upstream) -> Upstream:
    upstream_server.reset()
    return upstream_server


@pytest.fixture(scope="module")
def module_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="module")
def dead_url() -> str:
    """A base URL nothing listens on."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def start_proxy(module_dir: Path, upstream_server: Upstream) -> Iterator[StartProxy]:
    """Start mitmdump with the addon routed to the local upstream, writing `<name>.flows`;
    stopped with SIGINT at the end of the module. `env` adds to (None: removes from) the
    proxy's environment; `scripts` replaces the gateway's script alone (a test's spy after it); a
    module may override `upstream_server` with its own provider.
    Capabilities come from the shipped tables unless a test sets `gateway_capabilities=vendor`:
    the local providers serve no models endpoint, and a start-up fetch would take a planned reply."""
    with ExitStack() as stack:
        def start(name: str, mode: str | None = None, env: dict[str, str | None] | None = None,
                  scripts: Sequence[Path] = (GATEWAY,), **options: str) -> MitmDump:
            # a local upstream gets a key only when the route names its variable
            options = {"gateway_upstream": "anthropic", "gateway_base_url": upstream_server.url,
                       "gateway_model": UPSTREAM_MODEL, "gateway_capabilities": "table",
                       "gateway_key_env": "ANTHROPIC_API_KEY", **options}
            proxy = MitmDump(module_dir / f"{name}-conf", mode=mode, scripts=scripts, options=options,
                             args=["-w", str(module_dir / f"{name}.flows")],
                             env={"ANTHROPIC_API_KEY": UPSTREAM_KEY, **(env or {})})
            return stack.enter_context(proxy)
        yield start


@pytest.fixture(scope="module")
def reverse_proxy(start_proxy: StartProxy) -> MitmDump:
    return start_proxy("reverse", "reverse:https://api.openai.com")


@pytest.fixture(scope="module")
def regular_proxy(start_proxy: StartProxy) -> MitmDump:
    return start_proxy("regular")


def reverse_client(proxy: MitmDump) -> openai.OpenAI:
    """The SDK through the reverse proxy, the way Codex is pointed at it with `openai_base_url`."""
    return openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=15,
                         default_headers=CODEX_HEADERS)


def regular_client(proxy: MitmDump, base_url: str = "https://api.openai.com/v1") -> openai.OpenAI:
    """The SDK through the proxy as HTTPS_PROXY, trusting the proxy's CA."""
    trust = ssl.create_default_context(cafile=str(proxy.ca_cert))
    http_client = httpx.Client(proxy=proxy.url, verify=trust, timeout=15)
    return openai.OpenAI(base_url=base_url, api_key=CLIENT_KEY, max_retries=0, http_client=http_client,
                         default_headers=CODEX_HEADERS)


@pytest.fixture
def client(reverse_proxy: MitmDump) -> Iterator[openai.OpenAI]:
    with reverse_client(reverse_proxy) as sdk:
        yield sdk
