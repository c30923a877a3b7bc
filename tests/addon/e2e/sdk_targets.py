"""What the OpenAI Agents SDK e2e modules share: the four local targets behind one mitmdump in
reverse mode, each on a route that names its key variable (a local host gets no key otherwise:
`addon/routes/routing.py` `key_env_for`), and the fake answers as the local upstream's next replies."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tests.addon.e2e.conftest import UPSTREAM_KEY, StartProxy
from tests.addon.e2e.upstream import Reply, raw_stream
from tests.support import fake_upstream
from tests.support.mitmdump import MitmDump

CHAT_KEY = "sk-chat-e2e-agents-secret-0123456789"
GEMINI_KEY = "AIza-e2e-agents-gemini-secret-0123456789"
BEDROCK_KEY = "bedrock-api-key-e2e-agents-0123456789"
CLAUDE = "claude-sonnet-4-6"
QWEN = "qwen3-coder"
DEEPSEEK = "deepseek-chat"
GEMINI = "gemini-3-flash-preview"
BEDROCK_CLAUDE = "us.anthropic.claude-sonnet-4-6"
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "chat": "E2E_AGENTS_CHAT_KEY", "gemini": "GEMINI_API_KEY",
           "bedrock": "AWS_BEARER_TOKEN_BEDROCK"}
_KEYS = {"ANTHROPIC_API_KEY": UPSTREAM_KEY, "E2E_AGENTS_CHAT_KEY": CHAT_KEY, "GEMINI_API_KEY": GEMINI_KEY,
         "AWS_BEARER_TOKEN_BEDROCK": BEDROCK_KEY}


def write_routes(path: Path, upstream_url: str, routes: Mapping[str, tuple[str, str]]) -> Path:
    """A `gateway_config` file: client model pattern -> (dialect, upstream model), every route to
    the one local upstream (Chat under `/v1`, as OpenAI-compatible servers are)."""
    tables = []
    for pattern, (dialect, target) in routes.items():
        base_url = f"{upstream_url}/v1" if dialect == "chat" else upstream_url
        tables.append(f'[[route]]\nmodel = "{pattern}"\nupstream = "{dialect}"\n'
                      f'base_url = "{base_url}"\ntarget_model = "{target}"\nkey_env = "{KEY_ENV[dialect]}"\n')
    path.write_text("\n".join(tables))
    return path


def start(start_proxy: StartProxy, name: str, routes: Path) -> MitmDump:
    """The proxy with every target's key in its environment and no AWS chain to sign with."""
    env: dict[str, str | None] = {**_KEYS, "AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None,
                                  "AWS_PROFILE": None}
    return start_proxy(name, "reverse:https://api.openai.com", env=env, gateway_config=str(routes),
                       gateway_aws_region="us-west-2")


def planned(reply: fake_upstream.Reply, delay: float = 0.005) -> Reply:
    """A `fake_upstream` answer as the local upstream's next reply: a whole body as it is, a
    stream chunk by chunk."""
    status, headers, body = reply
    if isinstance(body, bytes):
        return Reply("json", status=status, body=body, headers=dict(headers))
    return raw_stream(list(body), headers["content-type"], delay=delay)
