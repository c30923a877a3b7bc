"""Shared fixtures of the reliability suite: local upstreams that misbehave, and real mitmdump with
the gateway in front of them, one route per dialect (by client model prefix), so one proxy
serves every fault and every dialect.

Everything stays on 127.0.0.1: the upstreams listen there, the gateway routes there, and
`offline_guard.py` answers 599 to any flow that would still leave the machine.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Iterator
from pathlib import Path

import openai
import pytest

from tests.reliability.fault_upstream import FaultUpstream, GarbageServer
from tests.support import conformance, toy_dialect
from tests.support.mitmdump import MitmDump
from translators import dialect as dialects

GUARD = Path(__file__).with_name("offline_guard.py")
MEMORY_PROBE = Path(__file__).with_name("memory_probe.py")
CLIENT_KEY = "sk-proj-reliability-CLIENT-key-0123456789abcdef"
ACCOUNT_ID = "acct-reliability-CHATGPT-account-9f8e7d"
COOKIE = "__Secure-next-auth.session-token=reliability-COOKIE-5a4b3c"
CLIENT_HEADERS = {
    "chatgpt-account-id": ACCOUNT_ID,
    "cookie": COOKIE,
    "originator": "codex_exec",
    "x-codex-turn-metadata": '{"turn":1}',
}
UPSTREAM_KEYS = {c.key_env: c.key for c in conformance.every()}
"""Each dialect's route key, as its conformance data declares it (tests/support/conformance/)."""
DIALECTS = tuple(name for name in dialects.names() if dialects.get(name).passthrough is None)
"""Every translated dialect in the registry, the toy one included (tests/conftest.py)."""
EXTRA_DIALECTS = {"GATEWAY_DIALECTS": toy_dialect.__name__}
"""How the mitmdump subprocess gets the toy dialect (addon/routes/plugins.py)."""


def free_port() -> int:
    """A port nothing listens on (connection refused)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        return int(server.getsockname()[1])


def routes_toml(upstream_url: str, *, refused_url: str, garbage_url: str, plain_http_url: str,
                own_pools: Iterable[str] = ()) -> str:
    """Client model `<dialect>-...` goes to that dialect at the local upstream; `refused-...`,
    `garbage-...` and `plainhttp-...` go (as Anthropic) where the connection or TLS fails. Each
    model of `own_pools` (`<dialect>-...`) gets a route of its own to the same place, first: a
    pool of its own (addon/upstream/pool.py), whose cooldown holds up no other model's turn."""
    lines = []
    declared = {c.dialect: c for c in conformance.every()}  # a dialect without conformance data fails loudly
    routes = [(model, declared[model.split("-", 1)[0]]) for model in own_pools]
    routes += [(f"{dialect}-*", data) for dialect, data in declared.items()]
    for pattern, data in routes:
        lines += [
            "[[route]]",
            f'model = "{pattern}"',
            f'upstream = "{data.dialect}"',
            f'base_url = "{upstream_url}{data.base_suffix}"',
            f'target_model = "{data.model}"',
            f'key_env = "{data.key_env}"',
            "",
        ]
    for prefix, url in (("refused", refused_url), ("garbage", garbage_url), ("plainhttp", plain_http_url)):
        lines += [
            "[[route]]",
            f'model = "{prefix}-*"',
            'upstream = "anthropic"',
            f'base_url = "{url}"',
            'target_model = "claude-sonnet-4-6"',
            'key_env = "RELIABILITY_ANTHROPIC_KEY"',
            "",
        ]
    return "\n".join(lines)


def start_gateway(
    confdir: Path,
    routes: Path,
    *,
    mode: str = "reverse:https://api.openai.com",
    args: tuple[str, ...] = (),
    options: dict[str, str] | None = None,
    scripts: tuple[Path, ...] = (),
    env: dict[str, str] | None = None,
) -> MitmDump:
    """mitmdump with the gateway, then `scripts`, then the offline guard (last, so it sees each
    request as the others left it)."""
    loaded = [arg for script in (*scripts, GUARD) for arg in ("-s", str(script))]
    return MitmDump(
        confdir,
        mode=mode,
        # the fault upstreams serve no models endpoint: the shipped capability tables only
        options={"gateway_config": str(routes), "gateway_capabilities": "table", **(options or {})},
        args=[*loaded, *args],
        env={**UPSTREAM_KEYS, **EXTRA_DIALECTS, **(env or {})},
    )


def sdk(proxy: MitmDump, **headers: str) -> openai.OpenAI:
    """The official SDK pointed at the reverse proxy, as Codex is with `openai_base_url`."""
    return openai.OpenAI(
        base_url=f"{proxy.url}/v1",
        api_key=CLIENT_KEY,
        max_retries=0,
        timeout=30,
        default_headers={**CLIENT_HEADERS, **headers},
    )


@pytest.fixture(scope="module")
def fault_upstream() -> Iterator[FaultUpstream]:
    with FaultUpstream() as upstream:
        yield upstream


@pytest.fixture(scope="module")
def garbage_server() -> Iterator[GarbageServer]:
    with GarbageServer() as server:
        yield server


@pytest.fixture(scope="module")
def own_pools() -> tuple[str, ...]:
    """Client models with a pool of their own in the module's gateway (`routes_toml`): a module
    overrides it to name the turns whose fault cools their deployment down for seconds (a
    retry-after), so that neither the next flow nor the next test waits that cooldown out."""
    return ()


@pytest.fixture(scope="module")
def gateway(
    tmp_path_factory: pytest.TempPathFactory, fault_upstream: FaultUpstream, garbage_server: GarbageServer,
    own_pools: tuple[str, ...],
) -> Iterator[MitmDump]:
    """One mitmdump for a whole test module; each test checks the next flow still works. Retries
    are off (`gateway_retries=0`): a fault is the one attempt's, and a failure before any content
    is answered as the upstream leg answers a turn whose every attempt failed (docs/pools.md
    "What the client sees")."""
    tmp = tmp_path_factory.mktemp("gateway")
    routes = tmp / "routes.toml"
    routes.write_text(
        routes_toml(
            fault_upstream.url,
            refused_url=f"http://127.0.0.1:{free_port()}",
            garbage_url=f"https://127.0.0.1:{garbage_server.port}",
            plain_http_url=f"https://127.0.0.1:{fault_upstream.port}",
            own_pools=own_pools,
        )
    )
    with start_gateway(tmp / "conf", routes, args=("-w", str(tmp / "flows.mitm")),
                       options={"gateway_retries": "0"}) as proxy:
        yield proxy
