"""addon/routes/catalog.py: Codex's bundled entries served with the routed upstream's window, the URLs
answered, and the `python -m addon catalog` command."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import exceptions
from mitmproxy.test import taddons

from addon.routes import catalog
from addon.routes.catalog import BUNDLED_VERSION, answer, build, catalog_request, client_version, with_window
from addon.routes.routing import Route, Router, from_options
from tests.addon.conftest import Chain, client_flow, run_request
from translators import dialect as dialects
from translators.families.claude.models import lookup

GPT_55 = "gpt-5.5"
GPT_5_SLUGS = ["gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna", "gpt-5.5"]
"""The slugs of Codex 0.169.0's bundled catalog that `gpt-5*` matches."""
CHATGPT_URL = f"https://chatgpt.com/backend-api/codex/models?client_version={BUNDLED_VERSION}"


def bundled() -> tuple[dict[str, Any], ...]:
    return catalog.load_bundled()


def entry(slug: str) -> dict[str, Any]:
    return next(e for e in bundled() if e["slug"] == slug)


def router(model: str, upstream: str = "anthropic", **options: Any) -> Router:
    return Router(routes=tuple(from_options(upstream, "", model, "", **options)))


def changed_keys(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


# -- the shipped bundled catalog ----------------------------------------------------------------
def test_the_shipped_catalog_is_codex_0_169_own_with_full_entries() -> None:
    gpt = entry(GPT_55)
    assert gpt["context_window"] == 272_000
    assert gpt["apply_patch_tool_type"] == "freeform"
    assert gpt["base_instructions"].startswith("You are Codex")
    assert {"low", "medium", "high"} <= {level["effort"] for level in gpt["supported_reasoning_levels"]}


def test_a_file_that_is_not_a_catalog_says_how_to_write_one(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text('{"data": []}')
    with pytest.raises(catalog.CatalogError, match="codex debug models --bundled"):
        catalog.load_bundled(str(path))


# -- one entry ---------------------------------------------------------------------------------
def test_an_entry_changes_only_its_window() -> None:
    gpt = entry(GPT_55)
    served = with_window(gpt, 200_000)
    assert changed_keys(gpt, served) == {"context_window", "max_context_window"}
    assert (served["context_window"], served["max_context_window"]) == (200_000, 200_000)
    assert gpt["context_window"] == 272_000  # the shared bundled entry is left alone


def test_an_auto_compact_limit_above_codex_threshold_for_the_new_window_comes_down() -> None:
    own = {**entry(GPT_55), "auto_compact_token_limit": 250_000}
    assert with_window(own, 200_000)["auto_compact_token_limit"] == 180_000
    lower = {**entry(GPT_55), "auto_compact_token_limit": 100_000}
    assert with_window(lower, 200_000)["auto_compact_token_limit"] == 100_000


# -- the whole catalog ---------------------------------------------------------------------------
def test_a_route_pattern_maps_every_bundled_slug_it_matches() -> None:
    built = build(router("gpt-5*=claude-sonnet-4-6"), bundled())
    assert list(built.windows) == GPT_5_SLUGS
    assert set(built.windows.values()) == {200_000}  # Claude Sonnet 4.6's window
    assert entry("gpt-6-sol") in built.models  # unmapped: as Codex ships it


def test_the_whole_catalog_is_served_in_codex_order() -> None:
    built = build(router("gpt-5.5=claude-sonnet-4-6"), bundled())
    assert [m["slug"] for m in built.models] == [m["slug"] for m in bundled()]
    assert [m for m in built.models if m["slug"] != GPT_55] == [m for m in bundled() if m["slug"] != GPT_55]


def test_an_upstream_model_without_a_known_window_is_left_to_codex() -> None:
    built = build(router("gpt-5.5=mystery-model"), bundled())
    assert built.windows == {}
    assert built.unknown == {GPT_55: "anthropic mystery-model"}
    assert entry(GPT_55) in built.models
    assert "gpt-5.5 (anthropic mystery-model) left to Codex" in built.summary()


def test_the_client_model_name_is_the_upstream_model_when_the_route_keeps_it() -> None:
    asked: list[str] = []
    build(router("", upstream="chat"), bundled(), lambda route, model: asked.append(model))
    assert asked == [m["slug"] for m in bundled()]


def test_the_vendors_own_window_is_served_once_the_gateway_has_read_it() -> None:
    # Anthropic publishes max_input_tokens; the capabilities cache hands it to the catalog
    vendor = replace(lookup("claude-sonnet-4-6"), source="vendor", context_window=1_000_000)
    windows = catalog.windows_from(lambda route, model: vendor)
    served = build(router("gpt-5*=claude-sonnet-4-6"), bundled(), windows)
    assert served.windows[GPT_55] == 1_000_000
    assert build(router("gpt-5*=claude-sonnet-4-6"), bundled()).windows[GPT_55] == 200_000  # the table's


def test_a_stated_window_wins_over_the_model_figure() -> None:
    built = build(router("claude-sonnet-4-6", context_window=20_000), bundled())
    assert set(built.windows.values()) == {20_000}


def test_an_openai_route_is_left_to_codex_unless_a_window_is_stated() -> None:
    assert build(router("gpt-5.5=gpt-4.1", upstream="responses"), bundled()).windows == {}
    stated = build(router("gpt-5.5=gpt-4.1", upstream="responses", context_window=100_000), bundled())
    assert stated.windows == {GPT_55: 100_000}


def test_a_summarizer_with_a_smaller_window_sets_the_window() -> None:
    """The compaction request carries the whole history to the summarizer, so it must fit there."""
    haiku = Route("gpt-5.5", dialects.get("anthropic"), "https://a", "claude-haiku-4-5", "ANTHROPIC_API_KEY")
    big = Route("gpt-5.5", dialects.get("gemini"), "https://g", "gemini-2.5-pro", "GEMINI_API_KEY",
                summarizer=haiku)
    assert build(Router(routes=(big,)), bundled()).windows == {GPT_55: 200_000}


# -- the URLs answered ---------------------------------------------------------------------------
@pytest.mark.parametrize(("method", "host", "path", "where"), [
    ("GET", "chatgpt.com", "/backend-api/codex/models?client_version=0.169.0", "chatgpt"),
    ("GET", "127.0.0.1", "/gateway/codex/models?client_version=0.169.0", "gateway"),
    ("GET", "api.openai.com", "/gateway/codex/models", "gateway"),
    ("POST", "chatgpt.com", "/backend-api/codex/models", None),
    ("GET", "example.com", "/backend-api/codex/models", None),
    ("GET", "api.openai.com", "/v1/models", None),
    ("GET", "chatgpt.com", "/backend-api/codex/responses", None),
])
def test_catalog_requests_are_the_chatgpt_url_and_the_gateway_path(method: str, host: str, path: str,
                                                                   where: str | None) -> None:
    assert catalog_request(method, host, path) == where


def test_the_client_version_is_read_from_the_query() -> None:
    assert client_version("/gateway/codex/models?client_version=0.170.1") == "0.170.1"
    assert client_version("/gateway/codex/models") is None


def test_the_served_body_is_a_models_list_of_whole_entries() -> None:
    result = answer("chatgpt", BUNDLED_VERSION, router("gpt-5.5=claude-sonnet-4-6"))
    assert result.status == 200 and result.body is not None
    assert list(result.body) == ["models"]
    served = next(m for m in result.body["models"] if m["slug"] == GPT_55)
    assert changed_keys(entry(GPT_55), served) == {"context_window", "max_context_window"}
    assert "gpt-5.5 -> 200,000 tokens" in result.note


def test_nothing_to_change_lets_chatgpt_answer_and_the_gateway_path_serve_codex_own() -> None:
    """A custom provider with a `model_catalog_url` keeps only what it fetched: a failed fetch
    would leave it with fallback metadata for every model."""
    unmapped = router("o3=claude-sonnet-4-6")
    assert answer("chatgpt", BUNDLED_VERSION, unmapped).body is None
    own = answer("gateway", BUNDLED_VERSION, unmapped)
    assert own.status == 200
    assert own.body == {"models": list(bundled())}


def test_another_codex_version_gets_its_own_entries_from_the_user_file(tmp_path: Path) -> None:
    mapped = router("claude-sonnet-4-6")
    passed = answer("chatgpt", "0.170.0", mapped)
    assert passed.body is None
    assert "codex debug models --bundled" in passed.note
    mine = tmp_path / "codex-models.json"
    mine.write_text(json.dumps({"models": [{**entry(GPT_55), "base_instructions": "newer"}]}))
    theirs = answer("chatgpt", "0.170.0", mapped, str(mine))
    assert theirs.body == {"models": [{**entry(GPT_55), "base_instructions": "newer",
                                       "context_window": 200_000, "max_context_window": 200_000}]}
    assert not theirs.warning


def test_another_codex_version_at_the_gateway_path_gets_the_shipped_entries_with_a_warning() -> None:
    served = answer("gateway", "0.170.0", router("claude-sonnet-4-6"))
    assert served.status == 200 and served.warning
    assert "Codex 0.170.0 was served Codex 0.169.0's entries" in served.note


# -- through the addon -----------------------------------------------------------------------------
def test_the_gateway_answers_codex_catalog_request_itself(gateway: tuple[Chain, Any]) -> None:
    addon, _ = gateway
    flow = client_flow(url=CHATGPT_URL, method="GET")
    run_request(addon, flow)
    assert flow.response is not None and flow.response.status_code == 200
    served = json.loads(flow.response.content or b"")
    assert next(m for m in served["models"] if m["slug"] == GPT_55)["context_window"] == 200_000


def test_an_unmapped_catalog_request_goes_on_untouched(gateway: tuple[Chain, Any]) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_model="o3=claude-sonnet-4-6")
    flow = client_flow(url=CHATGPT_URL, method="GET")
    run_request(addon, flow)
    assert flow.response is None
    assert flow.request.url == CHATGPT_URL


def test_gateway_context_window_applies_to_every_route(gateway: tuple[Chain, Any]) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_context_window=50_000)
    flow = client_flow(url=f"http://127.0.0.1:8080{catalog.GATEWAY_PATH}", method="GET")
    run_request(addon, flow)
    assert flow.response is not None
    windows = {m["context_window"] for m in json.loads(flow.response.content or b"")["models"]}
    assert windows == {50_000}


def test_an_unreadable_codex_catalog_option_is_an_options_error(tmp_path: Path) -> None:
    addon = Chain()
    missing = str(tmp_path / "missing.json")
    refused = pytest.raises(exceptions.OptionsError, match="cannot be read")
    with taddons.context(*addon.members) as tctx, refused:
        tctx.configure(addon, gateway_codex_catalog=missing)


def test_a_translated_request_is_not_taken_for_a_catalog_request(gateway: tuple[Chain, Any]) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    assert flow.response is None
    assert flow.request.path == "/v1/messages"


# -- the command -----------------------------------------------------------------------------------
def test_the_command_writes_the_whole_catalog_with_the_windows(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    routes = tmp_path / "routes.toml"
    routes.write_text('[[route]]\nmodel = "gpt-5.5"\nupstream = "chat"\ntarget_model = "deepseek-chat"\n'
                      '[[route]]\nmodel = "gpt-5.6*"\nupstream = "anthropic"\ncontext_window = 150000\n')
    out = tmp_path / "catalog.json"
    assert catalog.main(["--config", str(routes), "-o", str(out)]) == 0
    written = json.loads(out.read_text())["models"]
    assert [m["slug"] for m in written] == [m["slug"] for m in bundled()]
    windows = {m["slug"]: m["context_window"] for m in written}
    assert windows[GPT_55] == 128_000  # DeepSeek's window
    assert [windows[s] for s in GPT_5_SLUGS[:3]] == [150_000] * 3
    assert windows["gpt-6-sol"] == entry("gpt-6-sol")["context_window"]
    assert "gpt-5.5 -> 128,000 tokens" in capsys.readouterr().err


def test_the_command_refuses_to_write_codex_own_catalog(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "catalog.json"
    assert catalog.main(["--upstream", "chat", "--model", "gpt-5.5=local-model", "-o", str(out)]) == 1
    assert not out.exists()
    assert "gpt-5.5 (chat local-model) left to Codex" in capsys.readouterr().err


def test_the_command_reports_a_bad_route_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    routes = tmp_path / "routes.toml"
    routes.write_text('[[route]]\nupstream = "anthropic"\ncontext_window = "200k"\n')
    assert catalog.main(["--config", str(routes)]) == 2
    assert "context_window must be a positive number" in capsys.readouterr().err



@pytest.mark.parametrize("value", ["0.170.1%0Aforged%20line", "x" * 200, "%00", "..", "1 2"])
def test_a_client_version_that_is_no_version_reads_as_one_unreadable_value(value: str) -> None:
    assert client_version(f"/gateway/codex/models?client_version={value}") == catalog.UNREADABLE_VERSION


def test_the_log_says_a_bounded_number_of_distinct_outcomes(caplog: pytest.LogCaptureFixture) -> None:
    server = catalog.Server()
    router = Router(routes=tuple(from_options("anthropic", "", "claude-sonnet-4-6", "")))
    with caplog.at_level("INFO", logger="addon.routes.catalog"):
        for n in range(catalog.MAX_NOTES * 3):
            flow = client_flow(url=f"https://gw.local/gateway/codex/models?client_version=0.{n}.0",
                               method="GET")
            assert server.serve(flow, router)
    assert len(caplog.records) == catalog.MAX_NOTES
    assert all("\n" not in r.getMessage() for r in caplog.records)
