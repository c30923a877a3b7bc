"""Every value the gateway writes to a log line, escaped (docs/console.md "Escaped").

A client chooses what its request holds, and the gateway's lines quote it (a model name, a path, an
upstream's error message): a newline, a carriage return or an escape sequence there would write a
line of the client's own into the operator's console or log file, a forged timestamp and all, or
recolour and overwrite what is on the terminal. So every record of the gateway's loggers (`addon.*`,
`translators.*`) is escaped once, as it is made (a log record factory), whatever the call site:
control characters (C0, DEL, C1), the Unicode line and paragraph separators and the bidirectional
overrides become `\\xNN` / `\\uNNNN`; a traceback keeps its lines, its exception's text is escaped
too. mitmproxy's own lines are its own (its dumper escapes the request line itself).
"""

from __future__ import annotations

import logging
import traceback
from types import TracebackType
from typing import Any

OURS = ("addon", "translators")
"""The gateway's logger names (each module's `logging.getLogger(__name__)`)."""
_MARK = "_gateway_escapes"
_SPECIAL = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F),
            *range(0x2066, 0x206A)]
_TABLE = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _SPECIAL if c != 0x09}
_LINES = {c: e for c, e in _TABLE.items() if c != 0x0A}


def text(value: object) -> str:
    """`value` as one line that writes nothing but itself (a tab is kept). A printable string
    holds none of the escaped characters (each is a control, a separator or a format character:
    Unicode's "Other" and "Separator", which `isprintable` refuses), so it is taken as it is: the
    check is one C pass, where `translate` looks each character up in a dict (8 us for a flow line)."""
    line = str(value)
    return line if line.isprintable() else line.translate(_TABLE)


def _escaped_traceback(exc_info: tuple[type[BaseException], BaseException, TracebackType | None]) -> str:
    """The traceback's lines as Python writes them; the exceptions' own text (which may quote a
    client's value) on one line each."""
    out: list[str] = []
    chain: list[traceback.TracebackException] = []
    each: traceback.TracebackException | None = traceback.TracebackException(*exc_info)
    while each is not None and len(chain) < 16:
        chain.append(each)
        each = each.__cause__ or (None if each.__suppress_context__ else each.__context__)
    for n, each in enumerate(reversed(chain)):
        if n:
            out.append("\nwhich led to:\n\n")
        if each.stack:
            out.append("Traceback (most recent call last):\n")
            out.extend(line.translate(_LINES) for line in each.stack.format())
        out.extend(text(line.rstrip("\n")) + "\n" for line in each.format_exception_only())
    return "".join(out).rstrip("\n")


def _escaping(make: Any) -> Any:
    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record: logging.LogRecord = make(*args, **kwargs)
        if record.name.split(".", 1)[0] in OURS:
            message = record.getMessage()
            record.msg, record.args = text(message), None
            if record.exc_info and record.exc_info[1] is not None:
                record.exc_text = _escaped_traceback(record.exc_info)  # type: ignore[arg-type]
        return record

    setattr(factory, _MARK, make)
    return factory


def install() -> None:
    """Idempotent, whichever copy of this module runs it: the factory in place is wrapped once."""
    current = logging.getLogRecordFactory()
    if getattr(current, _MARK, None) is None:
        logging.setLogRecordFactory(_escaping(current))
