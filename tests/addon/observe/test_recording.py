"""addon/observe/recording.py: redacted capture folders, written by the `response` hook when asked."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from mitmproxy import http

from addon.observe import recording
from tests.addon.conftest import UPSTREAM_KEY, Chain, capture_messages_turn, client_flow, finish, run_request
from tests.data import DATA
from translators import dialect as dialects

Ctx = tuple[Chain, object]
RAW = ((DATA / "anthropic") / "text_after_tool_result.sse").read_bytes()
BODY = {"model": "gpt-5.5", "input": "hi", "stream": True, "prompt_cache_key": "0198-thread-id",
        "client_metadata": {"installation_id": "inst-42"}, "user": "user-42"}


def _captured(gateway: Ctx, tmp_path: Path, raw: bytes = RAW) -> Path:
    addon, tctx = gateway
    tctx.configure(addon, gateway_capture_dir=str(tmp_path / "captures"))
    flow = client_flow(BODY)
    run_request(addon, flow)
    flow.response = http.Response.make(200, raw, {"content-type": "text/event-stream"})
    flow.is_replay = "response"  # whole-body path: no stream callable needed
    addon.responseheaders(flow)
    finish(addon.response(flow))
    (folder,) = (tmp_path / "captures").iterdir()
    return folder


def test_capture_folder_holds_request_upstream_answer_and_description(gateway: Ctx, tmp_path: Path,
                                                                      listener: str) -> None:
    folder = _captured(gateway, tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["capture.json", "request.json", "upstream.body"]
    meta = json.loads((folder / "capture.json").read_text())
    assert meta == {"dialect": "anthropic", "model": "claude-sonnet-4-6", "base_url": listener,
                    "request": "request.json", "upstream": "upstream.body", "status": 200,
                    "content_type": "text/event-stream", "client": "responses"}
    assert (folder / "upstream.body").read_bytes() == RAW


def test_capture_drops_identifying_request_fields(gateway: Ctx, tmp_path: Path) -> None:
    request = json.loads((_captured(gateway, tmp_path) / "request.json").read_text())
    assert "client_metadata" not in request
    assert "user" not in request
    assert request["prompt_cache_key"] == "redacted"
    assert request["input"] == "hi"


def test_capture_scrubs_keys_from_the_environment_and_key_shaped_strings(
        gateway: Ctx, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-not-shaped-like-a-key-42")
    raw = RAW.replace(b"Charles", UPSTREAM_KEY.encode()).replace(b"Sammy", b"tok-not-shaped-like-a-key-42")
    upstream = (_captured(gateway, tmp_path, raw) / "upstream.body").read_bytes()
    assert UPSTREAM_KEY.encode() not in upstream
    assert b"tok-not-shaped-like-a-key-42" not in upstream
    assert upstream.count(b"<redacted>") == 2


def test_no_capture_without_the_option(gateway: Ctx, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    flow.response = http.Response.make(200, RAW, {"content-type": "text/event-stream"})
    flow.is_replay = "response"
    finish(addon.response(flow))
    assert list(tmp_path.iterdir()) == []


def test_untranslated_flow_is_not_captured(tmp_path: Path) -> None:
    flow = client_flow(url="https://example.com/v1/responses")
    flow.response = http.Response.make(200, b"{}")
    assert recording.write(tmp_path, flow) is None
    assert list(tmp_path.iterdir()) == []


def test_key_shaped_strings_are_scrubbed_only_where_a_word_starts() -> None:
    data = b'a <task-notification> comes; sk-proj-abcdefgh123, "sk-ant-api03-xyzxyzxyz" AKIAABCDEFGHIJKLMNOP'
    assert recording.scrub(data, []) == b'a <task-notification> comes; <redacted>, "<redacted>" <redacted>'


def test_a_claude_code_turns_capture_names_its_client_and_keeps_its_request_but_the_metadata(
        gateway: Ctx, tmp_path: Path) -> None:
    """The real Claude Code request: every field but `metadata` (its device, account and session
    ids) as it came, `<task-notification>` in its tool descriptions included."""
    claude = json.loads((DATA / "claude_code" / "request_say_hi.json").read_text())
    folder = capture_messages_turn(*gateway, tmp_path / "captures", claude, RAW)
    assert json.loads((folder / "capture.json").read_text())["client"] == "messages"
    kept = json.loads((folder / "request.json").read_text())
    assert kept == {k: v for k, v in claude.items() if k != "metadata"}
    assert (folder / "upstream.body").read_bytes() == RAW


def test_a_vendors_key_shape_and_credential_variables_come_from_its_dialect(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A vendor outside the package declares what its keys look like and where they are kept
    (`Vendor.key_shapes`, `Vendor.secret_env`); the capture scrubs them with no edit here."""
    shipped = dialects.get("anthropic")
    toy = replace(shipped, name="toy-keys", vendor=replace(
        shipped.vendor, key_env=None, key_shapes=(r"toyk_[a-z0-9]{12,}",), secret_env=("TOY_VAULT_*",)))
    data = b'{"error": "bad key toyk_abcdef0123456789 from the vault: vault-secret-0123"}'
    monkeypatch.setenv("TOY_VAULT_PASSWORD", "vault-secret-0123")
    assert recording.scrub(data, recording.known_secrets()) == data
    monkeypatch.setitem(dialects._REGISTERED, toy.name, toy)
    assert recording.scrub(data, recording.known_secrets()) == (
        b'{"error": "bad key <redacted> from the vault: <redacted>"}')
