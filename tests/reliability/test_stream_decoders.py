"""Upstream stream decoders of every dialect against recorded and broken streams.

What holds (docs/design.md "Tests", h11's `fuzz/afl-server.py` approach):
- a recorded stream gives the same client bytes fed whole, one byte at a time, in fixed-size
  chunks, split in two at every position (or, for the long recordings, every position near an
  event boundary and a stride elsewhere) and split at random many times over;
- a broken stream (cut, garbage, invalid UTF-8, bad JSON in a `data:` line, an unknown event, a
  Bedrock frame with a bad CRC) is reported and the stream goes on, or the response ends with
  exactly one `response.failed`;
- a dialect decoder never raises, whatever bytes arrive: it ends with a finish or exactly one
  `Failed` event, and decodes nothing after it (translators/wire/decoding.py); the public
  `stream_translator` never raises and always ends with exactly one terminal event.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.reliability import mutations
from tests.reliability.budget import STREAM_FUZZ, STREAM_SPLITS, fuzz
from tests.reliability.recorded import DECODER_DIALECTS, Recording, recordings, recordings_of, translation_for
from tests.reliability.streams import (
    client_stream,
    data_payloads,
    decode,
    deltas,
    sized,
    sse_data_lines,
    terminal_type,
    text_of,
    translate,
)
from tests.support import conformance, hostile_sse
from tests.translators.bedrock.frames import frame_offsets
from translators import stream_translator
from translators.ir import events as ev

ALL = recordings()
SSE = [r for r in ALL if r.framing in ("named-sse", "data-sse")]
EVERY_SPLIT_UP_TO = 3000
"""Recordings up to this size are split at every byte; longer ones near every event boundary."""


def _ids(recs: list[Recording]) -> list[str]:
    return [r.id for r in recs]


def _boundaries(rec: Recording) -> list[int]:
    if rec.framing == "eventstream":
        return frame_offsets(rec.data)
    return [m.end() for m in re.finditer(rb"\n\n|\r\n\r\n|,\r?\n|\[|\]", rec.data)]


def _sample(points: list[int], count: int) -> list[int]:
    """`count` of `points`, evenly spread, first and last included (deterministic)."""
    if len(points) <= count:
        return points
    step = (len(points) - 1) / (count - 1)
    return [points[round(i * step)] for i in range(count)]


def split_points(rec: Recording) -> list[int]:
    """Every byte of a short recording; for a long one, both sides of 40 event boundaries
    (the first, the last and evenly between) and 100 more positions spread over the stream."""
    size = len(rec.data)
    if size <= EVERY_SPLIT_UP_TO:
        return list(range(1, size))
    near = {p + d for p in _sample(_boundaries(rec), 40) for d in (-2, -1, 0, 1, 2)}
    return sorted(p for p in near | set(range(1, size, size // 100)) if 0 < p < size)


def _run(rec: Recording, chunks: list[bytes]) -> bytes:
    return translate(rec.dialect, translation_for(rec.dialect), chunks)


# -- recorded streams: chunking never changes the output ---------------------------------------


@pytest.mark.parametrize("rec", ALL, ids=_ids(ALL))
def test_recorded_stream_gives_identical_output_however_it_is_split(rec: Recording) -> None:
    expected = _run(rec, [rec.data])
    payloads = client_stream(rec.dialect, expected)
    assert payloads[-1]["type"] == "response.completed"
    assert _run(rec, sized(rec.data, 1)) == expected, "byte by byte"
    for size in (2, 3, 7, 64, 1000):
        assert _run(rec, sized(rec.data, size)) == expected, f"{size}-byte chunks"
    for at in split_points(rec):
        assert _run(rec, [rec.data[:at], rec.data[at:]]) == expected, f"split at byte {at}"


@pytest.mark.parametrize(
    "rec",
    [r for r in ALL if r.dialect in DECODER_DIALECTS],
    ids=_ids([r for r in ALL if r.dialect in DECODER_DIALECTS]),
)
def test_recorded_stream_decoder_events_do_not_depend_on_chunking(rec: Recording) -> None:
    translation = translation_for(rec.dialect)
    whole = decode(rec.dialect, translation, [rec.data])
    assert not any(isinstance(e, ev.Failed) for e in whole)
    assert any(isinstance(e, ev.Finished) for e in whole)
    assert decode(rec.dialect, translation, sized(rec.data, 1)) == whole
    assert decode(rec.dialect, translation, sized(rec.data, 5)) == whole


@fuzz(STREAM_SPLITS)
@given(st.data())
def test_random_multi_splits_give_identical_output(data: st.DataObject) -> None:
    rec = data.draw(st.sampled_from(ALL), label="recording")
    chunks = data.draw(mutations.chunking(rec.data), label="chunks")
    assert _run(rec, chunks) == _run(rec, [rec.data])


# -- cut streams ----------------------------------------------------------------------------------


def _cut_points(rec: Recording) -> list[int]:
    """Both sides of up to 30 event boundaries and 40 positions spread over the stream."""
    points = {p for b in _sample(_boundaries(rec), 30) for p in (b - 1, b, b + 1)}
    points |= set(range(0, len(rec.data), max(1, len(rec.data) // 40)))
    return sorted(p for p in points if 0 <= p < len(rec.data))


@pytest.mark.parametrize("rec", ALL, ids=_ids(ALL))
def test_truncated_stream_ends_with_exactly_one_terminal_event_failed_if_unfinished(rec: Recording) -> None:
    for at in _cut_points(rec):
        out = _run(rec, [rec.data[:at]])
        client_stream(rec.dialect, out)  # exactly one terminal event, last; SDK-valid
        if at <= rec.finish_at:
            assert terminal_type(out) == "response.failed", f"cut at byte {at} of {len(rec.data)}"


# -- garbage, invalid UTF-8, bad JSON, unknown events, bad frames ----------------------------------


@fuzz(STREAM_SPLITS)
@given(st.data())
def test_garbage_bytes_anywhere_end_the_stream_properly(data: st.DataObject) -> None:
    rec = data.draw(st.sampled_from(ALL), label="recording")
    at = data.draw(st.integers(0, len(rec.data)), label="at")
    junk = data.draw(st.sampled_from(mutations.GARBAGE) | st.binary(min_size=1, max_size=64), label="junk")
    broken = rec.data[:at] + junk + rec.data[at:]
    out = _run(rec, data.draw(mutations.chunking(broken), label="chunks"))
    client_stream(rec.dialect, out)


_TEXT_VALUE = re.compile(rb'"(text|content|thinking|delta|reasoning_content|partial_json)":\s*"')
_ANY_STRING = re.compile(rb'":\s*"')


@pytest.mark.parametrize("rec", SSE, ids=_ids(SSE))
def test_invalid_utf8_in_a_data_line_is_replaced_or_fails_once(rec: Recording) -> None:
    start = rec.data.find(b"data:")
    match = _TEXT_VALUE.search(rec.data, start) or _ANY_STRING.search(rec.data, start)
    assert match is not None
    broken = rec.data[: match.end()] + b"\xff\xfe\xc3(" + rec.data[match.end() :]
    out = _run(rec, [broken])
    payloads = client_stream(rec.dialect, out)  # the client still gets valid UTF-8
    if payloads[-1]["type"] == "response.completed":
        assert out == _run(rec, sized(broken, 1)), "a replaced character must not depend on chunking"


def _bad_json_variants(rec: Recording) -> list[tuple[int, bytes]]:
    lines = sse_data_lines(rec.data)
    middle = lines[len(lines) // 2]
    return [
        (middle[0], rec.data[: middle[0]] + bad + rec.data[middle[1] :])
        for bad in (b'{"type": broken', b"{", b"\xff\xfe", b'{"a":1}}', b"[1,2")
    ]


SSE_DECODED = [r for r in SSE if r.dialect != "responses"]


@pytest.mark.parametrize("rec", SSE_DECODED, ids=_ids(SSE_DECODED))
def test_bad_json_in_a_data_line_ends_with_one_failed_event(rec: Recording) -> None:
    for _, broken in _bad_json_variants(rec):
        for chunks in ([broken], sized(broken, 1)):
            translator = stream_translator(rec.dialect, translation_for(rec.dialect))
            out = b"".join(translator.feed(c) for c in chunks) + translator.close()
            payloads = client_stream(rec.dialect, out)
            if payloads[-1]["type"] != "response.failed":
                assert translator.report.notes or translator.report.dropped, "a bad line went unreported"


# a good event must come before the broken middle one (a one-event recording has none)
MULTI_EVENT = [r for r in SSE_DECODED if len(sse_data_lines(r.data)) >= 3]


@pytest.mark.parametrize("rec", MULTI_EVENT, ids=_ids(MULTI_EVENT))
def test_events_before_a_bad_line_in_the_same_chunk_still_reach_the_client(rec: Recording) -> None:
    """A network chunk often holds several events. When one of them is broken, the ones before
    it were good and must reach the client as they do when they arrive in chunks of their own:
    the output must not depend on where the chunks break (docs/design.md "Stream translators")."""
    at, broken = _bad_json_variants(rec)[0]
    bytewise = _run(rec, sized(broken, 1))
    got = deltas(client_stream(rec.dialect, bytewise))
    cut = deltas(client_stream(rec.dialect, _run(rec, [rec.data[:at]]))[:-1])
    # the cut stream's end closes a call it left open, its whole arguments in one delta
    # (docs/responses.md "Event order"); the broken stream fails before that
    assert got == cut[: len(got)]
    assert all(kind == "response.function_call_arguments.delta" for kind, _ in cut[len(got):])
    assert _run(rec, [broken]) == bytewise


@pytest.mark.parametrize("rec", recordings_of("responses"), ids=_ids(recordings_of("responses")))
def test_passthrough_never_forwards_a_data_line_that_is_not_json(rec: Recording) -> None:
    """The openai SDK parses every `data:` line and raises on one that is not JSON (Codex skips
    it); the passthrough must drop it with a note, or end the response with response.failed."""
    for _, broken in _bad_json_variants(rec):
        translator = stream_translator("responses", translation_for("responses"))
        out = translator.feed(broken) + translator.close()
        payloads = data_payloads(out)  # raises on a forwarded non-JSON line
        if payloads[-1]["type"] != "response.failed":
            assert translator.report.notes or translator.report.dropped, "a bad line went unreported"


@pytest.mark.parametrize("rec", recordings_of("responses"), ids=_ids(recordings_of("responses")))
def test_passthrough_ends_on_the_payload_type_not_on_the_event_line(rec: Recording) -> None:
    """Clients read each event's `type` from its JSON (Codex, the openai SDK); an `event:` line
    that says something else must not make the passthrough miss the terminal event and then
    add a response.failed after a response.completed."""
    at = rec.data.index(b"event: response.completed")
    broken = (
        rec.data[:at] + b"event: response.c\xc3mpleted" + rec.data[at + len(b"event: response.completed") :]
    )
    payloads = data_payloads(_run(rec, [broken]))
    kinds = [p["type"] for p in payloads]
    assert kinds.count("response.completed") + kinds.count("response.failed") == 1, kinds[-3:]


def _finishing_event_start(rec: Recording) -> int:
    """Where the event that finishes the answer begins (an event put there is still read)."""
    if rec.framing == "eventstream":
        return max(o for o in frame_offsets(rec.data) if o <= rec.finish_at)
    ends = [m.end() for m in re.finditer(rb"\n\n|\r\n\r\n", rec.data[: rec.finish_at])]
    return ends[-1] if ends else 0


# an event of each dialect's own framing goes into a stream of that framing (not a JSON array)
UNKNOWN_TRIED = [r for r in ALL if r.framing != "json-array" and conformance.of(r.dialect).unknown_event]


@pytest.mark.parametrize("rec", UNKNOWN_TRIED, ids=_ids(UNKNOWN_TRIED))
def test_unknown_event_type_is_reported_and_the_stream_goes_on(rec: Recording) -> None:
    declared = conformance.of(rec.dialect)
    unknown = declared.unknown_event
    at = _finishing_event_start(rec)
    translator = stream_translator(rec.dialect, translation_for(rec.dialect))
    out = translator.feed(rec.data[:at] + unknown + rec.data[at:]) + translator.close()
    payloads = client_stream(rec.dialect, out)
    assert payloads[-1]["type"] == "response.completed"
    assert text_of(payloads) == text_of(client_stream(rec.dialect, _run(rec, [rec.data])))
    if declared.reports_unknown:
        assert translator.report.dropped, "the unknown event was not reported"


BEDROCK = recordings_of("bedrock")


@pytest.mark.parametrize("rec", BEDROCK, ids=_ids(BEDROCK))
@pytest.mark.parametrize("where", ["message_crc", "prelude_crc", "payload", "headers_length"])
def test_bedrock_frame_with_a_bad_crc_ends_with_one_failed_event(rec: Recording, where: str) -> None:
    offsets = frame_offsets(rec.data)
    start = offsets[len(offsets) // 2]
    end = offsets[len(offsets) // 2 + 1]
    flip = {
        "message_crc": end - 1,
        "prelude_crc": start + 11,
        "payload": end - 8,
        "headers_length": start + 7,
    }[where]
    broken = bytearray(rec.data)
    broken[flip] ^= 0x5A
    for chunks in ([bytes(broken)], sized(bytes(broken), 1), [bytes(broken[:flip]), bytes(broken[flip:])]):
        out = _run(rec, chunks)
        payloads = client_stream("bedrock", out)
        assert payloads[-1]["type"] == "response.failed"
        before = client_stream("bedrock", _run(rec, [rec.data[:start]]))
        assert text_of(payloads) == text_of(before), "the frames before the bad one are kept, nothing after"


# -- properties: only our own error type escapes, the public translator never raises ---------------


@pytest.mark.parametrize("dialect", DECODER_DIALECTS)
def test_a_dialect_decoder_never_raises_and_ends_with_a_finish_or_one_failure(dialect: str) -> None:
    reached: list[bool] = []

    @fuzz(STREAM_FUZZ)
    @given(data=st.data())
    def run_one(data: st.DataObject) -> None:
        _, broken = data.draw(mutations.broken_stream(dialect), label="stream")
        chunks = data.draw(mutations.chunking(broken), label="chunks")
        events = decode(dialect, translation_for(dialect), chunks)  # an exception propagates
        ends = [i for i, e in enumerate(events) if isinstance(e, ev.Finished | ev.Failed)]
        assert ends, "the decoder ended without a finish or a failure"
        failures = [i for i in ends if isinstance(events[i], ev.Failed)]
        assert len(failures) <= 1 and (not failures or failures[0] == len(events) - 1), (
            "a decoder's failure is its last event, and it fails once")
        reached.append(hostile_sse.reached(events))

    # Half the mutants are byte-level damage, and a decoder stops at the first event it cannot
    # read (docs/design.md "Errors"): a stream broken in its first event decodes nothing. About
    # half decode an event (74 of 150 for Anthropic in one run); random bytes decode none.
    hostile_sse.assert_most_examples_reach_the_handlers(run_one, reached, least=0.25)


@pytest.mark.parametrize("dialect", [*DECODER_DIALECTS, "responses"])
@fuzz(STREAM_FUZZ)
@given(data=st.data())
def test_public_stream_translator_never_raises_and_ends_with_one_terminal_event(
    dialect: str, data: st.DataObject
) -> None:
    rec, broken = data.draw(mutations.broken_stream(dialect), label="stream")
    chunks = data.draw(mutations.chunking(broken), label="chunks")
    client_stream(dialect, _run(rec, chunks))
