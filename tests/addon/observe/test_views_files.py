"""addon/observe/views.py with files: the Translation view says each document by name, type and size, and
its copies of both bodies never hold a file's whole base64 (issue 24 "Files across vendors")."""

from __future__ import annotations

import base64
import json

import pytest

from addon.observe import views
from tests.translators.files import user_with
from translators import translate_request

BIG = base64.b64encode(bytes(range(256)) * 48).decode()
PDF = {"type": "input_file", "file_data": f"data:application/pdf;base64,{BIG}", "filename": "Q3 report.pdf"}
TARGETS = {"anthropic": "claude-sonnet-4-5", "gemini": "gemini-3-pro-preview",
           "bedrock": "us.anthropic.claude-sonnet-4-20250514-v1:0", "chat": "gpt-4.1"}


@pytest.mark.parametrize("dialect", sorted(TARGETS))
def test_the_translation_view_shows_a_pdf_briefly_on_both_sides(dialect):
    client = {"model": "gpt-5.5", "stream": True, "input": [user_with(PDF)]}
    translation = translate_request(client, dialect, TARGETS[dialect])
    metadata = {views.KEY: {"upstream": dialect, "model": translation.model, "client_model": "gpt-5.5",
                            "dropped": translation.dropped, "notes": translation.notes},
                views.CLIENT_REQUEST: json.dumps(client),
                views.TRANSLATION: {"target": dialect, "model": translation.model, "tools": {}}}
    text = views.translation_text(json.dumps(translation.body).encode(), metadata)
    assert BIG[:200] not in text
    assert "input_file(Q3 report.pdf; application/pdf; 12.0 KiB)" in text
    assert "12.0 KiB of base64" in text
