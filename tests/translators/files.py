"""Responses `input_file` parts for the file tests of every dialect (docs/responses.md "Files")."""

from __future__ import annotations

import base64
from typing import Any

PDF_BYTES = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
PDF_B64 = base64.b64encode(PDF_BYTES).decode()
PDF_DATA_URL = f"data:application/pdf;base64,{PDF_B64}"
NOTES = "# Notes\n\nThe meeting is on **Tuesday** — bring the café receipts.\n"
NOTES_B64 = base64.b64encode(NOTES.encode()).decode()
DOCX_B64 = base64.b64encode(b"PK\x03\x04docx").decode()


def pdf(filename: str | None = "report.pdf", **extra: Any) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "input_file", "file_data": PDF_DATA_URL, **extra}
    if filename is not None:
        part["filename"] = filename
    return part


def inline(media_type: str, data: str, filename: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "input_file", "file_data": f"data:{media_type};base64,{data}"}
    if filename is not None:
        part["filename"] = filename
    return part


def url(address: str, filename: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "input_file", "file_url": address}
    if filename is not None:
        part["filename"] = filename
    return part


def user_with(*parts: dict[str, Any], text: str = "Summarize the attached file.") -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}, *parts]}
