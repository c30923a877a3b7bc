"""Freeform (custom) tools on targets that only take JSON-schema functions.

A freeform tool such as Codex's `apply_patch` or code-mode `exec` becomes a function with one
required string argument, `input`, and its grammar in the description (docs/responses.md "Tools on other
dialects").
A call comes back to the client as a `custom_tool_call` whose `input` is that string, unwrapped
(Codex aborts an `apply_patch` that arrives JSON-wrapped, docs/codex.md "What Codex needs back").
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from lark import Lark
from lark.exceptions import LarkError

from translators.ir.request import CustomTool
from translators.wire import wirejson

ARGUMENT = "input"


def schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {ARGUMENT: {"type": "string", "description": "The raw tool input, verbatim."}},
        "required": [ARGUMENT],
        "additionalProperties": False,
    }


def description(tool: CustomTool) -> str:
    parts = [tool.description.rstrip()] if tool.description else []
    parts.append(
        f"This is a FREEFORM tool: put the raw text in the `{ARGUMENT}` string argument, exactly as it "
        "should be read, with no extra JSON or markup inside it."
    )
    if tool.definition:
        parts.append(
            f"The `{ARGUMENT}` text must match this {tool.syntax or 'lark'} grammar:\n"
            f"```\n{tool.definition.strip()}\n```"
        )
    return "\n\n".join(parts)


def unwrap(arguments: str) -> str:
    """The raw input from `{"input": "..."}`; anything else passes through verbatim."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get(ARGUMENT), str):
        return value[ARGUMENT]
    return arguments


def wrap(raw: str) -> str:
    return wirejson.text({ARGUMENT: raw})


# A whole regex literal of the form `X*` / `(X*)` (X one atom: `.`, a class, an escape), e.g. the
# `/(.*)/` in Codex's apply_patch grammar (docs/codex.md "apply_patch"). OpenAI's grammar engine accepts such
# zero-width terminals; lark's lexers refuse them ("Lexer does not allow zero-width terminals").
_STAR_ATOM = re.compile(r"(\(?)(\.|\[(?:\\.|[^\]\\])*\]|\\.)\*(\??)(\)?)")
_LARK_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"i?|//[^\n]*|/(?!/)((?:\\.|[^/\\\n])+)/([imslux]*)')


def _nonempty_terminals(definition: str) -> str:
    """Rewrite each zero-width `/X*/` as the equivalent optional `/X+/?`, so lark can build a lexer."""

    def fix(match: re.Match[str]) -> str:
        pattern = match.group(1)
        if pattern is None:  # a "string" or a // comment: kept as is
            return match.group(0)
        star = _STAR_ATOM.fullmatch(pattern)
        if star is None or bool(star.group(1)) != bool(star.group(4)):
            return match.group(0)
        open_, atom, lazy, close = star.groups()
        return f"/{open_}{atom}+{lazy}{close}/{match.group(2)}?"

    return _LARK_TOKEN.sub(fix, definition)


@functools.lru_cache(maxsize=32)
def _parser(definition: str) -> Lark | None:
    """A parser for the grammar, or None when lark cannot build one (then nothing is checked)."""
    grammar = _nonempty_terminals(definition)
    for options in ({"parser": "lalr"}, {"parser": "earley"}):
        try:
            return Lark(grammar, start="start", **options)
        except LarkError:
            continue
    return None


def grammar_mismatch(syntax: str | None, definition: str | None, text: str) -> str | None:
    """Why `text` does not match the tool's grammar, or None when it does (or can't be checked).

    Only ever informs the report: the text reaches the client unaltered.
    """
    if not definition:
        return None
    try:
        if syntax == "regex":
            return None if re.fullmatch(definition, text) else "does not match the tool's regex"
        parser = _parser(definition)
        if parser is None:
            return None
        parser.parse(text)
    except LarkError as exc:
        return str(exc).strip().splitlines()[0][:200]
    except (re.error, RecursionError):
        return None  # a grammar we cannot evaluate says nothing about the text
    return None


_PREFIX = re.compile(r'\s*\{\s*"' + ARGUMENT + r'"\s*:\s*"')
_SPECIAL = re.compile(r'["\\]')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class InputStreamer:
    """Turns streamed JSON argument fragments of `{"input": "..."}` into raw text pieces.

    Lets the client show a freeform call's text as it is written
    (`response.custom_tool_call_input.delta`). When the arguments turn out not to start with the
    `input` key, it stops yielding; the final item is built from the whole text either way.
    """

    __slots__ = ("_head", "_pending", "_state")

    def __init__(self) -> None:
        self._state = "seek"
        self._head = ""
        self._pending = ""

    def feed(self, fragment: str) -> str:
        if self._state == "seek":
            self._head += fragment
            match = _PREFIX.match(self._head)
            if match is None:
                if not _could_become_prefix(self._head):
                    self._state = "off"
                return ""
            self._state = "string"
            fragment, self._head = self._head[match.end():], ""
        if self._state != "string":
            return ""
        return self._decode(self._pending + fragment)

    def _decode(self, text: str) -> str:
        out: list[str] = []
        pos = 0
        self._pending = ""
        while True:
            match = _SPECIAL.search(text, pos)
            if match is None:
                out.append(text[pos:])
                break
            out.append(text[pos:match.start()])
            if match.group() == '"':
                self._state = "done"
                break
            esc = text[match.start() + 1: match.start() + 2]
            if not esc:
                self._pending = text[match.start():]
                break
            if esc == "u":
                decoded, used = _unicode_escape(text, match.start())
                if used == 0:
                    self._pending = text[match.start():]
                    break
                out.append(decoded)
                pos = match.start() + used
                continue
            out.append(_ESCAPES.get(esc, esc))
            pos = match.start() + 2
        return "".join(out)


def _unicode_escape(text: str, at: int) -> tuple[str, int]:
    """Decode `\\uXXXX` (and a following low surrogate) at `at`; (text, 0) when incomplete."""
    hex1 = text[at + 2: at + 6]
    if len(hex1) < 4:
        return "", 0
    code = int(hex1, 16)
    if 0xD800 <= code < 0xDC00:
        tail = text[at + 6: at + 12]
        if len(tail) < 6:
            return "", 0
        if tail.startswith("\\u"):
            low = int(tail[2:], 16)
            if 0xDC00 <= low < 0xE000:
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), 12
    return chr(code), 6


def _could_become_prefix(head: str) -> bool:
    """True while `head` may still grow into `{"input": "` (whitespace allowed between tokens)."""
    compact = re.sub(r"\s+", "", head)
    target = '{"' + ARGUMENT + '":"'
    return target.startswith(compact)
