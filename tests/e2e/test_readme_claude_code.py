"""The README's "Claude Code in two commands" runs as written (the gateway block, then Claude
Code's), with the real Claude Code 2.1.328 against a local fake of the block's upstream.

What the test changes, and only that: the gateway listens on a free port (the Claude Code block's
`127.0.0.1:8080` follows), the route's base URL is the fake's with `gateway_key_env` naming the
exported variable (a local host gets only a named key), the key is a test value, and Claude Code
gets a private HOME and the variables that keep it offline (no telemetry, no non-essential
traffic), as in the other Claude Code tests (tests/support/claude_code_cli.py)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.targets import TARGETS, is_turn
from tests.e2e.test_readme import README, README_PORT, Setup, commands, gateway_command
from tests.support.claude_code_cli import claude_binary
from tests.support.fake_upstream import FakeUpstream, Reply, empty_reply
from tests.support.mitmdump import GATEWAY, MitmDump

pytestmark = pytest.mark.timeout(300)

SECTION = "## Claude Code in two commands"
ANSWER = "hi from the README's upstream, to Claude Code"
KEY = "readme-claude-code-key-0123456789"


def section_blocks() -> tuple[str, str]:
    section = README.read_text().split(SECTION, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    gateway = [b for b in blocks if "./run mitmdump" in b]
    claude = [b for b in blocks if "claude -p" in b]
    assert len(gateway) == 1 and len(claude) == 1, blocks
    return gateway[0], claude[0]


def test_the_readme_claude_code_block_answers_through_the_gateway(tmp_path: Path) -> None:
    gateway_block, claude_block = section_blocks()
    args, options, exported = gateway_command(Setup("claude code", gateway_block, claude_block))
    target = next(t for t in TARGETS if t.dialect == options["gateway_upstream"])
    model = options["gateway_model"].split("=", 1)[1]
    turns: list[Any] = []

    def upstream(body: Any, headers: Any, path: str) -> Reply:
        if not is_turn(body):
            return empty_reply(404)
        turns.append((body, dict(headers), path))
        return target.text(ANSWER, 30)

    kept, it, mode = [], iter(args), None
    for arg in it:
        if arg == "-p":
            assert next(it) == README_PORT.rsplit(":", 1)[1]
        elif arg == "-s":
            assert next(it) == "addon/gateway.py"
        elif arg == "--mode":
            mode = next(it)
        else:
            kept.append(arg)
    assert mode == "reverse:https://api.anthropic.com"
    with FakeUpstream(upstream) as up:
        options |= {"gateway_base_url": up.url, "gateway_key_env": exported[0]}
        with MitmDump(tmp_path / "mitm", mode=mode, scripts=(GATEWAY,), args=kept, options=options,
                      env={exported[0]: KEY}) as mitm:
            (line,) = commands(claude_block)
            words = shlex.split(line.replace(README_PORT, f"127.0.0.1:{mitm.port}"))
            env = {name: os.environ[name] for name in ("PATH", "LANG") if name in os.environ}
            while "=" in words[0]:
                name, value = words.pop(0).split("=", 1)
                env[name] = value
            assert words[:2] == ["claude", "-p"], line
            env |= {"HOME": str(tmp_path / "home"), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "NO_PROXY": "127.0.0.1,localhost"}
            (tmp_path / "home").mkdir()
            done = subprocess.run([str(claude_binary()), *words[1:]], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=180)
    context = f"exit {done.returncode}\n{done.stdout}\n{done.stderr}\n--- mitmdump ---\n{mitm.log[-3000:]}"
    assert done.returncode == 0, context
    assert done.stdout.strip() == ANSWER, context
    assert turns, context
    _body, headers, path = turns[0]
    assert f"/models/{model}:" in path, path
    assert KEY in " ".join(headers.values())
