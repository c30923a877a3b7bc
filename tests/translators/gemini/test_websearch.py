"""Gemini's Google Search grounding (issue 19): the request declares `googleSearch`, the answer's
`groundingMetadata` becomes a `web_search_call` item and `url_citation` annotations whose byte
offsets are turned into characters."""

from __future__ import annotations

from typing import Any

from google.genai import types

from tests.translators.gemini.support import chunk, function_tool, gemini_body, sse, text, translation
from tests.translators.streamcheck import assert_chunking_invariant, assert_valid_responses_stream, done_items

LIVE = {"type": "web_search", "external_web_access": True, "search_content_types": ["text", "image"]}
FIRST, SECOND = "Lisboa tem cerca de ", "545 mil habitantes — e muito café ☕."
CITED = "545 mil habitantes — e muito café ☕"
QUERIES = ["população de lisboa", "lisbon population 2025"]
PAGES = [{"web": {"uri": "https://example.pt/lisboa", "title": "example.pt"}},
         {"web": {"uri": "https://stats.example.org/pop", "title": "stats.example.org"}}]


def byte_span(whole: str, part: str) -> tuple[int, int]:
    start = whole.encode().index(part.encode())
    return start, start + len(part.encode())


def grounded_chunks() -> list[dict[str, Any]]:
    start, end = byte_span(FIRST + SECOND, CITED)
    metadata = {"webSearchQueries": QUERIES, "groundingChunks": PAGES,
                "groundingSupports": [{"segment": {"startIndex": start, "endIndex": end, "text": CITED},
                                       "groundingChunkIndices": [1, 0]}],
                "searchEntryPoint": {"renderedContent": "<div>chips</div>"}}
    last = chunk(text(SECOND), finish="STOP",
                 usage={"promptTokenCount": 12, "candidatesTokenCount": 20, "totalTokenCount": 32})
    last["candidates"][0]["groundingMetadata"] = metadata
    return [chunk(text(FIRST)), last]


def stream() -> bytes:
    return sse(*grounded_chunks())


def test_the_synthetic_chunks_are_valid_for_google_genai():
    for payload in grounded_chunks():
        types.GenerateContentResponse.model_validate(payload)


def test_grounding_becomes_a_message_with_url_citations_in_characters_then_a_web_search_call():
    sse_out = assert_chunking_invariant("gemini", translation(tools=[LIVE]), stream(), every_split=False)
    payloads = assert_valid_responses_stream(sse_out)
    answer, search = done_items(payloads)
    whole = FIRST + SECOND
    begin = whole.index(CITED)
    cites = [{"type": "url_citation", "url": PAGES[i]["web"]["uri"], "title": PAGES[i]["web"]["title"],
              "start_index": begin, "end_index": begin + len(CITED)} for i in (1, 0)]
    assert answer["content"][0] == {"type": "output_text", "text": whole, "annotations": cites}
    assert search["type"] == "web_search_call"
    assert search["status"] == "completed"
    assert search["action"] == {"type": "search", "query": "; ".join(QUERIES),
                                "sources": [{"type": "url", "url": p["web"]["uri"]} for p in PAGES]}


def test_google_search_is_declared_alone_on_any_gemini_and_beside_functions_on_gemini_3():
    alone, report = gemini_body(tools=[LIVE], model="gemini-2.5-flash")
    assert alone["tools"] == [{"googleSearch": {}}]
    assert report.dropped == []
    both, _ = gemini_body(tools=[function_tool("lookup"), LIVE], model="gemini-3-pro-preview")
    assert both["tools"][1] == {"googleSearch": {}}
    assert both["tools"][0]["functionDeclarations"][0]["name"] == "lookup"
    assert both["toolConfig"]["includeServerSideToolInvocations"] is True


def test_gemini_2_keeps_the_functions_and_reports_the_search_dropped():
    body, report = gemini_body(tools=[function_tool("lookup"), LIVE], model="gemini-2.5-flash")
    assert body["tools"] == [{"functionDeclarations": [body["tools"][0]["functionDeclarations"][0]]}]
    assert report.dropped == ["tools[1]"]
    assert any("cannot combine Google Search with function calling" in note for note in report.notes)


def test_cached_only_search_is_dropped_on_gemini_too():
    body, report = gemini_body(tools=[{**LIVE, "external_web_access": False}])
    assert "tools" not in body
    assert report.dropped == ["tools[0]"]
