"""What the gateway says on mitmproxy's console (addon/observe/console.py, docs/console.md): through real
mitmdump where mitmdump decides (start-up, option errors, `-q`), on a recorded flow's metadata for
the wording of a flow line."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mitmproxy.test import tflow, tutils

from addon.observe import console, flowinfo
from addon.routes.route_file import from_toml
from addon.routes.routing import Route, Router
from tests.support.fake_upstream import FakeUpstream, Reply, anthropic_text, json_reply, responses_text
from tests.support.mitmdump import GATEWAY, MITMDUMP, ROOT, MitmDump
from translators import dialect as dialects

CODEX_DEFAULT_MODEL = "gpt-6.1-sol"
KEY_ENV = "GATEWAY_TEST_CONSOLE_KEY"
"""A key variable no one sets: the route names it, and the console must say it is missing."""
REQUEST = {"model": CODEX_DEFAULT_MODEL, "input": "say hi", "stream": True}
WAIT = 60.0
"""How long a test waits for a line it expects; a passing run sees it at once."""


def wait_for(proxy: MitmDump, text: str) -> str:
    """The first log line holding `text`, once mitmdump printed it."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        for line in list(proxy.output):
            if text in line:
                return line
        if proxy.returncode is not None:
            break
        time.sleep(0.05)
    raise AssertionError(f"no line with {text!r} in:\n{proxy.log}")


@pytest.fixture
def anthropic() -> Iterator[FakeUpstream]:
    with FakeUpstream(lambda _body, _headers, _path: anthropic_text("hi", input_tokens=42)) as up:
        yield up


def gateway(tmp_path: Path, upstream: FakeUpstream, *, model: str = "claude-sonnet-4-6",
            args: tuple[str, ...] = ()) -> MitmDump:
    return MitmDump(tmp_path / "conf", mode="reverse:https://api.openai.com", args=args,
                    options={"gateway_upstream": "anthropic", "gateway_base_url": upstream.url,
                             "gateway_model": model, "gateway_key_env": KEY_ENV,
                             "gateway_capabilities": "table"},
                    env={KEY_ENV: None})


def post(proxy_url: str, body: dict[str, Any] | None = None) -> httpx.Response:
    return httpx.post(f"{proxy_url}/v1/responses", json=body or REQUEST, timeout=WAIT,
                      headers={"authorization": "Bearer sk-client"})


# -- start-up, through mitmdump -------------------------------------------------------------------
def test_startup_names_each_route_and_warns_of_its_missing_key(tmp_path: Path,
                                                                anthropic: FakeUpstream) -> None:
    with gateway(tmp_path, anthropic, model="gpt-5*=claude-sonnet-4-6,*=claude-haiku-4-5") as proxy:
        first = wait_for(proxy, "route gpt-5* -> anthropic claude-sonnet-4-6")
        second = wait_for(proxy, "route * -> anthropic claude-haiku-4-5")
        missing = wait_for(proxy, f"route gpt-5*: ${KEY_ENV} is not set")
    assert anthropic.url in first and f"key ${KEY_ENV} (NOT SET)" in first
    assert anthropic.url in second
    assert "without a key" in missing
    assert "matches no route" not in proxy.log  # `*=` catches every model


def test_startup_says_a_model_without_a_route_goes_untranslated(tmp_path: Path,
                                                                 anthropic: FakeUpstream) -> None:
    with gateway(tmp_path, anthropic, model="gpt-5*=claude-sonnet-4-6") as proxy:
        line = wait_for(proxy, "matches no route")
    assert "passes to OpenAI untranslated" in line and "*=MODEL" in line


@pytest.mark.parametrize(("option", "says"), [
    ("gateway_upstream=antropic", "unknown upstream 'antropic': write one of"),
    ("gateway_web_search=sometimes", "gateway_web_search 'sometimes': write one of"),
])
def test_a_bad_option_is_one_line_and_nothing_listens(tmp_path: Path, option: str, says: str) -> None:
    done = subprocess.run([str(MITMDUMP), "--listen-host", "127.0.0.1", "-p", "0", "--set",
                           f"confdir={tmp_path}", "-s", str(GATEWAY), "--set", option],
                          cwd=ROOT, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("mitmdump: ") and says in line
    assert "Traceback" not in done.stdout + done.stderr
    assert "listening" not in done.stdout + done.stderr


# -- per flow, through mitmdump -------------------------------------------------------------------
def test_a_translated_flow_is_one_line_with_route_status_tokens_and_notes(tmp_path: Path,
                                                                          anthropic: FakeUpstream) -> None:
    with gateway(tmp_path, anthropic) as proxy:
        answer = post(proxy.url)
        assert answer.status_code == 200
        line = wait_for(proxy, f"{CODEX_DEFAULT_MODEL} -> anthropic claude-sonnet-4-6")
    assert " | 200 | " in line
    assert "42 in, " in line  # the usage the client got
    assert f"no upstream key: ${KEY_ENV} is not set" in line


def test_a_request_no_route_takes_is_said_to_pass_untranslated(tmp_path: Path) -> None:
    openai_like: Callable[[Any, Any, str], Reply] = lambda _b, _h, _p: responses_text("from openai")  # noqa: E731
    with FakeUpstream(openai_like) as openai_, FakeUpstream(lambda *_: json_reply(500, {})) as unused:
        proxy = MitmDump(tmp_path / "conf", mode=f"reverse:{openai_.url}",
                         options={"gateway_upstream": "anthropic", "gateway_base_url": unused.url,
                                  "gateway_model": "gpt-5*=claude-sonnet-4-6",
                                  "gateway_capabilities": "table", "gateway_match": "/v1/responses"})
        with proxy:
            assert post(proxy.url, {**REQUEST, "model": "o3"}).status_code == 200
            line = wait_for(proxy, "o3 matched no route")
    assert f"passed untranslated to {openai_.url}/v1/responses (200)" in line
    assert len(openai_.requests) == 1 and not unused.requests


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as server:
        return int(server.getsockname()[1])


def test_quiet_mitmdump_prints_no_gateway_line(tmp_path: Path, anthropic: FakeUpstream) -> None:
    """`-q` prints neither the start-up lines nor the flow lines (mitmdump's own -q: log level
    error, flow_detail 0); the same run without -q prints both (the tests above)."""
    port = free_port()
    command = [str(MITMDUMP), "-q", "--listen-host", "127.0.0.1", "-p", str(port),
               "--mode", "reverse:https://api.openai.com", "--set", f"confdir={tmp_path / 'conf'}",
               "-s", str(GATEWAY), "--set", "gateway_upstream=anthropic",
               "--set", f"gateway_base_url={anthropic.url}",
               "--set", "gateway_model=gpt-5*=claude-sonnet-4-6",
               "--set", f"gateway_key_env={KEY_ENV}", "--set", "gateway_capabilities=table"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + WAIT
        while True:  # -q hides "listening at": wait for the port instead
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "mitmdump did not start"
                time.sleep(0.05)
        answer = post(f"http://127.0.0.1:{port}", {**REQUEST, "model": "gpt-5.5"})
        assert answer.status_code == 200 and "hi" in answer.text
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=WAIT)
    assert anthropic.requests, output  # the flow was translated
    assert "route" not in output and "gpt-5.5" not in output and KEY_ENV not in output, output


# -- the wording, on a flow's record --------------------------------------------------------------
def recorded(info: dict[str, Any], status: int = 200) -> Any:
    flow = tflow.tflow(resp=tutils.tresp(status_code=status))
    flow.metadata[flowinfo.KEY] = info
    return flow


def test_flow_line_names_lossy_drops_collapsed_and_leaves_cosmetic_ones_out() -> None:
    line = console.flow_line(recorded({
        "client_model": "gpt-5.5", "upstream": "chat", "model": "deepseek-chat",
        "dropped": ["tools[9]", "input[2].phase", "input[5].phase", "text.verbosity"],
        "cosmetic": ["input[2].phase", "input[5].phase", "text.verbosity"], "notes": [],
        "usage": {"input_tokens": 10, "output_tokens": 3}}))
    assert line == "gpt-5.5 -> chat deepseek-chat | 200 | 10 in, 3 out | dropped: tools[9]"


def test_flow_line_says_a_refusal_and_cuts_a_long_note() -> None:
    note = "web search dropped: the client asked for cached results only " + "x" * 200
    line = console.flow_line(recorded({"client_model": "gpt-5.5", "upstream": "gemini",
                                       "model": "gemini-3-pro-preview", "dropped": [], "notes": [note],
                                       "refused": "prompt is OpenAI's"}, status=400))
    assert line is not None
    assert " | 400 | refused: prompt is OpenAI's | web search dropped: the client asked" in line
    assert line.endswith("…") and len(line.rsplit(" | ", 1)[1]) == console.NOTE_CHARS


def test_flow_line_names_the_client_when_client_keys_are_on() -> None:
    line = console.flow_line(recorded({"client": "ana", "client_model": "gpt-5.5", "upstream": "chat",
                                       "model": "deepseek-chat", "dropped": [], "notes": []}))
    assert line == "[ana] gpt-5.5 -> chat deepseek-chat | 200"


def test_flow_line_says_the_turns_cost_after_its_tokens() -> None:
    line = console.flow_line(recorded({"client_model": "gpt-5.5", "upstream": "anthropic",
                                       "model": "claude-sonnet-4-6", "dropped": [], "notes": [],
                                       "usage": {"input_tokens": 1200, "output_tokens": 7},
                                       "cost_usd": 0.003705}))
    assert line == "gpt-5.5 -> anthropic claude-sonnet-4-6 | 200 | 1200 in, 7 out | $0.003705"


def test_a_flow_the_gateway_never_saw_has_no_line() -> None:
    assert console.flow_line(tflow.tflow(resp=True)) is None


def test_route_line_says_how_each_route_authenticates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "set")
    keyed = Route("gpt-5*", dialects.get("chat"), "http://127.0.0.1:8000/v1", "qwen", KEY_ENV)
    keyless = Route("*", dialects.get("chat"), "http://127.0.0.1:8000/v1", None, None)
    assert console.route_line(keyed) == (f"route gpt-5* -> chat qwen at http://127.0.0.1:8000/v1, "
                                         f"key ${KEY_ENV} (set)")
    assert console.route_line(keyless).endswith("(the client's model) at http://127.0.0.1:8000/v1, no key")
    assert console.missing_keys(Router(routes=(keyed, keyless))) == []


def test_a_route_of_deployments_names_each_at_start_up(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where each deployment of a pool goes and with which key (docs/pools.md), not the table's
    own upstream, which no request of the pool is sent to."""
    monkeypatch.setenv("POOL_KEY_A", "sk-ant-a-0123456789")
    monkeypatch.delenv("POOL_KEY_B", raising=False)
    routes = tmp_path / "routes.toml"
    routes.write_text('[[route]]\nmodel = "gpt-*"\nupstream = "anthropic"\n'
                      'target_model = "claude-sonnet-4-6"\ndeployments = ['
                      '{ name = "a", base_url = "http://127.0.0.1:1", key_env = "POOL_KEY_A" }, '
                      '{ name = "b", base_url = "http://127.0.0.1:2", key_env = "POOL_KEY_B" }]\n')
    (route,) = from_toml(str(routes))
    line = console.route_line(route)
    assert line == ("route gpt-* -> a: anthropic claude-sonnet-4-6 at http://127.0.0.1:1, "
                    "key $POOL_KEY_A (set); b: anthropic claude-sonnet-4-6 at http://127.0.0.1:2, "
                    "key $POOL_KEY_B (NOT SET)")
    assert "api.anthropic.com" not in line
    (warning,) = console.missing_keys(Router(routes=(route,)))
    assert warning.startswith("route gpt-* deployment b: $POOL_KEY_B is not set")
