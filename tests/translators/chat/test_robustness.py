"""Whatever bytes arrive, only the package's own error type leaves the decoder (docs/design.md "Tests")."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import hostile_sse
from tests.support.depth import at_both_depths, examples
from tests.translators.chat.chatdata import recorded, recorded_chunks, translation
from tests.translators.streamcheck import assert_valid_responses_stream, run
from translators.chat.stream import ChatDecoder
from translators.core.errors import TranslatorError

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
_KEYS = [
    "content",
    "reasoning_content",
    "reasoning",
    "tool_calls",
    "refusal",
    "role",
    "index",
    "id",
    "function",
    "custom",
    "name",
    "arguments",
    "input",
    "type",
    "choices",
    "delta",
    "finish_reason",
    "usage",
    "error",
]


def _feed_all(data: bytes) -> None:
    decoder = ChatDecoder()
    try:
        decoder.feed(data)
        decoder.close()
    except TranslatorError:
        pass


CHAT_STREAMS = [hostile_sse.payloads_in(recorded(name))
                for name in ("tool_call_fragmented_args.sse", "parallel_tool_calls.sse",
                             "reasoning_content_stream.sse", "reasoning_then_tool_call.jsonl")]


@at_both_depths
def test_hostile_payloads_in_well_formed_frames_raise_only_the_packages_errors() -> None:
    reached: list[bool] = []

    @settings(max_examples=examples(200), deadline=None, derandomize=True, database=None)
    @given(st.data())
    def run_one(data: st.DataObject) -> None:
        body = data.draw(hostile_sse.sse_body(CHAT_STREAMS, named=False, done=True))
        chunks = data.draw(hostile_sse.chunked(body))
        reached.append(hostile_sse.reached(hostile_sse.decoded(ChatDecoder(), chunks)))

    hostile_sse.assert_most_examples_reach_the_handlers(run_one, reached)


@at_both_depths
def test_odd_chunk_shapes_raise_only_the_packages_errors() -> None:
    @settings(max_examples=examples(300))
    @given(st.lists(st.dictionaries(st.sampled_from(_KEYS), _JSON, max_size=5), max_size=6))
    def check(chunks: list[dict]) -> None:
        _feed_all(b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks))

    check()


@at_both_depths
def test_recorded_stream_with_a_field_replaced_still_ends_in_one_terminal_event() -> None:
    @settings(max_examples=examples(100))
    @given(st.data())
    def check(data: st.DataObject) -> None:
        chunks = recorded_chunks("reasoning_then_tool_call.jsonl")
        at = data.draw(st.integers(0, len(chunks) - 1))
        choice = chunks[at]["choices"][0] if chunks[at]["choices"] else chunks[at]
        key = data.draw(st.sampled_from(sorted(choice.get("delta", choice))))
        (choice.get("delta", choice))[key] = data.draw(_JSON)
        stream = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"
        assert_valid_responses_stream(run("chat", translation("deepseek-reasoner"), [stream]))

    check()


def test_truncated_recording_ends_in_one_failure() -> None:
    data = recorded("tool_call_single.sse")
    cut = data[: data.index(b'"finish_reason":"tool_calls"') - 200]
    payloads = assert_valid_responses_stream(run("chat", translation("gpt-4o-mini"), [cut]))
    assert payloads[-1]["type"] == "response.failed"
