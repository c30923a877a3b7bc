"""addon/state/stored_items.py: the stored history put in place of `previous_response_id` / `conversation`
(docs/state.md)."""

from __future__ import annotations

from addon.state import stored_items

PAST = [{"type": "message", "id": "msg_1", "role": "user",
         "content": [{"type": "input_text", "text": "before"}], "status": "completed"},
        {"type": "message", "id": "msg_2", "role": "assistant",
         "content": [{"type": "output_text", "text": "answer", "annotations": []}], "status": "completed"}]


def test_the_history_comes_before_the_new_input_and_nothing_else_is_added() -> None:
    """A `/responses/compact` body is expanded like any other: the translators are told it is a
    compaction (`kind="compaction_endpoint"`), no trigger item is put in its input."""
    body = {"model": "gpt-5.5", "input": "summarize me", "previous_response_id": "resp_1", "stream": True}
    expanded, new_items = stored_items.expand(body, PAST)
    assert expanded["input"] == [*PAST, *new_items]
    assert [i["content"][0]["text"] for i in new_items] == ["summarize me"]
    assert new_items[0]["id"].startswith("msg_")
    assert expanded["stream"] is True and "previous_response_id" not in expanded
    assert stored_items.resolved(body) == {"previous_response_id": "resp_1"}
