"""The four upstream targets of the Codex e2e tests (compaction, catalog), as fakes a script can drive,
and the three ways Codex reaches the gateway (docs/codex.md "Compaction", "Model catalog").

A `Target` names a dialect, the upstream model a route maps `gpt-5*` to, and how its fake answers
with text or with one `exec_command` call, each reporting a chosen number of input tokens (Codex
decides when to compact from them). A local Bedrock gets the bearer key the route names
(`AWS_BEARER_TOKEN_BEDROCK` through `key_env`: a route to a local host sends only a named key), and
turns away a request without it. `texts` reads what a translated request says, whatever its dialect.

Setups: `regular` (the built-in `openai` provider through mitmdump's regular mode: remote
compaction, catalog fetched from chatgpt.com's URL), `openai_base_url` (reverse mode, built-in
provider: remote compaction, no catalog fetch) and `custom_provider` (reverse mode, the README's
provider with `model_catalog_url`: local compaction).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from addon.routes.catalog import GATEWAY_PATH
from tests.support.codex_cli import (
    CLASSIC_MODEL,
    REPO_ROOT,
    CodexRun,
    CodexSetup,
    MitmDump,
    codex_mitmdump,
    custom_provider_setup,
    openai_provider_setup,
    run_codex_exec,
)
from tests.support.fake_upstream import (
    FakeUpstream,
    Reply,
    anthropic_text,
    anthropic_tool_use,
    bedrock_text,
    bedrock_tool_use,
    chat_text,
    chat_tool_call,
    empty_reply,
    gemini_function_call,
    gemini_text,
)

GATEWAY_ADDON = REPO_ROOT / "addon" / "gateway.py"
TOOL = "exec_command"
TOOL_INPUT = {"cmd": "ls"}
BEDROCK_KEY_ENV = "AWS_BEARER_TOKEN_BEDROCK"
BEDROCK_KEY = "bedrock-api-key-e2e-codex-0123456789"
PROMPT = "list the workspace"


@dataclass(frozen=True)
class Target:
    dialect: str
    model: str
    """The upstream model `gpt-5*` is routed to."""
    text: Callable[[str, int], Reply]
    """(text, input tokens) -> a stream answering that text."""
    tool_call: Callable[[int], Reply]
    """(input tokens) -> a stream calling `exec_command` with `{"cmd": "ls"}`."""
    route: Mapping[str, str] = field(default_factory=dict)
    """Extra `[[route]]` keys (the key variable a local Bedrock needs)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """What mitmdump's environment needs for this target."""

    def admits(self, headers: Mapping[str, str]) -> bool:
        """A local Bedrock knows one bearer key; the other fakes take any request."""
        return self.dialect != "bedrock" or headers.get("authorization") == f"Bearer {BEDROCK_KEY}"

    def __str__(self) -> str:
        return self.dialect


TARGETS = (
    Target("anthropic", "claude-sonnet-4-6",
           lambda text, n: anthropic_text(text, model="claude-sonnet-4-6", input_tokens=n),
           lambda n: anthropic_tool_use(TOOL, TOOL_INPUT, "toolu_01e2e", model="claude-sonnet-4-6",
                                        input_tokens=n)),
    Target("chat", "deepseek-chat",
           lambda text, n: chat_text(text, prompt_tokens=n),
           lambda n: chat_tool_call(TOOL, TOOL_INPUT, "call_e2e1", prompt_tokens=n)),
    Target("gemini", "gemini-3-flash-preview",
           lambda text, n: gemini_text(text, input_tokens=n),
           lambda n: gemini_function_call(TOOL, TOOL_INPUT, input_tokens=n)),
    Target("bedrock", "us.anthropic.claude-sonnet-4-6",
           lambda text, n: bedrock_text(text, input_tokens=n),
           lambda n: bedrock_tool_use(TOOL, TOOL_INPUT, "tooluse_e2e1", input_tokens=n),
           route={"key_env": BEDROCK_KEY_ENV}, env={BEDROCK_KEY_ENV: BEDROCK_KEY}),
)


# -- what a translated request says ------------------------------------------------------------
def is_turn(body: Any) -> bool:
    """A translated model request of any of the four dialects (not a models-endpoint GET)."""
    return isinstance(body, dict) and (isinstance(body.get("messages"), list)
                                       or isinstance(body.get("contents"), list))


def texts(body: Any) -> list[tuple[str, str]]:
    """(role, text) of every text in a request body, in order: Anthropic and Bedrock blocks, Chat
    strings and parts, Gemini parts (role `user` or `model`). System prompts are left out."""
    if not is_turn(body):
        return []
    out: list[tuple[str, str]] = []
    for message in body.get("messages") or body.get("contents") or []:
        role = message.get("role")
        content = message.get("content", message.get("parts"))
        if isinstance(content, str):
            out.append((role, content))
        elif isinstance(content, list):
            out += [(role, b["text"]) for b in content
                    if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return [(role, text) for role, text in out if role != "system"]


TOOL_RESULT_MARKS = ('"tool_result"', '"role": "tool"', '"functionResponse"', '"toolResult"')
"""How each dialect carries a tool's result: Anthropic, Chat, Gemini, Bedrock."""


def has_tool_result(body: Any) -> bool:
    said = json.dumps(body.get("messages") or body.get("contents"))
    return any(mark in said for mark in TOOL_RESULT_MARKS)


def turns(upstream: FakeUpstream) -> list[Any]:
    return [r.json for r in upstream.requests if is_turn(r.json)]


def script(target: Target, reported: int, *, is_summary_request: Callable[[Any], bool], summary: str,
           closing: str) -> Callable[..., Reply]:
    """A summary request gets `summary`; a request after a tool result, or any request once the
    summary was given, gets `closing`; anything else the tool call, reported at `reported` input
    tokens. Small usage on every text answer, so Codex never compacts twice, and a run whose
    follow-up lost the summary still ends at once (the test's assertions then say what is missing)."""
    summarized = threading.Event()

    def answer(body: Any, headers: Mapping[str, str], _path: str) -> Reply:
        if not is_turn(body):
            return empty_reply(404)  # a models-endpoint GET: the gateway falls back to its table
        if not target.admits(headers):
            return empty_reply(403)
        if is_summary_request(body):
            summarized.set()
            return target.text(summary, 300)
        if summarized.is_set() or has_tool_result(body):
            return target.text(closing, 300)
        return target.tool_call(reported)

    return answer


# -- the gateway and Codex ---------------------------------------------------------------------
def write_routes(path: Path, routes: list[dict[str, Any]]) -> Path:
    """A `gateway_config` file: one `[[route]]` table per entry, values as TOML (JSON's strings,
    numbers and booleans are TOML's)."""
    path.write_text("".join("[[route]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in entry.items())
                            for entry in routes))
    return path


def routes_file(tmp_path: Path, target: Target, upstream: FakeUpstream, **extra: Any) -> Path:
    """`gpt-5*` -> the target's fake, with `extra` route keys (e.g. context_window)."""
    return write_routes(tmp_path / "routes.toml", [
        {"model": "gpt-5*", "upstream": target.dialect, "base_url": upstream.url,
         "target_model": target.model, **target.route, **extra}])


def gateway(tmp_path: Path, target: Target, config: Path, mode: str | None, **options: str) -> MitmDump:
    return codex_mitmdump(tmp_path / "mitm", mode=mode, scripts=[GATEWAY_ADDON],
                          options={"gateway_config": str(config), **options}, env=dict(target.env))


REVERSE = "reverse:https://api.openai.com"
SETUPS = ("regular", "openai_base_url", "custom_provider")
REMOTE = ("regular", "openai_base_url")
"""The setups with the built-in `openai` provider, which compacts remotely."""


def mode_of(setup: str) -> str | None:
    return None if setup == "regular" else REVERSE


def codex_setup(setup: str, home: Path, mitm: MitmDump, black_hole: FakeUpstream) -> CodexSetup:
    if setup == "regular":
        return openai_provider_setup(home, proxy_url=mitm.url, ca_cert=mitm.ca_cert)
    if setup == "openai_base_url":
        return openai_provider_setup(home, proxy_url=black_hole.url, openai_base_url=f"{mitm.url}/v1",
                                     no_proxy="127.0.0.1,localhost")
    return custom_provider_setup(home, base_url=f"{mitm.url}/v1", proxy_url=black_hole.url,
                                 model=CLASSIC_MODEL, model_catalog_url=f"{mitm.url}{GATEWAY_PATH}")


@dataclass
class Outcome:
    run: CodexRun
    upstream: FakeUpstream
    mitm: MitmDump
    setup: CodexSetup

    def context(self) -> str:
        return (f"{self.run.describe()}\n--- mitmdump ---\n{self.mitm.log}\n"
                f"--- upstream errors ---\n{self.upstream.errors}")


def run_codex(tmp_path: Path, setup: str, target: Target, answer: Callable[..., Reply],
              black_hole: FakeUpstream, *, route: Mapping[str, Any] | None = None,
              extra_args: tuple[str, ...] = ()) -> Outcome:
    """One `codex exec` through the gateway in `setup`, `gpt-5*` routed to the target's fake."""
    work = tmp_path / "work"
    work.mkdir()
    with FakeUpstream(answer) as up:
        config = routes_file(tmp_path, target, up, **(route or {}))
        with gateway(tmp_path, target, config, mode_of(setup)) as mitm:
            setup_ = codex_setup(setup, tmp_path / "codex", mitm, black_hole)
            run = run_codex_exec(setup_, PROMPT, work, timeout=180, extra_args=extra_args)
    return Outcome(run, up, mitm, setup_)
