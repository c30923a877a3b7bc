"""translators/wire/stream_failure.py: the scans of written SSE a client's failure event needs (its
terminal events, the events already sent); the writers are each client dialect's own
(tests/translators/responses_client/test_errors.py, tests/translators/messages_client/test_errors.py)."""

from __future__ import annotations

from translators.wire.stream_failure import events_in, has_terminal

TERMINALS = ("message_stop", "error")


def test_a_terminal_is_an_event_line_of_one_of_the_names_given() -> None:
    stop = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    assert has_terminal(stop, TERMINALS)
    assert has_terminal(b"event: error\ndata: {}\n\n", TERMINALS)
    assert not has_terminal(stop, ("response.completed", "response.failed"))  # another client's names
    quoted = b'event: content_block_stop\ndata: {"note":"event: error"}\n\n'
    assert not has_terminal(quoted, TERMINALS)  # only an `event:` line counts
    assert not has_terminal(b"event: message_stop_soon\ndata: {}\n\n", TERMINALS)


def test_events_are_counted_by_their_event_lines() -> None:
    sent = b"event: a\ndata: {}\n\nevent: b\ndata: {\"x\": \"event: c\"}\n\n"
    assert events_in(sent) == 2
    assert events_in(b"") == 0
