"""Real mitmdump refuses a bad gateway option at start-up, with the message that says what to write."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.mitmdump import MITMDUMP, ROOT

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize(("option", "says"), [
    ("gateway_upstream=claude", "write one of responses, anthropic, chat, gemini, bedrock"),
    ("gateway_model=gpt-5*=claude-sonnet-4-6,claude-haiku-4-5", "is not pattern=model"),
])
def test_bad_option_stops_mitmdump_with_a_useful_message(tmp_path: Path, option: str, says: str) -> None:
    done = subprocess.run([str(MITMDUMP), "--listen-host", "127.0.0.1", "-p", "0",
                           "--set", f"confdir={tmp_path}", "-s", str(ROOT / "addon" / "gateway.py"),
                           "--set", option], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert says in done.stdout + done.stderr
