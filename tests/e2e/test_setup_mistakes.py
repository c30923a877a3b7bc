"""A setup that is wrong, through real mitmdump (addon/serve/misconfigured.py, docs/console.md "When
a setup is wrong"): each mistake gets the client's own error shape (Responses for Codex and the
openai SDK, Anthropic's for a Messages client) with a message that names the fix, and one gateway
line on the console that names it too. Codex itself shows the message (the real CLI, 0.169.0).

- a request sent to a regular proxy as if it were the API (a relative URL): 421, `--mode reverse:`;
- a model no route takes, passed on to a destination that cannot be reached: 502, the route to add;
- a route whose key variable is unset: 401, the variable and `gateway_key_env` / `key_env`;
- a route that sends no key while the dialect's own variable is set: the vendor's 401, and how to
  send it (`gateway_key_env`).
(An option's typo stops mitmdump: tests/addon/observe/test_unknown_options.py.)"""

from __future__ import annotations

import json
import re
import socket
import ssl
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from anthropic.types.shared import ErrorResponse

from addon.team import clients_file
from tests.e2e import test_readme as readme
from tests.support import claude_code_cli, codex_cli
from tests.support.fake_upstream import FakeUpstream, Reply, anthropic_text, json_reply
from tests.support.mitmdump import MitmDump

TIMEOUT = 60.0
UNSET = "VLLM_KEY"
"""A key variable the test removes from mitmdump's environment."""
CONSOLE_DOC = Path(__file__).resolve().parents[2] / "docs" / "console.md"
CONSOLE_SECTION = "## When a setup is wrong"
CLIENTS: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {
    "responses": ("/v1/responses", {"model": "gpt-5.5", "input": "say hi", "stream": True},
                  {"authorization": "Bearer sk-client"}),
    "messages": ("/v1/messages", {"model": "claude-opus-5-5", "max_tokens": 100, "stream": True,
                                  "messages": [{"role": "user", "content": "say hi"}]},
                 {"x-api-key": "sk-ant-client", "anthropic-version": "2023-06-01"}),
}


def post(base: str, client: str, **body: Any) -> httpx.Response:
    path, turn, headers = CLIENTS[client]
    return httpx.post(base + path, json={**turn, **body}, headers=headers, timeout=TIMEOUT)


def said(client: str, answer: httpx.Response, status: int, code: str) -> str:
    """The answer is the client's own error with this status (the gateway's `code` in the
    Responses shape; the anthropic SDK's `ErrorResponse` for a Messages client); its message."""
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    if client == "responses":
        assert set(body) == {"error"} and set(body["error"]) == {"type", "code", "message", "param"}
        assert body["error"]["code"] == code
        return str(body["error"]["message"])
    assert set(body) == {"type", "error"}
    return ErrorResponse.model_validate(body).error.message


def lines_with(proxy: MitmDump, text: str) -> list[str]:
    """The lines holding `text`, once mitmdump's output shows one (it is read by a thread, so a
    line may arrive after the answer it was logged before)."""
    deadline = time.monotonic() + TIMEOUT
    while not (found := [line for line in proxy.log.splitlines() if text in line]):
        if time.monotonic() > deadline or proxy.returncode is not None:
            break
        time.sleep(0.05)
    return found


def documented(name: str) -> list[str]:
    """The lines docs/console.md "When a setup is wrong" shows under `**name**`."""
    section = CONSOLE_DOC.read_text().split(CONSOLE_SECTION, 1)[1].split("\n## ", 1)[0]
    part = section.split(f"**{name}**", 1)[1]
    return [line for line in re.findall(r"```\n(.*?)```", part, flags=re.S)[0].splitlines() if line.strip()]


def shows(proxy: MitmDump, name: str, same: Mapping[str, str] | None = None) -> None:
    """Each line docs/console.md shows for this mistake was printed (times cut, numbers alike,
    `…` at a line's end for the rest of it, as tests/e2e/test_readme.py reads that page), once;
    `same`: what the test's run has in place of what the page shows (a local fake's URL)."""
    printed = proxy.log.splitlines()
    for old, new in (same or {}).items():
        printed = [line.replace(old, new) for line in printed]
    for line in documented(name):
        found = [p for p in printed if readme.alike(readme.shape(line), readme.shape(p))]
        assert len(found) == 1, f"docs/console.md {name!r}: {line!r} printed {len(found)} times in:\n" \
            + "\n".join(readme.shape(p) for p in printed)


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as server:
        return int(server.getsockname()[1])


# -- a relative URL in regular mode -----------------------------------------------------------------
@pytest.mark.parametrize(("client", "api"), [("responses", "https://api.openai.com"),
                                             ("messages", "https://api.anthropic.com")])
def test_a_request_to_a_regular_proxy_as_if_it_were_the_api_names_reverse_mode(
        tmp_path: Path, client: str, api: str) -> None:
    with FakeUpstream(lambda *_: anthropic_text("hi")) as upstream, MitmDump(
            tmp_path / "conf", options={"gateway_upstream": "anthropic", "gateway_base_url": upstream.url,
                                        "gateway_model": "*=claude-sonnet-4-6",
                                        "gateway_capabilities": "table"}) as proxy:
        message = said(client, post(proxy.url, client), 421, "misdirected_request")
        assert f"start mitmdump with --mode reverse:{api} for a client whose base URL is {proxy.url}" \
            in message
        (line,) = lines_with(proxy, "--mode reverse:")
        if client == "responses":
            shows(proxy, "A client pointed at a regular proxy")
    path = CLIENTS[client][0]
    assert f"POST {path} | 421 | refused: the gateway runs as a regular proxy" in line
    assert not upstream.requests and "Request destination unknown" not in proxy.log


def test_codex_pointed_at_a_regular_proxy_shows_the_mode_to_use(tmp_path: Path) -> None:
    options = {"gateway_upstream": "anthropic", "gateway_model": "*=claude-sonnet-4-6",
               "gateway_capabilities": "table"}
    with MitmDump(tmp_path / "conf", options=options,
                  env={"ANTHROPIC_API_KEY": "k-unused-0123"}) as proxy:
        # its start-up calls (github.com, chatgpt.com) go to a closed port, never the internet
        setup = codex_cli.openai_provider_setup(
            tmp_path / "codex", proxy_url=f"http://127.0.0.1:{closed_port()}",
            openai_base_url=proxy.url + "/v1", no_proxy="127.0.0.1,localhost")
        run = codex_cli.run_codex_exec(setup, "say hi", tmp_path, timeout=120)
    failed = [e for e in run.events if e.get("type") == "turn.failed"]
    assert failed, run.describe()
    assert "--mode reverse:https://api.openai.com" in failed[-1]["error"]["message"], run.describe()
    # its WebSocket is tried once (426), then each POST is one line
    assert len(lines_with(proxy, "GET /v1/responses | 426 | refused:")) == 1, proxy.log


# -- no route, and the destination cannot be reached -----------------------------------------------
@pytest.mark.parametrize(("client", "route_file"), [("responses", False), ("messages", True)])
def test_a_model_no_route_takes_whose_destination_is_unreachable_names_the_route_to_add(
        tmp_path: Path, client: str, route_file: bool) -> None:
    unreachable = f"https://127.0.0.1:{closed_port()}"
    with FakeUpstream(lambda *_: anthropic_text("hi")) as upstream:
        options = {"gateway_capabilities": "table"}
        if route_file:
            config = tmp_path / "routes.toml"
            config.write_text(f'[[route]]\nmodel = "gpt-5*"\nupstream = "anthropic"\n'
                              f'base_url = "{upstream.url}"\ntarget_model = "claude-sonnet-4-6"\n')
            options["gateway_config"] = str(config)
        else:
            options |= {"gateway_upstream": "anthropic", "gateway_base_url": upstream.url,
                        "gateway_model": "gpt-5*=claude-sonnet-4-6"}
        # the reverse target stands for OpenAI (or the host a Messages client named), unreachable
        with MitmDump(tmp_path / "conf", mode=f"reverse:{unreachable}", options=options,
                      args=("--set", "gateway_match=/v1/responses", "--set", "gateway_match=/v1/messages")
                      ) as proxy:
            answer = post(proxy.url, client, model="o3")
            message = said(client, answer, 502, "no_route")
            assert answer.headers["x-should-retry"] == "false"  # the anthropic SDK's retries
            (line,) = lines_with(proxy, "matched no route")
            if not route_file:
                shows(proxy, "A model no route takes, its destination unreachable",
                      {unreachable: "https://127.0.0.1:9"})
    assert f"model 'o3' matches no gateway route, so it went on untranslated: {unreachable} cannot be " \
           "reached (" in message
    fix = (f'add a [[route]] with model = "*" (or the model\'s name) at the end of {config} (gateway_config)'
           if route_file else "end gateway_model with *=MODEL")
    assert fix in message and fix in line
    assert line.split("] ", 1)[1].startswith(f"o3 matched no route | 502 | {unreachable} cannot be reached")
    assert not upstream.requests and "<html>" not in proxy.log


def test_the_start_up_warning_names_the_reverse_target_and_the_route_file(tmp_path: Path) -> None:
    config = tmp_path / "routes.toml"
    config.write_text('[[route]]\nmodel = "gpt-5*"\nupstream = "anthropic"\n'
                      'base_url = "http://127.0.0.1:9"\ntarget_model = "claude-sonnet-4-6"\n')
    with MitmDump(tmp_path / "conf", mode="reverse:https://api.anthropic.com",
                  options={"gateway_config": str(config), "gateway_capabilities": "table"}) as proxy:
        pass
    (line,) = lines_with(proxy, "matches no route")
    assert ("a client model that matches no route goes on untranslated to https://api.anthropic.com: "
            'add a [[route]] with model = "*"') in line
    assert "OpenAI" not in line and "gateway_model" not in line


# -- a key variable not set -------------------------------------------------------------------------
@pytest.mark.parametrize("client", ["responses", "messages"])
def test_a_route_whose_key_variable_is_unset_is_refused_naming_it(tmp_path: Path, client: str) -> None:
    with FakeUpstream(lambda *_: anthropic_text("hi")) as upstream, MitmDump(
            tmp_path / "conf", mode="reverse:https://api.openai.com",
            options={"gateway_upstream": "chat", "gateway_base_url": upstream.url + "/v1",
                     "gateway_model": "*=qwen3-coder", "gateway_key_env": UNSET,
                     "gateway_capabilities": "table"}, env={UNSET: None}) as proxy:
        message = said(client, post(proxy.url, client), 400, "upstream_key_missing")
        (line,) = lines_with(proxy, "refused: the gateway has no key")
        (warning,) = lines_with(proxy, f"route *: ${UNSET} is not set")
        if client == "responses":
            shows(proxy, "A key variable not set", {upstream.url: "http://127.0.0.1:8000"})
    assert f"${UNSET} is not set or empty" in message and "--set gateway_key_env=VARIABLE" in message
    path, turn, _ = CLIENTS[client]
    assert f"POST {path} {turn['model']} | 400 | refused: the gateway has no key for {upstream.url}" in line
    assert "its requests are refused (400)" in warning
    assert not upstream.requests


def _chat_without_key(_body: Any, headers: Mapping[str, str], _path: str) -> Reply:
    """DeepSeek's (and OpenAI's) Chat Completions answer a request without a bearer key 401
    (api-docs.deepseek.com "Error Codes": 401 Authentication Fails)."""
    if "authorization" not in {name.lower() for name in headers}:
        said_ = "Authentication Fails, Your api key: ****None is invalid"
        return json_reply(401, {"error": {"message": said_, "type": "authentication_error", "param": None,
                                          "code": "invalid_request_error"}})
    return json_reply(500, {"error": {"message": "not expected here"}})


def test_a_dialect_key_not_sent_to_another_host_says_which_option_sends_it(tmp_path: Path) -> None:
    with FakeUpstream(_chat_without_key) as upstream, MitmDump(
            tmp_path / "conf", mode="reverse:https://api.openai.com",
            options={"gateway_upstream": "chat", "gateway_base_url": upstream.url + "/v1",
                     "gateway_model": "*=deepseek-chat", "gateway_capabilities": "table"},
            env={"DEEPSEEK_API_KEY": "sk-deepseek-test-0123"}) as proxy:
        answer = post(proxy.url, "responses", stream=False)
        (route,) = lines_with(proxy, "route * -> chat deepseek-chat")
        lines_with(proxy, "gpt-5.5 -> chat deepseek-chat")
        shows(proxy, "A key not sent to another host", {upstream.url: "http://127.0.0.1:8000"})
    assert answer.status_code == 401
    message = json.loads(answer.text)["error"]["message"]
    assert "Authentication Fails" in message  # the vendor's own word, kept
    assert "the gateway sent no key: $DEEPSEEK_API_KEY is set but goes only to" in message
    assert "--set gateway_key_env=DEEPSEEK_API_KEY sends it here" in message
    assert "no key ($DEEPSEEK_API_KEY is set but goes only to" in route
    assert "sk-deepseek-test-0123" not in proxy.log + answer.text


# -- refusals, one line each ------------------------------------------------------------------------
def test_each_refusal_is_one_line_naming_who_the_path_and_why(tmp_path: Path) -> None:
    ana, bo = (clients_file.KEY_PREFIX + f"{name}-e2e-key-0123456789abcdefghij" for name in ("ana", "bo"))
    (tmp_path / "clients.toml").write_text(
        clients_file.table(clients_file.Client("ana", clients_file.hash_key(ana), ("gpt-5*",)))
        + clients_file.table(clients_file.Client("bo", clients_file.hash_key(bo), requests_per_minute=1)))
    refusals = [  # (headers, path, body, status, the console line's start)
        # a key is checked before the body is read: no model yet
        ({}, "/v1/responses", {}, 401,
         "[no key] POST /v1/responses | 401 | refused: Missing gateway client key"),
        ({"authorization": "Bearer gwk-wrong"}, "/v1/responses", {}, 401,
         "[no key] POST /v1/responses | 401 | refused: Incorrect API key provided"),
        ({"authorization": f"Bearer {ana}"}, "/v1/responses", {"model": "o3"}, 403,
         "[ana] POST /v1/responses o3 | 403 | refused: client 'ana' may not use model 'o3'"),
        ({"authorization": f"Bearer {ana}"}, "/v1/responses", {"input": "x" * 5000}, 413,
         "[ana] POST /v1/responses | 413 | refused: the request body is"),
        ({"authorization": f"Bearer {ana}"}, "/v1/other", {}, 404,
         "[ana] POST /v1/other | 404 | refused: the gateway does not serve POST /v1/other"),
        ({"authorization": f"Bearer {bo}"}, "/v1/responses", {}, 200, "[bo] gpt-5.5 -> anthropic"),
        ({"authorization": f"Bearer {bo}"}, "/v1/responses", {}, 429,
         "[bo] POST /v1/responses gpt-5.5 | 429 | refused: client 'bo'"),
    ]
    with FakeUpstream(lambda *_: anthropic_text("hi")) as upstream, MitmDump(
            tmp_path / "conf", mode="reverse:https://api.openai.com",
            options={"gateway_upstream": "anthropic", "gateway_base_url": upstream.url,
                     "gateway_model": "*=claude-sonnet-4-6", "gateway_capabilities": "table",
                     "gateway_clients": str(tmp_path / "clients.toml"), "gateway_max_request_bytes": "2000"}
            ) as proxy:
        for headers, path, body, status, line in refusals:
            answer = httpx.post(proxy.url + path, json={**CLIENTS["responses"][1], "stream": False, **body},
                                headers=headers, timeout=TIMEOUT)
            assert answer.status_code == status, answer.text
            found = lines_with(proxy, line)
            assert len(found) == 1, (line, proxy.log)
        shows(proxy, "Refused requests")


# -- what the real clients show ---------------------------------------------------------------------
def test_claude_code_pointed_at_a_regular_proxy_shows_the_mode_to_use(tmp_path: Path) -> None:
    options = {"gateway_upstream": "anthropic", "gateway_model": "*=claude-sonnet-4-6",
               "gateway_capabilities": "table"}
    (tmp_path / "work").mkdir()
    with MitmDump(tmp_path / "conf", options=options, env={"ANTHROPIC_API_KEY": "k-unused-0123"}) as proxy:
        run = claude_code_cli.run_claude("say hi", base_url=proxy.url, home=tmp_path / "home",
                                         work=tmp_path / "work", timeout=120)
    result = run.result or {}
    assert result.get("is_error") and result.get("api_error_status") == 421, run.describe()
    assert "--mode reverse:https://api.anthropic.com" in str(result.get("result")), run.describe()


@pytest.mark.parametrize("client", ["codex", "claude"])
def test_a_real_client_shows_which_key_variable_is_missing_at_once(tmp_path: Path, client: str) -> None:
    """A 400: neither client retries it (a 401 Claude Code retries for minutes, docs/console.md)."""
    options = {"gateway_upstream": "chat", "gateway_base_url": f"http://127.0.0.1:{closed_port()}/v1",
               "gateway_model": "*=qwen3-coder", "gateway_key_env": UNSET, "gateway_capabilities": "table"}
    api = "https://api.openai.com" if client == "codex" else "https://api.anthropic.com"
    (tmp_path / "work").mkdir()
    with MitmDump(tmp_path / "conf", mode=f"reverse:{api}", options=options, env={UNSET: None}) as proxy:
        if client == "codex":
            setup = codex_cli.openai_provider_setup(
                tmp_path / "codex", proxy_url=f"http://127.0.0.1:{closed_port()}",
                openai_base_url=proxy.url + "/v1", no_proxy="127.0.0.1,localhost")
            codex = codex_cli.run_codex_exec(setup, "say hi", tmp_path / "work", timeout=120)
            failed = [e["error"]["message"] for e in codex.events if e.get("type") == "turn.failed"]
            shown, describe = (failed[-1] if failed else ""), codex.describe()
        else:
            claude = claude_code_cli.run_claude("say hi", base_url=proxy.url, home=tmp_path / "home",
                                                work=tmp_path / "work", timeout=120)
            shown, describe = str((claude.result or {}).get("result")), claude.describe()
        turns = lines_with(proxy, "refused: the gateway has no key")
    assert f"${UNSET} is not set or empty" in shown and "gateway_key_env" in shown, describe
    assert len([line for line in turns if "/v1/responses" in line]) <= 1, proxy.log  # Codex: not retried


def test_a_refused_tunnel_is_one_line_naming_the_host(tmp_path: Path) -> None:
    (tmp_path / "clients.toml").write_text(clients_file.table(clients_file.Client(
        "ana", clients_file.hash_key(clients_file.KEY_PREFIX + "ana-e2e-key-0123456789abcdefghij"))))
    options = {"gateway_upstream": "anthropic", "gateway_capabilities": "table",
               "gateway_model": "*=claude-sonnet-4-6", "gateway_clients": str(tmp_path / "clients.toml")}
    with MitmDump(tmp_path / "conf", options=options,
                  env={"ANTHROPIC_API_KEY": "k-unused-0123"}) as proxy:
        trust = ssl.create_default_context(cafile=str(proxy.ca_cert))
        with httpx.Client(proxy=proxy.url, verify=trust, timeout=TIMEOUT) as client, \
                pytest.raises(httpx.ProxyError, match="407"):
            client.get("https://example.com/")
        found = lines_with(proxy, "[no key] CONNECT example.com:443 | 407 | refused: this gateway passes")
    assert len(found) == 1, proxy.log


def test_claude_code_shows_a_model_no_route_takes_at_once(tmp_path: Path) -> None:
    """`x-should-retry: false` on the 502: Claude Code shows it instead of retrying for minutes."""
    options = {"gateway_upstream": "chat", "gateway_base_url": f"http://127.0.0.1:{closed_port()}/v1",
               "gateway_model": "qwen*=qwen3-coder", "gateway_capabilities": "table"}
    (tmp_path / "work").mkdir()
    with MitmDump(tmp_path / "conf", mode=f"reverse:https://127.0.0.1:{closed_port()}", options=options,
                  args=("--set", "gateway_match=/v1/messages")) as proxy:
        run = claude_code_cli.run_claude("say hi", base_url=proxy.url, home=tmp_path / "home",
                                         work=tmp_path / "work", timeout=120)
        lines = lines_with(proxy, "matched no route |")
    shown = str((run.result or {}).get("result"))
    assert "matches no gateway route" in shown and "end gateway_model with *=MODEL" in shown, run.describe()
    assert len(lines) == 1, proxy.log
