"""DeepSeek DSML tool-call markup found in plain text -> real tool calls (docs/chat.md "DSML markup").

DeepSeek's models write tool calls as DSML; the serving stack normally turns that into
`tool_calls`, but a self-hosted server without the right parser (or a forced no-tool round) lets
it through as text:

    <｜DSML｜tool_calls>
    <｜DSML｜invoke name="read">
    <｜DSML｜parameter name="path" string="true">a.txt</｜DSML｜parameter>
    <｜DSML｜parameter name="limit" string="false">15</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜tool_calls>

V3.2 wraps in `function_calls`, V4 in `tool_calls`. Variants seen: ASCII `|`, `‖`, doubled bars,
a bare `invoke` without the wrapper, a wrapper never closed at the end of the answer.
`string="true"` marks a literal string, `string="false"` a JSON value.

`parse` reads one block with a lark grammar; `Scanner` finds the blocks in streamed text and holds
back any tail that may still become a marker, so no markup reaches the client's text.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import LarkError

from translators.wire import wirejson

_BAR = "[｜|‖]{1,2}"

GRAMMAR = r"""
start: wrapper | invoke+
wrapper: WRAP_OPEN invoke* WRAP_CLOSE?
invoke: INVOKE_OPEN ATTR* TAG_END parameter* INVOKE_CLOSE
parameter: PARAM_OPEN ATTR* TAG_END VALUE? PARAM_CLOSE

// Whitespace between tags rides on the tags themselves, never on VALUE: a parameter's text is
// kept byte for byte. One TAG_END for both tags: LALR merges the lookaheads after `ATTR*`.
BAR: /[｜|‖]{1,2}/
CALLS: "tool_calls" | "function_calls"
WRAP_OPEN: /\s*/ "<" BAR "DSML" BAR CALLS ">" /\s*/
WRAP_CLOSE: "</" BAR "DSML" BAR CALLS ">" /\s*/
INVOKE_OPEN: /\s*/ "<" BAR "DSML" BAR "invoke"
INVOKE_CLOSE: /\s*/ "</" BAR "DSML" BAR "invoke>" /\s*/
PARAM_OPEN: /\s*/ "<" BAR "DSML" BAR "parameter"
PARAM_CLOSE: "</" BAR "DSML" BAR "parameter>" /\s*/
TAG_END: /\s*>/
ATTR: /\s+[A-Za-z_][\w-]*\s*=\s*"[^"]*"/
VALUE: /(?:(?!<\/[｜|‖]{1,2}DSML[｜|‖]{1,2}parameter>)[\s\S])+/
"""

_ATTR = re.compile(r'\s*([A-Za-z_][\w-]*)\s*=\s*"([^"]*)"')


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    arguments: str
    """A JSON object, as a Chat `function.arguments` string."""


@functools.cache
def _parser() -> Lark:
    return Lark(GRAMMAR, parser="lalr", lexer="contextual")


def parse(block: str) -> list[Call] | None:
    """The calls in one DSML block, or None when it is not valid DSML (it then stays text)."""
    try:
        tree = _parser().parse(block)
    except LarkError:
        return None
    calls: list[Call] = []
    for invoke in (t for t in tree.iter_subtrees_topdown() if t.data == "invoke"):
        attrs = _attrs(invoke)
        if not attrs.get("name"):
            return None
        arguments: dict[str, Any] = {}
        for parameter in (c for c in invoke.children if isinstance(c, Tree) and c.data == "parameter"):
            p_attrs = _attrs(parameter)
            if "name" not in p_attrs:
                return None
            arguments[p_attrs["name"]] = _value(_raw_value(parameter), p_attrs.get("string"))
        calls.append(Call(attrs["name"], wirejson.text(arguments)))
    return calls or None


def _attrs(node: Tree[Token]) -> dict[str, str]:
    out: dict[str, str] = {}
    for child in node.children:
        if isinstance(child, Token) and child.type == "ATTR":
            match = _ATTR.match(child)
            if match:
                out[match.group(1)] = match.group(2)
    return out


def _raw_value(parameter: Tree[Token]) -> str:
    return next((str(c) for c in parameter.children if isinstance(c, Token) and c.type == "VALUE"), "")


def _value(raw: str, string: str | None) -> Any:
    if string == "true":
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw  # `string="false"` on something that is not JSON: keep the model's text


# -- finding blocks in a text stream ---------------------------------------------------------

_NAMES = ("tool_calls", "function_calls", "invoke")
_OPEN = re.compile(rf"<{_BAR}DSML{_BAR}(tool_calls|function_calls|invoke)(?=[\s>])")
_CLOSE = {
    "wrapper": re.compile(rf"</{_BAR}DSML{_BAR}(?:tool_calls|function_calls)>"),
    "invoke": re.compile(rf"</{_BAR}DSML{_BAR}invoke>"),
}


def _prefixes(word: str) -> str:
    """A regex matching every prefix of `word`, the empty one included."""
    return "".join(f"(?:{re.escape(c)}" for c in word) + ")?" * len(word)


# Every proper beginning of an opening marker, up to the whole name (its end is not known yet).
_PARTIAL = re.compile(
    rf"<(?:{_BAR}(?:D(?:S(?:M(?:L(?:{_BAR}(?:{'|'.join(_prefixes(n) for n in _NAMES)}))?)?)?)?)?)?")
_LONGEST_MARKER = len("<｜｜DSML｜｜function_calls")
_LONGEST_CLOSE = len("</｜｜DSML｜｜function_calls>")


def _held_from(text: str) -> int:
    """Where the tail that may still be (whitespace before) a marker begins."""
    start = len(text)
    lowest = max(0, len(text) - _LONGEST_MARKER)
    at = text.find("<", lowest)
    while at >= 0:
        if _PARTIAL.fullmatch(text, at):
            start = at
            break
        at = text.find("<", at + 1)
    while start > 0 and text[start - 1].isspace():
        start -= 1
    return start


Segment = str | list[Call]
"""Text to show, or the calls of one block."""


class Scanner:
    """Streamed text in, text and recovered calls out, the same whatever the piece boundaries.

    Whitespace just before a block is the model's separator (the V4 reference decoder splits on
    "\\n\\n<｜DSML｜tool_calls", docs/chat.md "DSML markup") and is dropped with the block; a block that does
    not parse
    comes back as the text it was.
    """

    __slots__ = ("_gap", "_held", "_kind", "_parts", "_recovered", "_tail")

    def __init__(self) -> None:
        self._held = ""
        self._kind: str | None = None
        self._parts: list[str] = []
        """The open block's pieces, joined once when it closes (docs/design.md "Limits")."""
        self._tail = ""
        """The open block's last characters: where a closing marker may have begun."""
        self._gap = ""
        self._recovered = False

    def feed(self, text: str) -> list[Segment]:
        out: list[Segment] = []
        if self._kind is None:
            self._text(self._held + text, out)
        else:
            self._in_block(text, out)
        return out

    def close(self) -> list[Segment]:
        out: list[Segment] = []
        if self._kind is not None:
            # a block left open at the end of the answer (docs/chat.md "DSML markup")
            calls = parse("".join(self._parts))
            self._emit_block(calls, out)
        elif self._held and not (self._recovered and self._held.isspace()):
            out.append(self._held)
        self._held = ""
        return out

    def _text(self, text: str, out: list[Segment]) -> None:
        match = _OPEN.search(text)
        if match is None:
            cut = _held_from(text)
            if cut:
                out.append(text[:cut])
            self._held = text[cut:]
            return
        before = text[: match.start()]
        body = before.rstrip()
        if body:
            out.append(body)
        self._gap = before[len(body):]
        self._held = ""
        self._kind = "invoke" if match.group(1) == "invoke" else "wrapper"
        self._parts, self._tail = [], ""
        self._in_block(text[match.start():], out)

    def _in_block(self, text: str, out: list[Segment]) -> None:
        """More of the open block: only the new text (and the old tail, for a marker split
        across pieces) is searched for its closing marker."""
        assert self._kind is not None
        window = self._tail + text
        end = _CLOSE[self._kind].search(window)
        if end is None:
            self._parts.append(text)
            self._tail = window[-_LONGEST_CLOSE:]
            return
        cut = end.end() - len(self._tail)
        self._parts.append(text[:cut])
        block, rest = "".join(self._parts), text[cut:]
        self._emit_block(parse(block), out, block)
        if rest:
            self._text(rest, out)

    def _emit_block(self, calls: list[Call] | None, out: list[Segment], block: str | None = None) -> None:
        raw = "".join(self._parts) if block is None else block
        if calls:
            out.append(calls)
            self._recovered = True
        else:
            out.append(self._gap + raw)
        self._kind, self._parts, self._tail, self._gap = None, [], "", ""
