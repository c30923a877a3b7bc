"""Which permission flags let the real Claude Code 2.1.328 run a tool in `claude -p` through the
gateway, as root too (docs/claude-code.md "Set-up"). The fake upstream (Anthropic Messages behind a
`claude-*` route) asks for one Bash command that writes a file and runs a program; its second turn
repeats what the tool said, which Claude Code prints.

- no flag: nobody answers the permission prompt in `-p`, so the command is refused;
- `--allowedTools "Bash Edit Write Read"`: runs, as root too;
- `--permission-mode acceptEdits`: a command that only creates files in the working folder runs,
  one that runs another program still needs approval;
- as root, `--dangerously-skip-permissions` and `--permission-mode bypassPermissions` refuse to
  start (unless `IS_SANDBOX=1` says the machine is a sandbox).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.targets import write_routes
from tests.support.claude_code_cli import ClaudeRun, run_claude
from tests.support.fake_upstream import (
    FakeUpstream,
    Reply,
    anthropic_text,
    anthropic_tool_results,
    anthropic_tool_use,
    empty_reply,
)
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(300)

COMMAND = "touch marker.txt && git --version > /dev/null && echo tool-ran"
ROOT_REFUSAL = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the refusal is Claude Code's answer to root only")


def model(body: Any, _headers: Any, _path: str) -> Reply:
    if not isinstance(body, dict) or "messages" not in body:
        return empty_reply(404)
    results = anthropic_tool_results(body)
    if results:
        return anthropic_text("the tool said: " + json.dumps(results[-1].get("content")))
    return anthropic_tool_use("Bash", {"command": COMMAND, "description": "mark the folder"}, "toolu_perm1")


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MitmDump]:
    tmp = tmp_path_factory.mktemp("permissions")
    with FakeUpstream(model) as up, FakeUpstream(lambda *_: empty_reply(500)) as anthropic_itself:
        routes = write_routes(tmp / "routes.toml", [
            {"model": "claude-*", "upstream": "anthropic", "base_url": up.url,
             "target_model": "claude-sonnet-4-6", "key_env": "ANTHROPIC_API_KEY"}])
        with MitmDump(tmp / "mitm", mode=f"reverse:{anthropic_itself.url}",
                      options={"gateway_config": str(routes), "gateway_capabilities": "table"},
                      env={"ANTHROPIC_API_KEY": "sk-ant-permissions-0123456789"}) as mitm:
            yield mitm


def claude(gateway: MitmDump, tmp_path: Path, *args: str, sandbox: bool = False) -> tuple[ClaudeRun, bool]:
    """`claude -p` with exactly these flags; its run and whether the command ran."""
    work = tmp_path / "work"
    work.mkdir()
    extra = {"IS_SANDBOX": "1"} if sandbox else None
    run = run_claude("mark the folder", base_url=gateway.url, home=tmp_path / "home", work=work,
                     args=args, allowed_tools=None, stream_json=False, env=extra)
    return run, (work / "marker.txt").exists()


def test_without_a_flag_the_command_is_refused(gateway: MitmDump, tmp_path: Path) -> None:
    run, ran = claude(gateway, tmp_path)
    assert run.returncode == 0 and not ran, run.describe()
    assert "approval" in run.stdout, run.describe()


def test_allowed_tools_runs_it(gateway: MitmDump, tmp_path: Path) -> None:
    run, ran = claude(gateway, tmp_path, "--allowedTools", "Bash Edit Write Read")
    assert run.returncode == 0 and ran, run.describe()
    assert "tool-ran" in run.stdout


def test_accept_edits_runs_file_writes_only(gateway: MitmDump, tmp_path: Path) -> None:
    run, ran = claude(gateway, tmp_path, "--permission-mode", "acceptEdits")
    assert run.returncode == 0 and not ran, run.describe()
    assert "git --version" in run.stdout  # the part that still needs approval


@as_root
@pytest.mark.parametrize("flags", [("--dangerously-skip-permissions",),
                                   ("--permission-mode", "bypassPermissions")],
                         ids=["dangerously-skip", "bypass"])
def test_as_root_skipping_permissions_refuses_to_start(gateway: MitmDump, tmp_path: Path,
                                                       flags: tuple[str, ...]) -> None:
    run, ran = claude(gateway, tmp_path, *flags)
    assert run.returncode == 1 and not ran
    assert ROOT_REFUSAL in run.stderr


@as_root
def test_as_root_in_a_sandbox_skipping_permissions_runs_it(gateway: MitmDump, tmp_path: Path) -> None:
    run, ran = claude(gateway, tmp_path, "--dangerously-skip-permissions", sandbox=True)
    assert run.returncode == 0 and ran, run.describe()
