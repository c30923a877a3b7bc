"""Install and drive the real Codex CLI (``@openai/codex@0.169.0``) in tests, plus a mitmdump runner.

What was verified with this harness (2026-11, codex-cli 0.169.0, native musl binary, x86_64), by
``tests/e2e/test_codex_harness.py`` (Codex straight at a fake Responses upstream, and through mitmdump with a
pass-through addon; no gateway):

Setup (a), built-in ``openai`` provider, model ``gpt-5.5``, ``CODEX_API_KEY=sk-client-fake``::

    # $CODEX_HOME/config.toml
    model = "gpt-5.5"
    check_for_update_on_startup = false
    openai_base_url = "http://127.0.0.1:PORT/v1"   # only when pointing Codex straight at a fake upstream
    [analytics]
    enabled = false

- Through mitmdump (regular mode): ``HTTPS_PROXY``/``HTTP_PROXY`` (both cases) = the proxy and
  ``CODEX_CA_CERTIFICATE=<confdir>/mitmproxy-ca-cert.pem``; no NO_PROXY. Codex CONNECTs to
  api.openai.com:443 and speaks **HTTP/2** inside the tunnel (mitmdump logs the flows as ``HTTP/2.0``).
- First a ``GET /v1/responses`` WebSocket upgrade (``openai-beta: responses_websockets=2026-02-06``,
  ``version: 0.169.0``, bearer key); the gateway serves it (docs/websocket.md); answered 426 it is
  tried once, then Codex POSTs.
- The POST has ``tools`` = exec_command, write_stdin, request_user_input, **apply_patch (custom, lark
  grammar)**, view_image, get_goal, create_goal, update_goal, tool_search, web_search;
  ``parallel_tool_calls: true``; ``authorization: Bearer sk-client-fake``.
- A ``custom_tool_call`` apply_patch (``*** Add File: hello.txt``) with ``-s workspace-write`` created the
  file; the second request ends with the echoed ``custom_tool_call`` and a ``custom_tool_call_output``
  whose output is one string, lines "Exit code: 0", "Wall time: ...", "Output:", "Success. Updated the
  following files:", "A hello.txt".
  With the built-in provider both items also carry ``internal_chat_message_metadata_passthrough``.
- Start-up traffic, all through the proxy and harmless when refused: CONNECT github.com, api.github.com,
  chatgpt.com (``GET chatgpt.com/backend-api/codex/models?client_version=0.169.0`` up to 3 times,
  ``api.github.com/repos/openai/plugins``, ``chatgpt.com/backend-api/plugins/export/curated``), even when
  ``openai_base_url`` points at a local server.

Setup (b), custom provider + Responses Lite code-mode model from ``model_catalog_json``::

    model = "claude-sonnet-4-6"
    model_provider = "gateway"
    model_catalog_json = "$CODEX_HOME/model_catalog.json"   # lite_code_mode_catalog(), written per test
    check_for_update_on_startup = false
    [model_providers.gateway]
    name = "Dialect gateway"
    base_url = "http://127.0.0.1:PORT/v1"                   # mitmdump --mode reverse:https://api.openai.com
    wire_api = "responses"
    env_key = "GATEWAY_CLIENT_KEY"                          # = sk-client-fake
    [analytics]
    enabled = false

- ``HTTPS_PROXY`` points at a loopback black hole (403 to everything) with ``NO_PROXY=127.0.0.1,localhost``,
  so the same start-up calls (github.com, api.github.com, chatgpt.com) are caught and never leave the machine.
- No WebSocket attempt. The POST has no ``tools``; ``input[0]`` is ``additional_tools`` with namespace
  ``functions`` = [exec (custom, JS grammar), wait, request_user_input] and namespace ``clock`` = [sleep];
  ``parallel_tool_calls: false``; ``reasoning: {"effort": "medium", "summary": "auto", "context":
  "all_turns"}``; header ``x-openai-internal-codex-responses-lite: true``. The ``exec`` description
  (~22 KB) declares the nested tools as TypeScript (apply_patch, exec_command, write_stdin, view_image,
  goals, MCP resources, ``clock__curr_time``, ``multi_agent_v1__*``).
- A ``custom_tool_call`` ``exec`` with ``const r = await tools.exec_command({cmd: "echo hi > js.txt"});
  text(r);`` ran ``/bin/bash -lc 'echo hi > js.txt'`` in the sandbox (js.txt appeared); the next request
  carries ``custom_tool_call_output`` whose ``output`` is an array of ``input_text`` items ("Script
  completed ...", then the JSON result of exec_command).

Both: stdin must be /dev/null (``codex exec`` still prints "Reading additional input from stdin..."), and
Codex warns "Refusing to create helper binaries under temporary dir /tmp" when CODEX_HOME is under /tmp;
that warning is harmless (apply_patch and exec work). Each run took about 1-2 s against a local fake.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from tests.support.mitmdump import MitmDump

REPO_ROOT = Path(__file__).resolve().parents[2]
CODEX_VERSION = "0.169.0"
CODEX_PREFIX = REPO_ROOT / ".cache" / "codex"
NPM_INSTALL_TIMEOUT = 900.0

CLIENT_API_KEY = "sk-client-fake"
CLIENT_KEY_ENV = "CODEX_API_KEY"  # `codex exec` sends this as the bearer token of the built-in provider
CUSTOM_PROVIDER_ID = "gateway"
CUSTOM_KEY_ENV = "GATEWAY_CLIENT_KEY"
LITE_MODEL = "claude-sonnet-4-6"
CLASSIC_MODEL = "gpt-5.5"

# The only host variables Codex gets; anything else (API keys, proxies, CODEX_*, OPENAI_*) would leak the
# developer's setup into the run.
_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "LOGNAME")


# --------------------------------------------------------------------------------------------------------
# Installation
# --------------------------------------------------------------------------------------------------------


def _installed_version() -> str | None:
    manifest = CODEX_PREFIX / "node_modules" / "@openai" / "codex" / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def _find_binary() -> Path | None:
    # The platform package is an npm alias such as @openai/codex-linux-x64 or @openai/codex-linux-arm64,
    # and the vendor dir is the Rust target triple, so glob rather than hard-code either.
    pattern = "node_modules/@openai/codex-*/vendor/*/bin/codex"
    candidates = sorted(p for p in CODEX_PREFIX.glob(pattern) if p.is_file() and os.access(p, os.X_OK))
    return candidates[0] if candidates else None


@contextlib.contextmanager
def _install_lock() -> Iterator[None]:
    # pytest-xdist workers (or two pytest runs) may all want the binary; only one may run npm.
    CODEX_PREFIX.mkdir(parents=True, exist_ok=True)
    with (CODEX_PREFIX / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _npm_install() -> None:
    spec = f"@openai/codex@{CODEX_VERSION}"
    command = ["npm", "install", "--prefix", str(CODEX_PREFIX), "--no-audit", "--no-fund", spec]
    result = subprocess.run(command, capture_output=True, text=True, timeout=NPM_INSTALL_TIMEOUT)
    if result.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
        )


def codex_binary() -> Path:
    """The native ``codex`` binary, installing ``@openai/codex@0.169.0`` into ``<repo>/.cache/codex`` once.

    The native binary is used directly (not ``bin/codex.js``) so that signals and timeouts hit Codex itself
    rather than a node wrapper.
    """
    # Always under the lock: a concurrent npm install may have a half-extracted binary in place.
    with _install_lock():
        binary = _find_binary()
        if binary is None or _installed_version() != CODEX_VERSION:
            _npm_install()
            binary = _find_binary()
    if binary is None:
        raise RuntimeError(
            f"npm installed @openai/codex@{CODEX_VERSION} but no native binary under {CODEX_PREFIX}"
        )
    return binary


# --------------------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------------------


@dataclass
class CodexSetup:
    """Everything one Codex run needs: its CODEX_HOME, its environment and extra ``codex exec`` flags."""

    home: Path
    env: dict[str, str]
    args: list[str] = field(default_factory=list)


def _toml_value(value: Any) -> str:
    # JSON string/number/bool literals are valid TOML for the plain values used here.
    return json.dumps(value)


def _write_config(home: Path, top: Mapping[str, Any], tables: Mapping[str, Mapping[str, Any]]) -> None:
    lines = [f"{key} = {_toml_value(value)}" for key, value in top.items()]
    for name, table in tables.items():
        lines += ["", f"[{name}]", *(f"{key} = {_toml_value(value)}" for key, value in table.items())]
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("\n".join(lines) + "\n")


def _base_env(home: Path, proxy_url: str | None, no_proxy: str | None) -> dict[str, str]:
    env = {key: os.environ[key] for key in _ENV_KEEP if key in os.environ}
    # A private HOME keeps ~/.codex, ~/.gitconfig and friends of the developer out of the run.
    fake_home = home.parent / "home"
    fake_home.mkdir(parents=True, exist_ok=True)
    env |= {"HOME": str(fake_home), "CODEX_HOME": str(home), "NO_COLOR": "1"}
    if proxy_url:
        # Both cases: Codex's reqwest honours either spelling; plain-http start-up calls use HTTP_PROXY.
        for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
            env[name] = proxy_url
    if no_proxy:
        env["NO_PROXY"] = env["no_proxy"] = no_proxy
    return env


_COMMON_CONFIG: Mapping[str, Any] = {
    # No update check and no analytics: both would be extra traffic to the internet.
    "check_for_update_on_startup": False,
}
_COMMON_TABLES: Mapping[str, Mapping[str, Any]] = {"analytics": {"enabled": False}}


def openai_provider_setup(
    home: Path,
    *,
    proxy_url: str,
    ca_cert: Path | None = None,
    openai_base_url: str | None = None,
    no_proxy: str | None = None,
    model: str = CLASSIC_MODEL,
) -> CodexSetup:
    """Setup (a): the built-in ``openai`` provider, as a user would run it behind the gateway.

    Through mitmproxy in regular mode: ``proxy_url`` is the proxy and ``ca_cert`` its CA; Codex POSTs to
    ``https://api.openai.com/v1/responses`` via CONNECT. ``openai_base_url`` (with ``no_proxy`` covering it)
    instead points the provider straight at a local server, which the harness self-test uses.
    """
    top: dict[str, Any] = {"model": model, **_COMMON_CONFIG}
    if openai_base_url:
        top["openai_base_url"] = openai_base_url  # OPENAI_BASE_URL (the env var) is ignored by 0.169.0
    _write_config(home, top, _COMMON_TABLES)
    env = _base_env(home, proxy_url, no_proxy)
    env[CLIENT_KEY_ENV] = CLIENT_API_KEY
    if ca_cert is not None:
        env["CODEX_CA_CERTIFICATE"] = str(ca_cert)
    return CodexSetup(home, env)


def lite_code_mode_catalog(slug: str = LITE_MODEL) -> dict[str, Any]:
    """A ``model_catalog_json`` document defining ``slug`` as a Responses Lite, code-mode-only model.

    Written from scratch (nothing copied from the binary's bundled catalog). 0.169.0 rejects an entry that
    lacks any of ``display_name``, ``supported_reasoning_levels``, ``shell_type``, ``visibility``,
    ``supported_in_api``, ``priority``, ``support_verbosity``, ``truncation_policy``,
    ``experimental_supported_tools`` ("missing field ..."), or both ``base_instructions`` and
    ``model_messages.instructions_template``. The rest chooses the wire shape under test.
    """
    entry = {
        "slug": slug,
        "display_name": f"{slug} via dialect-gateway",
        "base_instructions": "You are Codex, a coding agent. Use the tools to work in the workspace.",
        # Tools travel in an `additional_tools` input item instead of a top-level `tools` array.
        "use_responses_lite": True,
        # The only top-level function tool becomes the freeform JavaScript `exec` (nested tools inside).
        "tool_mode": "code_mode_only",
        # Also exposes apply_patch (freeform) among the nested tools of `exec`.
        "apply_patch_tool_type": "freeform",
        # `clock` puts a namespace other than `functions` into additional_tools.
        "experimental_supported_tools": ["clock"],
        "shell_type": "shell_command",
        "supported_reasoning_levels": [{"effort": "medium", "description": "default"}],
        "default_reasoning_level": "medium",
        "support_verbosity": False,
        "truncation_policy": {"mode": "tokens", "limit": 10000},
        "context_window": 200000,
        "visibility": "list",
        "supported_in_api": True,
        "priority": 1,
    }
    return {"models": [entry]}


def custom_provider_setup(
    home: Path,
    *,
    base_url: str,
    proxy_url: str | None,
    no_proxy: str = "127.0.0.1,localhost",
    model: str = LITE_MODEL,
    model_catalog_url: str | None = None,
) -> CodexSetup:
    """Setup (b): a custom ``responses`` provider at ``base_url`` with the Lite code-mode model ``model``.

    Behind the gateway, ``base_url`` is mitmproxy in reverse mode (``http://127.0.0.1:PORT/v1``); no CA is
    needed. ``proxy_url`` should be a loopback black hole for Codex's start-up calls to github.com & co.
    With ``model_catalog_url`` the provider fetches its catalog from there instead (no
    ``model_catalog_json``; ``model`` should then be a slug of Codex's bundled catalog, e.g. gpt-5.5).
    """
    home.mkdir(parents=True, exist_ok=True)
    top: dict[str, Any] = {"model": model, "model_provider": CUSTOM_PROVIDER_ID}
    provider = {
        "name": "Dialect gateway",
        "base_url": base_url,
        "wire_api": "responses",
        "env_key": CUSTOM_KEY_ENV,
    }
    if model_catalog_url:
        provider["model_catalog_url"] = model_catalog_url
    else:
        catalog = home / "model_catalog.json"
        catalog.write_text(json.dumps(lite_code_mode_catalog(model), indent=2))
        top["model_catalog_json"] = str(catalog)
    top.update(_COMMON_CONFIG)
    _write_config(home, top, {f"model_providers.{CUSTOM_PROVIDER_ID}": provider, **_COMMON_TABLES})
    env = _base_env(home, proxy_url, no_proxy)
    env[CUSTOM_KEY_ENV] = CLIENT_API_KEY
    return CodexSetup(home, env)


# --------------------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------------------


class CodexRun(NamedTuple):
    """Result of ``codex exec``; unpacks as ``(returncode, stdout, stderr)``."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def events(self) -> list[dict[str, Any]]:
        """The ``--json`` JSONL events on stdout (non-JSON lines are skipped)."""
        events = []
        for line in self.stdout.splitlines():
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if isinstance(event, dict):
                    events.append(event)
        return events

    def items(self, item_type: str) -> list[dict[str, Any]]:
        """Completed items of one type, e.g. ``agent_message`` or ``file_change``."""
        return [
            e["item"]
            for e in self.events
            if e.get("type") == "item.completed" and e.get("item", {}).get("type") == item_type
        ]

    @property
    def final_message(self) -> str:
        messages = self.items("agent_message")
        return str(messages[-1].get("text", "")) if messages else ""

    def describe(self) -> str:
        return f"exit {self.returncode}\n--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"


def run_codex_exec(
    setup: CodexSetup,
    prompt: str,
    cwd: Path,
    *,
    timeout: float = 120.0,
    extra_args: Sequence[str] = (),
) -> CodexRun:
    """``codex exec --json --skip-git-repo-check -s workspace-write [extra] PROMPT < /dev/null`` in ``cwd``.

    stdin is /dev/null because ``codex exec`` otherwise waits to append piped stdin to the prompt. On timeout
    the whole process group (Codex and its sandboxed children) is killed and the partial output returned
    with return code -9.
    """
    command = [
        str(codex_binary()),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "-s",
        "workspace-write",
        *setup.args,
        *extra_args,
        prompt,
    ]
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=setup.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        return CodexRun(-9, stdout, stderr + f"\n[harness] killed after {timeout} s")
    return CodexRun(process.returncode, stdout, stderr)


def bundled_catalog(timeout: float = 60.0) -> bytes:
    """``codex debug models --bundled``: the model catalog shipped inside the binary, as it prints it
    (``{"models": [ModelInfo, ...]}``). Run with a private, empty CODEX_HOME and no network settings,
    so no config and no cached catalog can colour it."""
    with tempfile.TemporaryDirectory(prefix="codex-bundled-") as tmp:
        home = Path(tmp) / "codex"
        home.mkdir()
        env = _base_env(home, None, None)
        result = subprocess.run([str(codex_binary()), "debug", "models", "--bundled"], env=env,
                                stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"codex debug models --bundled failed ({result.returncode}): {result.stderr!r}")
    return result.stdout


# --------------------------------------------------------------------------------------------------------
# mitmdump
# --------------------------------------------------------------------------------------------------------

# A safety net so that nothing leaves the machine, whatever the addon does. mitmproxy's block_list answers
# every request except POST /v1/responses to api.openai.com and requests to loopback (an addon may already
# have re-targeted a flow to the fake upstream in `requestheaders`) itself: Codex's start-up calls to
# chatgpt.com and github.com (the /models fetch, plugins) get 404. The WebSocket attempt gets 426 (a
# single try, then HTTPS) unless the addon took it first (a translated route: docs/websocket.md).
# The block list runs in `request`, before `-s` scripts, and last match wins, so the general rule
# comes first. "#" separates the fields.
OFFLINE_BLOCK_LIST: tuple[str, ...] = (
    r"#!(~d ^127\.0\.0\.1$ | (~m POST & ~u api\.openai\.com/v1/responses))#404",
    r"#~m GET & ~u api\.openai\.com/v1/responses#426",
)


def codex_mitmdump(confdir: Path, **kwargs: Any) -> MitmDump:
    """mitmdump with the offline safety net: everything but POST api.openai.com/v1/responses and
    loopback is answered locally, so Codex's start-up calls never leave the machine."""
    kwargs.setdefault("block_list", OFFLINE_BLOCK_LIST)
    return MitmDump(confdir, **kwargs)

