"""IR `Document` -> Converse `document` block (docs/bedrock.md "Files").

A block is `{format, name, source}`: `format` one of the service model's `DocumentFormat` values,
read off the media type (else the file name's extension); `source` the file's bytes (base64 in
the JSON body), or an `s3Location` for an `s3://` URL (Converse fetches no http(s) URL).

`name` is required, 1 to 200 characters, only ASCII letters and digits, single spaces, hyphens,
parentheses and square brackets, and no two documents of a request may share one. It is
derived from the file name: the extension goes (the format says it), accents are taken off,
every other character becomes a hyphen, runs of spaces or hyphens shrink to one; a name already
used gets " (2)", " (3)"...; a file without a usable name is "document".
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from translators.core.report import Report
from translators.ir.request import Document

FORMATS = {
    "application/pdf": "pdf", "text/csv": "csv", "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html", "text/plain": "txt", "text/markdown": "md", "text/x-markdown": "md",
}
"""Media type -> `DocumentFormat` (the service model's enum)."""
EXTENSIONS = frozenset(FORMATS.values())
NAME_MAX = 200
DEFAULT_NAME = "document"
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9 ()\[\]-]")
_SPACES = re.compile(r"\s+")
_RUNS = re.compile(r"([ -])[ -]*")
_S3_URI = re.compile(r"s3://[a-z0-9][.\-a-z0-9]{1,61}[a-z0-9](/.*)?")
"""`S3Uri` of the service model."""


def document_format(part: Document) -> str | None:
    """The `DocumentFormat` for the part, or None when Converse has none for it. Text of another
    type (JSON, XML...) is sent as `txt`: its bytes are read as they are."""
    if part.media_type in FORMATS:
        return FORMATS[part.media_type]
    extension = part.filename.rsplit(".", 1)[-1].lower() if part.filename and "." in part.filename else ""
    if extension in EXTENSIONS:
        return extension
    return "txt" if part.is_text else None


def base_name(filename: str | None) -> str:
    """A `DocumentBlock.name` made of the file name (see the module docstring)."""
    stem = filename or ""
    if "." in stem.lstrip("."):
        stem = stem.rsplit(".", 1)[0]
    plain = "".join(c for c in unicodedata.normalize("NFKD", stem) if not unicodedata.combining(c))
    name = _NOT_ALLOWED.sub("-", _SPACES.sub(" ", plain))
    name = _RUNS.sub(lambda m: " " if " " in m.group(0) else "-", name).strip(" -")
    return name[: NAME_MAX - 8].strip(" -") or DEFAULT_NAME  # room for a " (n)" suffix


class Documents:
    """Writes the document blocks of one request, each with a name no other document has."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.taken: set[str] = set()

    def block(self, part: Document) -> dict[str, Any] | None:
        fmt = document_format(part)
        source = self._source(part) if fmt is not None else None
        if fmt is None:
            self.report.note(f"{part.origin}: Converse documents are pdf, csv, doc, docx, xls, xlsx, html, "
                             f"txt or md; the file is {part.media_type or 'of no named type'}")
        if source is None:
            self.report.drop(part.origin)
            return None
        return {"document": {"format": fmt, "name": self._name(part.filename), "source": source}}

    def _source(self, part: Document) -> dict[str, Any] | None:
        if part.data is not None:
            return {"bytes": part.data}
        if part.url is not None and _S3_URI.fullmatch(part.url):
            return {"s3Location": {"uri": part.url}}
        self.report.note(f"{part.origin}: Converse fetches no http(s) URL (only s3:// locations); "
                         "send the file as file_data")
        return None

    def _name(self, filename: str | None) -> str:
        name = base = base_name(filename)
        n = 1
        while name.casefold() in self.taken:
            n += 1
            name = f"{base} ({n})"
        self.taken.add(name.casefold())
        return name
