"""IR `Document` -> Anthropic `document` block (docs/anthropic.md "Files").

Claude reads a PDF as base64 bytes or from a URL it fetches, and any text as a plain-text
source; the file name becomes the block's `title`. Other types (office documents) have no
source and are reported dropped.
"""

from __future__ import annotations

from typing import Any

from translators.core.report import Report
from translators.ir.request import Document

PDF = "application/pdf"


def block(part: Document, report: Report) -> dict[str, Any] | None:
    source = _source(part, report)
    if source is None:
        report.drop(part.origin)
        return None
    out: dict[str, Any] = {"type": "document", "source": source}
    if part.filename:
        out["title"] = part.filename
    return out


def _source(part: Document, report: Report) -> dict[str, Any] | None:
    if part.url is not None:
        if part.media_type not in (None, PDF):
            report.note(f"{part.origin}: Anthropic fetches only PDFs by URL; the file is "
                        f"{part.media_type}")
            return None
        return {"type": "url", "url": part.url}
    if part.media_type == PDF:
        return {"type": "base64", "media_type": PDF, "data": part.data}
    if part.is_text:
        text = part.decoded_text()
        if text is not None:
            return {"type": "text", "media_type": "text/plain", "data": text}
        report.note(f"{part.origin}: a {part.media_type} file that is not UTF-8 text cannot be sent "
                    "to Anthropic")
        return None
    report.note(f"{part.origin}: Anthropic reads PDF and plain-text documents; the file is "
                f"{part.media_type or 'of no named type'}")
    return None
