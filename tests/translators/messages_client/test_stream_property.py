"""Whatever IR events arrive, in whatever order, the client gets a stream the anthropic SDK
accepts: every event of its types, `message_start` first when anything is said, and exactly one
end (the IR's contract: a `key` names one upstream block, its kind fixed)."""

from __future__ import annotations

import random

from tests.support.depth import examples
from tests.translators.messages_client.sdk import validate_stream
from translators.core.ids import sequential_ids
from translators.core.report import Report
from translators.ir import events as ev
from translators.ir.request import VendorState
from translators.messages_client import MessagesEncoder

STATES = [
    None,
    VendorState(dialect="chat", text="r"),
    VendorState(dialect="anthropic", signature="sig", text="r"),
    VendorState(dialect="anthropic", redacted="opaque"),
    VendorState(dialect="gemini", signature="g"),
]


def _event(rng: random.Random) -> ev.Event:
    n = rng.randrange(3)
    return rng.choice(
        [
            lambda: ev.Started(),
            lambda: ev.TextDelta(("text", n), rng.choice(["", "a", "é\n", "\ud83d"])),
            lambda: ev.TextDone(("text", n)),
            lambda: ev.ReasoningDelta(("reasoning", n), "r"),
            lambda: ev.ReasoningDone(("reasoning", n), rng.choice(STATES)),
            lambda: ev.ToolCallStarted(("call", n), rng.choice(["", f"c{n}"]), "Bash"),
            lambda: ev.ToolCallDelta(("call", n), rng.choice(['{"a"', ":1}", ""])),
            lambda: ev.ToolCallDone(("call", n), rng.choice([None, "{}", "not json"])),
            lambda: ev.Usage(
                input_tokens=rng.randrange(50),
                output_tokens=rng.randrange(50),
                cached_tokens=rng.choice([None, 3]),
            ),
            lambda: ev.WebSearch(
                ("search", n), "q", ["https://a.example/"], rng.choice(STATES[:2]), rng.random() < 0.3
            ),
            lambda: ev.Citation(("text", n), "https://a.example/", "A", 0, 1),
            lambda: ev.Finished(
                rng.choice(["stop", "tool_calls", "max_output_tokens", "stop_sequence", "odd"])
            ),
            lambda: ev.Failed(rng.choice(["server_error", "rate_limit_exceeded"]), "x"),
            lambda: ev.Unknown("output.x"),
            lambda: ev.Note("n"),
        ]
    )()


def test_any_event_sequence_is_a_valid_stream_with_one_end() -> None:
    rng = random.Random(28)  # seeded: a failure repeats
    for case in range(examples(400)):
        events = [_event(rng) for _ in range(rng.randrange(1, 14))]
        for show_thinking in (True, False):
            encoder = MessagesEncoder(
                model="m", report=Report(), new_id=sequential_ids(), show_thinking=show_thinking
            )
            cut = rng.randrange(len(events) + 1)
            data = encoder.encode(events[:cut]) + encoder.encode(events[cut:]) + encoder.finish()
            try:
                validate_stream(data)
            except Exception as exc:
                raise AssertionError(f"case {case}: {events!r}") from exc
            assert encoder.finished
