"""Log lines of the gateway, escaped (addon/observe/escape.py; issue 35, case 8)."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from addon.observe import escape

FORGED = "gpt-5\n[12:00:00.000] ana -> anthropic claude | 200\x1b[2K\x1b[31m\r\u2028\u202e"


def test_a_value_is_one_line_that_writes_only_itself() -> None:
    shown = escape.text(FORGED)
    assert "\n" not in shown and "\r" not in shown and "\x1b" not in shown
    assert "\u2028" not in shown and "\u202e" not in shown
    assert shown.startswith("gpt-5\\x0a[12:00:00.000]") and "\\x1b[31m" in shown
    assert escape.text("tab\tkept") == "tab\tkept"


ESCAPED = [*(chr(c) for c in range(0x20) if c != 0x09), "\x7f", *(chr(c) for c in range(0x80, 0xA0)),
           "\u2028", "\u2029", *(chr(c) for c in range(0x202A, 0x202F)),
           *(chr(c) for c in range(0x2066, 0x206A))]
"""C0 and C1 controls but the tab, DEL, the line and paragraph separators, the bidirectional
embeddings, overrides and isolates (docs/console.md "Escaped")."""


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from([*ESCAPED, "\t", " ", "a", "é", "漢", "\u200b", "\ufeff"]))
       | st.text())
def test_no_escaped_character_survives_and_a_line_without_one_is_itself(line: str) -> None:
    shown = escape.text(line)
    assert not any(c in shown for c in ESCAPED)
    if not any(c in line for c in ESCAPED):
        assert shown == line


@pytest.fixture
def installed() -> None:
    before = logging.getLogRecordFactory()
    escape.install()
    escape.install()  # idempotent
    yield
    logging.setLogRecordFactory(before)


def test_records_of_the_gateways_loggers_are_escaped_whatever_the_call_site(
        installed: None, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        logging.getLogger("addon.observe.console").info("%s -> anthropic", FORGED)
        logging.getLogger("mitmproxy.proxy.server").info("own\nline")
    ours, theirs = caplog.records
    assert "\n" not in ours.getMessage() and "\x1b" not in ours.getMessage()
    assert theirs.getMessage() == "own\nline"


def test_an_exceptions_text_is_escaped_and_its_traceback_keeps_its_lines(
        installed: None, caplog: pytest.LogCaptureFixture) -> None:
    try:
        try:
            raise KeyError(FORGED)
        except KeyError as inner:
            raise ValueError(f"model {FORGED}") from inner
    except ValueError:
        logging.getLogger("addon.serve.websocket.endpoint").exception("request failed")
    (record,) = caplog.records
    text = logging.Formatter().format(record)
    assert "Traceback (most recent call last):" in text and "which led to:" in text
    assert "\x1b" not in text and "\r" not in text
    assert not any(line.startswith("[12:00:00.000]") for line in text.splitlines())
