"""addon/team/accounting.py: a streamed turn whose flow failed counts once: whole when the client
had its terminal event (a success, no error), else partial, from the usage the upstream had
reported so far (an Anthropic stream says its input tokens in `message_start`,
docs.claude.com/en/api/messages-streaming)."""

from __future__ import annotations

from typing import Any

from mitmproxy.test import tflow

from addon.observe import flowinfo
from addon.serve.streaming import StreamHook
from addon.team import accounting
from tests.support import fake_upstream
from translators import stream_translator, translate_request

CLAUDE = "claude-sonnet-4-6"


class Budgets:
    def __init__(self) -> None:
        self.settled: list[tuple[Any, bool]] = []

    def settle(self, _flow: Any, used: Any, *, partial: bool = False) -> None:
        self.settled.append((used, partial))


def _hook(chunks: list[bytes]) -> StreamHook:
    translation = translate_request({"model": "gpt-5.5", "input": "Hi.", "stream": True}, "anthropic", CLAUDE)
    hook = StreamHook(stream_translator("anthropic", translation))
    for chunk in chunks:
        hook(chunk)
    return hook


def _flow() -> Any:
    flow = tflow.tflow()
    flow.metadata[flowinfo.KEY] = flowinfo.record("anthropic", CLAUDE)
    return flow


CHUNKS = list(fake_upstream.anthropic_text("Hello there.", model=CLAUDE, input_tokens=321)[2])


def test_a_client_that_had_the_terminal_event_closed_after_a_success() -> None:
    budgets, flow = Budgets(), _flow()
    hook = _hook(CHUNKS)
    assert hook.delivered_whole
    assert accounting.ended_early(budgets, flow, None, hook, "Client disconnected.") is None  # type: ignore[arg-type]
    ((used, partial),) = budgets.settled
    assert not partial and used["input_tokens"] == 321 and used["output_tokens"] == 7
    info = flow.metadata[flowinfo.KEY]
    assert "error" not in info and "usage_partial" not in info and info["cost_usd"] > 0


def test_a_client_that_left_mid_answer_counts_what_was_reported_as_partial() -> None:
    budgets, flow = Budgets(), _flow()
    hook = _hook(CHUNKS[:3])  # message_start and the text's first events
    assert not hook.delivered_whole
    error = accounting.ended_early(budgets, flow, None, hook, "Client disconnected.")  # type: ignore[arg-type]
    assert error == "Client disconnected."
    ((used, partial),) = budgets.settled
    assert partial and used["input_tokens"] == 321
    info = flow.metadata[flowinfo.KEY]
    assert info["usage_partial"] is True and info["usage"]["input_tokens"] == 321


def test_a_stream_the_upstream_broke_is_not_whole() -> None:
    hook = _hook(CHUNKS[:3])
    hook.cut("the upstream broke off")
    assert hook.translator.finished and not hook.delivered_whole
