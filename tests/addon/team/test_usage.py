"""addon/team/usage.py: the usage report's command."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from addon.state.store import open_store
from addon.team import usage


def test_a_store_path_that_does_not_exist_is_an_error_and_no_new_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "gateway-store.sqlite"
    assert usage.main([str(missing)]) == 1
    assert "no store at" in capsys.readouterr().err
    assert not missing.exists()


def test_to_defaults_to_today_so_from_alone_runs_to_today() -> None:
    """The README's `--from 2026-12-01` printed nothing for later days: `--to` was `--from`."""
    assert usage.days("2026-12-01", None, "2026-12-06") == ("2026-12-01", "2026-12-06")
    assert usage.days(None, None, "2026-12-06") == ("2026-12-06", "2026-12-06")
    assert usage.days(None, "2026-12-03", "2026-12-06") == ("2026-12-03", "2026-12-03")
    assert usage.days("2026-12-07", None, "2026-12-06") == "to is before from"


def test_the_command_with_from_alone_reports_the_days_after_it(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    store = open_store(str(tmp_path / "store.sqlite"), ttl=0, max_bytes=0)
    today = datetime.datetime.now(datetime.UTC).date()
    earlier = (today - datetime.timedelta(days=2)).isoformat()
    store.add_usage("ana", earlier, "anthropic", "claude-sonnet-4-6", usage.counts({"input_tokens": 10}, 0.5))
    store.add_usage("ana", today.isoformat(), "anthropic", "claude-sonnet-4-6",
                    usage.counts({"input_tokens": 20, "output_tokens": 4}, 0.25))
    store.close()
    assert usage.main([str(tmp_path / "store.sqlite"), "--from", earlier, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["to"] == today.isoformat()
    assert printed["totals"] == {"requests": 2, "input_tokens": 30, "cached_tokens": 0, "output_tokens": 4,
                                 "reasoning_tokens": 0, "partial_requests": 0, "cost_usd": 0.75}


def test_counts_read_a_messages_usage_as_a_responses_one() -> None:
    """A Messages client's usage counts cache reads and writes apart from `input_tokens`."""
    messages = {"input_tokens": 10, "cache_read_input_tokens": 80, "cache_creation_input_tokens": 10,
                "output_tokens": 5}
    responses = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 80, "cache_write_tokens": 10},
                 "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 2}}
    assert usage.counts(messages, 0.01) == {"requests": 1, "input_tokens": 100, "cached_tokens": 80,
                                            "output_tokens": 5, "reasoning_tokens": 0, "cost_usd": 0.01,
                                            "partial_requests": 0}
    assert usage.counts(responses)["input_tokens"] == 100
    assert usage.counts(responses)["reasoning_tokens"] == 2
    assert usage.counts(None) == {"requests": 1, "input_tokens": 0, "cached_tokens": 0, "output_tokens": 0,
                                  "reasoning_tokens": 0, "cost_usd": 0.0, "partial_requests": 0}


def test_the_table_has_a_cost_per_row_per_client_and_in_all() -> None:
    rows = [{"client": "ana", "day": "2026-12-01", "route": "anthropic", "model": "claude", "requests": 1,
             "input_tokens": 10, "cached_tokens": 0, "output_tokens": 2, "reasoning_tokens": 0,
             "cost_usd": 0.004215},
            {"client": "bob", "day": "2026-12-01", "route": "anthropic", "model": "claude", "requests": 2,
             "input_tokens": 20, "cached_tokens": 0, "output_tokens": 4, "reasoning_tokens": 0,
             "cost_usd": 1.5}]
    lines = usage.table(rows).splitlines()
    assert lines[0].endswith("\tcost_usd")
    assert lines[1] == "ana\t*\t*\t*\t1\t10\t0\t2\t0\t0\t$0.004215"
    assert lines[-1] == "*\t*\t*\t*\t3\t30\t0\t6\t0\t0\t$1.50"
