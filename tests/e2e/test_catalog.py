"""The real Codex CLI reads the gateway's model catalog and compacts at the upstream's window
(addon/routes/catalog.py, docs/codex.md "Model catalog").

The route states a small window (`context_window = 20000` in the TOML routes), so Codex should
compact once the reported usage passes 90% of it (18,000 tokens). A fake upstream answers the first
turn with a tool call and reports 19,000 input tokens: Codex must compact before the follow-up
request. The control reports 10,000 (50%) and must not. Without the served catalog Codex would keep
gpt-5.5's own 272,000 tokens and compact in neither run.

Setups: regular proxy mode (Codex fetches chatgpt.com's catalog URL through the proxy; remote
compaction), through each of the four targets; a custom provider whose `model_catalog_url` is the
gateway's own path (local compaction); and `openai_base_url`, where Codex fetches nothing and reads
the file `python -m addon catalog` wrote (`model_catalog_json`). A last test checks that the served
entry changes nothing Codex sends but the window.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from addon.routes.catalog import BUNDLED_PATH
from tests.e2e.targets import (
    PROMPT,
    TARGETS,
    Outcome,
    Target,
    codex_setup,
    gateway,
    routes_file,
    run_codex,
    script,
    texts,
    turns,
)
from tests.support.codex_cli import (
    CLASSIC_MODEL,
    REPO_ROOT,
    CodexSetup,
    bundled_catalog,
    openai_provider_setup,
    run_codex_exec,
)
from tests.support.fake_upstream import FakeUpstream, Reply, refuse_everything
from translators.features import compaction

pytestmark = [pytest.mark.codex, pytest.mark.timeout(420)]

ANTHROPIC = TARGETS[0]
WINDOW = 20_000
OVER = 19_000
"""Reported input tokens above 90% of WINDOW."""
UNDER = 10_000
"""Half of WINDOW: no compaction."""
SUMMARY = "Goal: list the workspace. Done: ran ls. Next: report the files."
CLOSING = "all done"
LOCAL_COMPACTION_PROMPT = "You are performing a CONTEXT CHECKPOINT COMPACTION"
"""How Codex's own (local) compaction request begins (docs/codex.md "Compaction")."""


def is_compaction(body: Any) -> bool:
    """A summary request: the gateway's (remote compaction) or Codex's own (local)."""
    said = texts(body)
    if not said or said[-1][0] != "user":
        return False
    return said[-1][1] == compaction.INSTRUCTION or said[-1][1].startswith(LOCAL_COMPACTION_PROMPT)


def carries_summary(body: Any) -> bool:
    return any(role == "user" and SUMMARY in text for role, text in texts(body))


def answer(target: Target, reported: int) -> Callable[..., Reply]:
    """The summary to a summary request, the closing text after it or after the tool's result, and
    otherwise the tool call reported at `reported` input tokens."""
    return script(target, reported, is_summary_request=is_compaction, summary=SUMMARY, closing=CLOSING)


@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    with FakeUpstream(refuse_everything) as hole:
        yield hole


def cached_window(setup: CodexSetup, slug: str = CLASSIC_MODEL) -> int | None:
    """The window Codex cached for `slug` from a fetched catalog (None: nothing was fetched)."""
    cache = setup.home / "models_cache.json"
    if not cache.is_file():
        return None
    models = json.loads(cache.read_text()).get("models") or []
    return next((m.get("context_window") for m in models if m.get("slug") == slug), None)


def compactions(upstream: FakeUpstream) -> list[Any]:
    return [body for body in turns(upstream) if is_compaction(body)]


def run_at_window(tmp_path: Path, setup: str, target: Target, reported: int,
                  black_hole: FakeUpstream) -> Outcome:
    return run_codex(tmp_path, setup, target, answer(target, reported), black_hole,
                     route={"context_window": WINDOW})


def assert_compacted_once(outcome: Outcome) -> None:
    said = outcome.context()
    assert outcome.run.returncode == 0, said
    assert CLOSING in outcome.run.final_message, said
    assert len(compactions(outcome.upstream)) == 1, said
    assert carries_summary(turns(outcome.upstream)[-1]), said
    assert outcome.mitm.upstream_hosts() == {"127.0.0.1"}, outcome.mitm.log


def assert_not_compacted(outcome: Outcome) -> None:
    said = outcome.context()
    assert outcome.run.returncode == 0, said
    assert CLOSING in outcome.run.final_message, said
    assert compactions(outcome.upstream) == [], said


@pytest.mark.parametrize("reported", [OVER, UNDER], ids=["over-90pct", "at-50pct"])
@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_regular_mode_compacts_at_the_served_window(tmp_path: Path, target: Target, reported: int,
                                                    black_hole: FakeUpstream) -> None:
    outcome = run_at_window(tmp_path, "regular", target, reported, black_hole)
    assert cached_window(outcome.setup) == WINDOW, outcome.context()
    if reported == OVER:
        assert_compacted_once(outcome)
    else:
        assert_not_compacted(outcome)


@pytest.mark.parametrize("reported", [OVER, UNDER], ids=["over-90pct", "at-50pct"])
def test_custom_provider_compacts_at_the_window_from_its_catalog_url(tmp_path: Path, reported: int,
                                                                     black_hole: FakeUpstream) -> None:
    outcome = run_at_window(tmp_path, "custom_provider", ANTHROPIC, reported, black_hole)
    assert cached_window(outcome.setup) == WINDOW, outcome.context()
    if reported == OVER:
        assert_compacted_once(outcome)
    else:
        assert_not_compacted(outcome)


def test_openai_base_url_mode_compacts_at_the_window_of_the_written_catalog(tmp_path: Path,
                                                                            black_hole: FakeUpstream) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with FakeUpstream(answer(ANTHROPIC, OVER)) as up:
        config = routes_file(tmp_path, ANTHROPIC, up, context_window=WINDOW)
        written = tmp_path / "catalog.json"
        command = [sys.executable, "-m", "addon", "catalog", "--config", str(config), "-o", str(written)]
        made = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False)
        assert made.returncode == 0, made.stderr
        with gateway(tmp_path, ANTHROPIC, config, "reverse:https://api.openai.com") as mitm:
            setup = codex_setup("openai_base_url", tmp_path / "codex", mitm, black_hole)
            run = run_codex_exec(setup, PROMPT, work, timeout=180,
                                 extra_args=["-c", f"model_catalog_json={json.dumps(str(written))}"])
    assert_compacted_once(Outcome(run, up, mitm, setup))


def test_the_shipped_catalog_is_what_the_installed_codex_bundles() -> None:
    """`python -m bench.codex_models` regenerates the file when this fails."""
    assert BUNDLED_PATH.read_bytes() == bundled_catalog()


# -- nothing but the window --------------------------------------------------------------------
PER_RUN_FIELDS = {"id", "internal_chat_message_metadata_passthrough"}
"""Fields of an input item that differ between any two runs (ids, turn ids, timestamps)."""


def first_request(capture_dir: Path, home: Path) -> dict[str, Any]:
    """The client's (Codex's) first Responses body the gateway translated, as captured, with what
    differs between any two runs taken out: item ids and timestamps, and the run's CODEX_HOME in
    the skills instructions. The capture has already redacted `prompt_cache_key`."""
    folders = sorted(p for p in capture_dir.iterdir() if p.is_dir())
    assert folders, f"no capture in {capture_dir}"
    body = json.loads((folders[0] / "request.json").read_text().replace(str(home), "<CODEX_HOME>"))
    body["input"] = [{k: v for k, v in item.items() if k not in PER_RUN_FIELDS} for item in body["input"]]
    return body


def test_the_served_entry_leaves_tools_and_instructions_as_codex_ships_them(tmp_path: Path) -> None:
    """Codex sends the same request for gpt-5.5 whether the gateway serves its catalog (window
    200,000) or not (a route to a model without a known window: the catalog request goes on to
    mitmproxy's block list, 404, and Codex keeps its bundled entry)."""
    work = tmp_path / "work"
    work.mkdir()
    bodies, windows = {}, {}
    runs = (("served", {"context_window": 200_000}), ("bundled", {"target_model": "mystery-model"}))
    for name, extra in runs:
        home = tmp_path / name
        home.mkdir()
        with FakeUpstream(answer(ANTHROPIC, UNDER)) as up, \
                gateway(home, ANTHROPIC, routes_file(home, ANTHROPIC, up, **extra), None,
                        gateway_capture_dir=str(home / "captures")) as mitm:
            setup = openai_provider_setup(home / "codex", proxy_url=mitm.url, ca_cert=mitm.ca_cert)
            run = run_codex_exec(setup, PROMPT, work, timeout=180)
        assert run.returncode == 0, Outcome(run, up, mitm, setup).context()
        bodies[name] = first_request(home / "captures", setup.home)
        windows[name] = cached_window(setup)
    assert windows == {"served": 200_000, "bundled": None}
    served, bundled = bodies["served"], bodies["bundled"]
    assert [t.get("name") for t in served["tools"]] == [t.get("name") for t in bundled["tools"]]
    assert "apply_patch" in [t.get("name") for t in served["tools"]]
    assert served["tools"] == bundled["tools"]
    instructions = served["input"][0]  # the model's base instructions, as a developer message
    assert instructions["role"] == "developer"
    assert instructions["content"][0]["text"].startswith("You are Codex")
    assert instructions == bundled["input"][0]
    assert served == bundled
