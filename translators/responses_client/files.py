"""Responses `input_file` content part -> IR `Document` (docs/responses.md "Files").

The part names its file one of three ways: `file_data` (a base64 `data:` URL, or bare base64),
`file_url` (the upstream fetches it) or `file_id` (a file in OpenAI's own file store, which no
other upstream can read: reported dropped with a note). Its `filename` travels with it; `detail`
(the resolution OpenAI renders a file at) has no counterpart elsewhere and is reported.

Size: the base64 text is part of the request body, which the addon bounds before anything is
decoded (`gateway_max_request_bytes`, addon/limits.py); the decoded file is three quarters of
that text, so no file can outgrow the request limit.
"""

from __future__ import annotations

import binascii
import mimetypes
from typing import Any
from urllib.parse import urlsplit

from translators.core.errors import MalformedRequest
from translators.core.report import Report
from translators.ir.request import Document

FILE_PART_KEYS = frozenset({"type", "file_data", "file_url", "file_id", "filename", "detail"})
_SOURCES = ("file_data", "file_url", "file_id")
DATA_URL_FORM = "data:<media type>;base64,<data>"
FILE_ID_NOTE = ("{path}: file_id names a file in OpenAI's file store, which no other upstream can "
                "read; send the file itself as file_data (a base64 data URL) or as file_url")


def decode(part: dict[str, Any], path: str, report: Report) -> Document | None:
    """The document an `input_file` part carries, or None when it only names an OpenAI file."""
    report.drop_unread(part, FILE_PART_KEYS, path)
    given = [key for key in _SOURCES if part.get(key) not in (None, "")]
    if len(given) != 1:
        what = "only one of" if given else "one of"
        raise MalformedRequest(f"{path}: an input_file takes {what} file_data, file_url or file_id",
                               param=path)
    filename = _string(part, "filename", path)
    source = given[0]
    value = _string(part, source, path)
    assert value is not None
    if source == "file_id":
        report.drop(path)
        report.note(FILE_ID_NOTE.format(path=path))
        return None
    if part.get("detail") not in (None, "auto"):
        report.drop(f"{path}.detail")  # OpenAI's rendering resolution: no other vendor has one
    if source == "file_url":
        media = _guess(filename) or _guess(urlsplit(value).path)
        return Document(media_type=media, url=value, filename=filename, origin=path)
    media, data = _inline(value, f"{path}.file_data")
    try:
        size = len(binascii.a2b_base64(data, strict_mode=True))
    except (binascii.Error, ValueError):
        raise MalformedRequest(f"{path}.file_data is not valid base64 (expected {DATA_URL_FORM})",
                               param=f"{path}.file_data") from None
    return Document(media_type=media or _guess(filename), data=data, size=size, filename=filename,
                    origin=path)


def _inline(value: str, path: str) -> tuple[str | None, str]:
    """(media type or None, base64 text) of a `data:` URL, or of bare base64."""
    if not value.startswith("data:"):
        return None, value
    head, comma, data = value.partition(",")
    params = head[5:].split(";")
    if not comma or params[-1].strip().lower() != "base64" or not data:
        raise MalformedRequest(f"{path} must be a base64 data URL ({DATA_URL_FORM})", param=path)
    return params[0].strip().lower() or None, data


def _string(part: dict[str, Any], key: str, path: str) -> str | None:
    value = part.get(key)
    if value is None or isinstance(value, str):
        return value or None
    raise MalformedRequest(f"{path}.{key} must be a string", param=f"{path}.{key}")


_EXTENSIONS = {
    "pdf": "application/pdf", "txt": "text/plain", "md": "text/markdown", "markdown": "text/markdown",
    "csv": "text/csv", "html": "text/html", "htm": "text/html", "json": "application/json",
    "xml": "application/xml", "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}
"""The document types the vendors take, by extension; other extensions go by Python's built-in
table (never the machine's own mime.types, so the translation is the same everywhere)."""
_BUILTIN_TYPES = mimetypes.MimeTypes()


def _guess(name: str | None) -> str | None:
    """The media type a file name's extension implies, or None."""
    if not name or "." not in name:
        return None
    extension = name.rsplit(".", 1)[1].lower()
    return _EXTENSIONS.get(extension) or _BUILTIN_TYPES.guess_type(name, strict=False)[0]
