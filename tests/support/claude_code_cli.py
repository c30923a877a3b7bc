"""The real Claude Code CLI (npm `@anthropic-ai/claude-code@2.1.328`) for end-to-end tests.

Installed once per machine into `<repo>/.cache/claude-code` under a lock, as `codex_cli.py` installs
Codex; the native binary of the platform package is run directly. `run_claude` runs `claude -p`
offline against a base URL (the gateway in reverse mode, docs/claude-code.md "Set-ups"): a
throwaway HOME, only the variables it needs, no telemetry and no non-essential traffic, with
`--output-format stream-json` so a test reads what it did (its tool calls, their results, its
final text).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
CLAUDE_CODE_VERSION = "2.1.328"
PREFIX = REPO_ROOT / ".cache" / "claude-code"
NPM_INSTALL_TIMEOUT = 900.0
CLIENT_KEY = "sk-ant-claude-code-client-0123456789"
_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "LOGNAME")


def _installed_version() -> str | None:
    manifest = PREFIX / "node_modules" / "@anthropic-ai" / "claude-code" / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def _find_binary() -> Path | None:
    # the platform package (`@anthropic-ai/claude-code-linux-x64`, `-linux-arm64`, ...) holds the binary
    found = sorted(p for p in PREFIX.glob("node_modules/@anthropic-ai/claude-code-*/claude")
                   if p.is_file() and os.access(p, os.X_OK))
    return found[0] if found else None


@contextlib.contextmanager
def _install_lock() -> Iterator[None]:
    PREFIX.mkdir(parents=True, exist_ok=True)
    with (PREFIX / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def claude_binary() -> Path:
    """The native `claude` binary, installed into `<repo>/.cache/claude-code` once."""
    with _install_lock():
        binary = _find_binary()
        if binary is None or _installed_version() != CLAUDE_CODE_VERSION:
            command = ["npm", "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund",
                       f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"]
            done = subprocess.run(command, capture_output=True, text=True, timeout=NPM_INSTALL_TIMEOUT)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n"
                                   f"{done.stdout}\n{done.stderr}")
            binary = _find_binary()
    if binary is None:
        raise RuntimeError(f"npm installed @anthropic-ai/claude-code@{CLAUDE_CODE_VERSION} but no binary "
                           f"under {PREFIX}")
    return binary


@dataclass
class ClaudeRun:
    returncode: int
    stdout: str
    stderr: str

    @property
    def events(self) -> list[dict[str, Any]]:
        """The stream-json lines it printed."""
        out = []
        for line in self.stdout.splitlines():
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict):
                    out.append(value)
        return out

    @property
    def result(self) -> dict[str, Any] | None:
        return next((e for e in reversed(self.events) if e.get("type") == "result"), None)

    def tool_results(self) -> list[str]:
        """The text of every tool result Claude Code sent back (what its tools printed)."""
        out = []
        for event in self.events:
            content = (event.get("message") or {}).get("content") if event.get("type") == "user" else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    value = block.get("content")
                    out.append(value if isinstance(value, str) else json.dumps(value))
        return out

    def describe(self) -> str:
        return f"claude exited {self.returncode}\n--- stdout ---\n{self.stdout[-6000:]}\n" \
               f"--- stderr ---\n{self.stderr[-4000:]}"


ALLOWED_TOOLS = "Bash Edit Write Read"
"""The tools a test's `claude -p` may run without asking (docs/claude-code.md "Set-up": in `-p`
nobody answers a permission prompt, so a tool that asks is refused)."""


def run_claude(prompt: str, *, base_url: str | None, home: Path, work: Path, model: str | None = None,
               args: Sequence[str] = (), timeout: float = 180.0, key: str = CLIENT_KEY,
               stream_json: bool = True, proxy_url: str | None = None,
               ca_cert: Path | None = None, env: Mapping[str, str] | None = None,
               then: Sequence[str] = (), allowed_tools: str | None = ALLOWED_TOOLS) -> ClaudeRun:
    """`claude -p PROMPT` in `work`, every request to `base_url`, with the tools a test needs allowed.
    `stream_json`: print its events (`--output-format stream-json --verbose`; Claude Code then asks
    for thinking updates, `display: "updates"`), else only its answer, as a user's `claude -p`
    does (`display: "omitted"`: thinking blocks come back as their signature alone). Regular
    mode: no `base_url`, the gateway as `proxy_url` (HTTPS_PROXY) and its CA in
    NODE_EXTRA_CA_CERTS. `env`: more of its variables. `then`: more prompts of the same session,
    each sent once the one before is answered (its stream-json input: a slash command such as
    `/model NAME` and then a turn). `allowed_tools`: its `--allowedTools` (None: none given)."""
    home.mkdir(parents=True, exist_ok=True)
    environ = {name: os.environ[name] for name in _ENV_KEEP if name in os.environ}
    if base_url is not None:
        environ["ANTHROPIC_BASE_URL"] = base_url
    if proxy_url is not None:
        environ["HTTPS_PROXY"] = proxy_url
    if ca_cert is not None:
        environ["NODE_EXTRA_CA_CERTS"] = str(ca_cert)
    environ.update(HOME=str(home), ANTHROPIC_API_KEY=key,
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
                   DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1", NO_PROXY="127.0.0.1,localhost")
    environ.update(env or {})
    allowed = ["--allowedTools", allowed_tools] if allowed_tools is not None else []
    command = [str(claude_binary()), "-p", *allowed, *args]
    if stream_json:
        command += ["--output-format", "stream-json", "--verbose"]
    if model:
        command += ["--model", model]
    stdin = None
    if then:
        command += ["--input-format", "stream-json"]
        stdin = "".join(json.dumps({"type": "user", "message": {"role": "user", "content": said}}) + "\n"
                        for said in (prompt, *then))
    else:
        command.insert(2, prompt)
    done = subprocess.run(command, cwd=work, env=environ, input=stdin,
                          stdin=subprocess.DEVNULL if stdin is None else None, capture_output=True,
                          text=True, timeout=timeout)
    return ClaudeRun(done.returncode, done.stdout, done.stderr)
