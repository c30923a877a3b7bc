"""Real mitmweb + the gateway addon + a translated Codex flow, looked at in headless Chromium.

The flow comes from `addon.observe.replay` (a recorded Codex turn replayed offline through mitmdump and the
addon); a plain flow is loaded next to it so the "dropped something" filter has something to hide.
Chromium is Debian's (`apt-get install chromium` when /usr/bin/chromium is absent) and is driven by
`playwright-core` (tests/browser/package.json; `npm ci` when missing), which downloads no browser.

Screenshots and the page report go to artifacts/browser/ (git-ignored), taken with the columns the
README tells users to set (`COLUMNS`). The Translation view's screenshot is the README's picture,
docs/mitmweb-translation.png: a run copies it there only when asked (`GATEWAY_UPDATE_SCREENSHOT=1
./run test tests/browser`), so a test run leaves the tree as it found it.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import http, io
from mitmproxy.test import tflow

from addon.observe.replay import replay

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CAPTURE = ROOT / "captures" / "codex-pelican-names-anthropic"
ARTIFACTS = ROOT / "artifacts" / "browser"
README_SCREENSHOT = ROOT / "docs" / "mitmweb-translation.png"
UPDATE_SCREENSHOT = os.environ.get("GATEWAY_UPDATE_SCREENSHOT") == "1"
"""Copy the new screenshot over the README's picture (otherwise the picture is left alone)."""
README_PICTURE = README_SCREENSHOT.read_bytes() if README_SCREENSHOT.exists() else None
"""The README's picture as this run found it."""
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
COMMENT = "-> anthropic claude-sonnet-5-5 | dropped: tools[9] | cosmetic: text.verbosity | notes: "
"""The replayed flow's comment up to its note count (one more without $ANTHROPIC_API_KEY set)."""
FILTER = "~comment dropped:"
"""The README's filter for "flows that dropped something"."""
COLUMNS = ("icon", "path", "method", "status", "comment")
"""mitmweb's `web_columns` as the README sets them (the comment column is not among the defaults)."""


def _run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)


def ensure_chromium() -> None:
    if CHROMIUM.exists():
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.fail(f"{CHROMIUM} is missing and apt-get cannot run here: install Debian's chromium package")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    done = _run(["apt-get", "install", "-y", "chromium"], env=env, timeout=900)
    if done.returncode != 0:  # a fresh machine may have no package lists yet
        _run(["apt-get", "update"], env=env, timeout=600)
        done = _run(["apt-get", "install", "-y", "chromium"], env=env, timeout=900)
    if done.returncode != 0 or not CHROMIUM.exists():
        pytest.fail(f"apt-get install chromium failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def ensure_playwright() -> str:
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm are needed for playwright-core (tests/browser/package.json)")
    if not (HERE / "node_modules" / "playwright-core" / "package.json").exists():
        done = _run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE, timeout=600)
        if done.returncode != 0:
            pytest.fail(f"npm ci in tests/browser failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return node


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_flows(path: Path, work: Path) -> None:
    """The translated flow, and a plain one the filter must hide."""
    translated = replay(CAPTURE, work / "translated.flow")
    plain = tflow.tflow(req=http.Request.make("GET", "https://example.com/health", b"", {}),
                        resp=http.Response.make(200, b"ok", {"content-type": "text/plain"}))
    plain.metadata.clear()
    with path.open("wb") as f:
        writer = io.FlowWriter(f)
        writer.add(plain)
        writer.add(translated)


def wait_for_web(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"mitmweb exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"mitmweb did not answer {url} within {timeout}s:\n{log.read_text()}")


@pytest.fixture(scope="module")
def mitmweb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A running mitmweb with the addon and the flows loaded; yields the URL that logs a browser in."""
    work = tmp_path_factory.mktemp("mitmweb")
    flows = work / "flows.flow"
    write_flows(flows, work)
    token = secrets.token_hex(8)
    web_port = free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = ARTIFACTS / "mitmweb.log"
    cmd = [str(Path(sys.executable).parent / "mitmweb"),
           "--web-host", "127.0.0.1", "--web-port", str(web_port), "--no-web-open-browser",
           "--listen-host", "127.0.0.1", "-p", str(free_port()),
           "--set", f"confdir={work / 'conf'}", "--set", f"web_password={token}",
           "-s", str(ROOT / "addon" / "gateway.py"), "-r", str(flows)]
    for column in COLUMNS:
        cmd += ["--set", f"web_columns={column}"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{web_port}"
        wait_for_web(f"{base}/state?token={token}", proc, log)
        yield f"{base}/?token={token}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def page(mitmweb: str) -> dict[str, Any]:
    """What tests/browser/mitmweb_check.mjs found on the page (see its header)."""
    ensure_chromium()
    node = ensure_playwright()
    out = ARTIFACTS
    (out / "report.json").unlink(missing_ok=True)
    env = {**os.environ, "CHROMIUM": str(CHROMIUM), "GATEWAY_FILTER": FILTER}
    done = _run([node, str(HERE / "mitmweb_check.mjs"), mitmweb, "/v1/messages", str(out)],
                cwd=HERE, timeout=300, env=env)
    if not (out / "report.json").exists():
        pytest.fail(f"the browser script wrote no report (exit {done.returncode}):\n{done.stderr[-3000:]}")
    report = json.loads((out / "report.json").read_text())
    if report.get("error"):
        pytest.fail(f"in the browser: {report['error']}\n--- page text ---\n{report.get('pageText', '')}")
    if UPDATE_SCREENSHOT:
        shutil.copyfile(out / "request.png", README_SCREENSHOT)
    return report


def test_the_flow_list_shows_the_mark(page: dict[str, Any]) -> None:
    assert page["marker"] == "⚠"
    assert page["markerOnScreen"]


def test_the_flow_list_shows_the_comment(page: dict[str, Any]) -> None:
    assert page["commentCell"].startswith(COMMENT)


def test_the_comment_tab_shows_the_comment(page: dict[str, Any]) -> None:
    assert COMMENT in page["commentTab"]


def test_the_request_opens_in_the_translation_view(page: dict[str, Any]) -> None:
    view = page["requestView"]
    assert view["title"] == "Translation"
    assert "View: auto" in view["text"]
    assert "Responses -> Anthropic Messages  (gpt-5.5 -> claude-sonnet-5-5)" in view["text"]


def test_the_translation_view_lists_what_was_dropped_with_its_kind(page: dict[str, Any]) -> None:
    text = page["requestView"]["text"]
    assert "dropped (2: 1 lossy, 1 cosmetic):" in text
    assert "- lossy: tools[9] = {\"type\":\"web_search\"" in text
    assert '- cosmetic: text.verbosity = "low"' in text
    assert "not sent: web_search" in " ".join(text.split())


def test_the_response_opens_in_the_sse_events_view_with_both_streams(page: dict[str, Any]) -> None:
    view = page["responseView"]
    assert view["title"] == "SSE events"
    assert "what the client got (Responses): 45 events" in view["text"]
    assert "what the upstream sent (Anthropic Messages): 41 events" in view["text"]


def test_the_dropped_filter_keeps_only_the_translated_flow(page: dict[str, Any]) -> None:
    assert page["filter"] == FILTER
    assert not page["filterInvalid"]
    assert len(page["rows"]) == 2
    assert [("/v1/messages" in row) for row in page["filteredRows"]] == [True]


def test_the_screenshot_is_taken_and_the_readme_picture_left_alone_unless_asked(
        page: dict[str, Any]) -> None:
    assert (ARTIFACTS / "request.png").stat().st_size > 0
    if UPDATE_SCREENSHOT:
        assert README_SCREENSHOT.read_bytes() == (ARTIFACTS / "request.png").read_bytes()
    else:
        assert README_SCREENSHOT.read_bytes() == README_PICTURE  # `./run test` leaves the tree clean


def test_the_readme_sets_the_columns_of_its_screenshot() -> None:
    """The README's mitmweb command shows the columns the screenshot was taken with."""
    readme = (ROOT / "README.md").read_text()
    assert tuple(re.findall(r"--set web_columns=(\w+)", readme)) == COLUMNS
    assert f"]({README_SCREENSHOT.relative_to(ROOT)})" in readme
