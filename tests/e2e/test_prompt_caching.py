"""Long sessions through real mitmdump read their prompt from the cache (docs/benchmarks.md
"Prompt caching"): a 30-turn Codex session (over HTTP, and over the Responses WebSocket) and a
30-turn Claude Code session, each against a fake Anthropic and a fake Bedrock that bill every turn
by Anthropic's caching rules (tests/e2e/caching_upstream.py, tests/support/prompt_cache.py). Three
turns call a tool twelve times at once, so one turn adds more than the twenty blocks a breakpoint
looks back; Claude Code sends its own `cache_control` markers, which must be kept.

Done when (issue 34): at least 90% of the input tokens of turns 2 to 30 are read from the cache.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.caching_upstream import TURNS, CachingUpstream, session_plan
from tests.e2e.targets import PROMPT, TARGETS, codex_setup, gateway, mode_of, routes_file, write_routes
from tests.support.claude_code_cli import run_claude
from tests.support.codex_cli import run_codex_exec
from tests.support.fake_upstream import FakeUpstream, empty_reply, refuse_everything
from tests.support.mitmdump import GATEWAY, MitmDump

pytestmark = pytest.mark.timeout(600)

DIALECTS = ("anthropic", "bedrock")
TARGET = {t.dialect: t for t in TARGETS}
WANTED = 0.9


def command(turn: int, call: int) -> str:
    """A command whose output (401 numbers, about 2.4 KB) makes the history outgrow the prompt, as
    reading files does in a real session."""
    first = turn * 1000 + call * 50
    return f"seq {first} {first + 400}"


@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    """A loopback proxy that refuses everything: Codex's start-up calls must not leave the machine."""
    with FakeUpstream(refuse_everything) as hole:
        yield hole


def report(name: str, upstream: CachingUpstream) -> None:
    print(f"\n{name}: {upstream.cached_share():.1%} of turns 2-{TURNS}'s input read from cache\n"
          f"{upstream.table()}")


def assert_cached(upstream: CachingUpstream, context: str) -> None:
    assert not upstream.refused, upstream.refused
    assert max(n for n, _ in upstream.turns) == TURNS, context
    assert upstream.cached_share() >= WANTED, f"{upstream.table()}\n{context[-3000:]}"


@pytest.mark.codex
@pytest.mark.parametrize("setup", ["custom_provider", "openai_base_url"], ids=["http", "websocket"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_thirty_turn_codex_session_reads_its_prompt_from_the_cache(tmp_path: Path, black_hole: FakeUpstream,
                                                                     dialect: str, setup: str) -> None:
    target = TARGET[dialect]
    plan = session_plan("exec_command", lambda n, i: {"cmd": command(n, i)})
    upstream = CachingUpstream(dialect, plan, admits=target.admits)
    work = tmp_path / "work"
    work.mkdir()
    with FakeUpstream(upstream) as up:
        config = routes_file(tmp_path, target, up)
        with gateway(tmp_path, target, config, mode_of(setup)) as mitm:
            codex = codex_setup(setup, tmp_path / "codex", mitm, black_hole)
            run = run_codex_exec(codex, PROMPT, work, timeout=500)
    context = f"{run.describe()}\n--- mitmdump ---\n{mitm.log[-4000:]}\n{up.errors}"
    assert run.returncode == 0, context
    report(f"codex {setup} -> {dialect}", upstream)
    assert_cached(upstream, context)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_thirty_turn_claude_code_session_reads_its_prompt_from_the_cache(tmp_path: Path,
                                                                           dialect: str) -> None:
    target = TARGET[dialect]
    plan = session_plan("Bash", lambda n, i: {"command": command(n, i), "description": "Print numbers"})
    upstream = CachingUpstream(dialect, plan, admits=target.admits)
    anthropic_itself = FakeUpstream(lambda body, headers, path: empty_reply(500))
    (tmp_path / "work").mkdir()
    with anthropic_itself, FakeUpstream(upstream) as up:
        write_routes(tmp_path / "routes.toml", [
            {"model": "claude-via-cache", "upstream": dialect, "base_url": up.url,
             "target_model": target.model, **target.route}])
        options = {"gateway_config": str(tmp_path / "routes.toml"), "gateway_capabilities": "table"}
        with MitmDump(tmp_path / "mitm", mode=f"reverse:{anthropic_itself.url}", scripts=(GATEWAY,),
                      options=options, env=dict(target.env)) as mitm:
            run = run_claude("run the marker commands one turn at a time", base_url=mitm.url,
                             home=tmp_path / "home", work=tmp_path / "work", model="claude-via-cache",
                             timeout=500)
    context = f"{run.describe()}\n--- mitmdump ---\n{mitm.log[-4000:]}\n{up.errors}"
    assert run.returncode == 0, context
    assert not anthropic_itself.requests
    report(f"claude code -> {dialect}", upstream)
    assert_cached(upstream, context)
