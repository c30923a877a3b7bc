"""`python -m translators`: translate a request, a stream, or a saved capture.

    python -m translators request --to TARGET [--model NAME] [--client CLIENT] [FILE|-]
    python -m translators stream --from DIALECT --request REQUEST.json [--client CLIENT] [FILE|-]
    python -m translators capture DIR

`request` prints {"path", "body", "dropped", "notes"}; a refused request exits 2 and prints
{"error": {"type", "code", "message"}}. `--client` names the client dialect the request is in and
the answer is written in (translators/client_dialects.py; default `responses`); a capture names its
own (`"client"` in `capture.json`, docs/captures.md). Output of `stream`/`capture` is deterministic
(ids numbered from 1, created_at 0) so that runs can be compared byte for byte.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, BinaryIO

from translators import client_dialects, dialect
from translators.api import stream_translator, translate_request
from translators.core.errors import TranslatorError
from translators.core.ids import sequential_ids


def _read(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    return Path(name).read_bytes()


def _load_json(name: str) -> Any:
    try:
        return json.loads(_read(name))
    except ValueError as exc:
        raise TranslatorError(f"{name} is not valid JSON: {exc}", code="invalid_json", status=400) from None


def _refuse(exc: TranslatorError) -> int:
    error = exc.to_error()
    print(json.dumps({"error": {"type": error["type"], "code": error["code"], "message": error["message"]}}))
    return 2


def cmd_request(args: argparse.Namespace) -> int:
    try:
        translation = translate_request(_load_json(args.file), args.to, args.model, client=args.client)
    except TranslatorError as exc:
        return _refuse(exc)
    print(json.dumps({"path": translation.path, "body": translation.body, "dropped": translation.dropped,
                      "notes": translation.notes}, ensure_ascii=False, indent=2))
    return 0


def translate_stream(source: str, request: Any, data: bytes, model: str | None, out: BinaryIO,
                     chunk: int = 0, client: str = client_dialects.DEFAULT) -> int:
    """The client's stream (in its dialect, `client`) for the upstream's bytes `data`."""
    translation = translate_request(request, source, model, client=client)
    translator = stream_translator(source, translation, new_id=sequential_ids(), clock=lambda: 0)
    pieces = [data[i:i + chunk] for i in range(0, len(data), chunk)] if chunk else [data]
    for piece in pieces:
        out.write(translator.feed(piece))
    out.write(translator.close())
    out.flush()
    return 0


def cmd_stream(args: argparse.Namespace) -> int:
    try:
        request = _load_json(args.request)
        data = _read(args.file)
        return translate_stream(args.source, request, data, args.model, sys.stdout.buffer, args.chunk,
                                args.client)
    except TranslatorError as exc:
        return _refuse(exc)


def cmd_capture(args: argparse.Namespace) -> int:
    """A capture folder holds `capture.json` (dialect, model, client dialect, file names), the
    client request and the upstream's recorded answer: the request is read in the capture's client
    dialect and the answer written in it (a capture without `client` is a Responses client's)."""
    folder = Path(args.dir)
    meta = json.loads((folder / "capture.json").read_text())
    try:
        client = client_dialects.get(meta.get("client") or client_dialects.DEFAULT).name
        request = json.loads((folder / meta["request"]).read_text())
        data = (folder / meta["upstream"]).read_bytes()
        return translate_stream(meta["dialect"], request, data, meta.get("model"), sys.stdout.buffer,
                                client=client)
    except TranslatorError as exc:
        return _refuse(exc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m translators", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("request", help="translate a client's request body (Responses by default)")
    p.add_argument("--to", required=True, choices=dialect.names())
    p.add_argument("--model")
    _client_option(p)
    p.add_argument("file", nargs="?", default="-")
    p.set_defaults(func=cmd_request)
    p = sub.add_parser("stream", help="an upstream stream as the client's (Responses SSE unless --client)")
    p.add_argument("--from", dest="source", required=True, choices=dialect.names())
    p.add_argument("--request", required=True, help="the client's request (JSON; Responses by default)")
    p.add_argument("--model")
    _client_option(p)
    p.add_argument("--chunk", type=int, default=0, help="feed the stream in pieces of this many bytes")
    p.add_argument("file", nargs="?", default="-")
    p.set_defaults(func=cmd_stream)
    p = sub.add_parser("capture", help="replay a capture folder from captures/")
    p.add_argument("dir")
    p.set_defaults(func=cmd_capture)
    args = parser.parse_args(argv)
    return int(args.func(args))


def _client_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--client", default=client_dialects.DEFAULT, choices=client_dialects.names(),
                        help="the client dialect of the request and of the answer written "
                             f"(default: {client_dialects.DEFAULT})")
