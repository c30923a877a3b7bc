"""bench/: every benchmark runs with tiny iteration counts and produces sane results (no timing
assertions; the numbers come from `python -m bench`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import __main__ as cli
from bench import fixtures, proxy, requests, streams, workloads
from bench.timing import interleaved
from translators import translate_request


@pytest.fixture(scope="module")
def targets() -> list[str]:
    found, _ = requests.available_targets()
    assert "anthropic" in found
    return found


def test_long_session_has_the_promised_shape() -> None:
    raw = workloads.long_request()
    shape = workloads.describe(raw)
    assert shape["items"] >= 200 and shape["tools"] == 40
    assert raw == workloads.long_request.__wrapped__()  # deterministic
    kinds = {item["type"] for item in json.loads(raw)["input"]}
    assert {"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
            "custom_tool_call_output", "tool_search_call", "tool_search_output"} <= kinds


def test_interleaved_counts_each_contender() -> None:
    timings = interleaved({"a": lambda: None, "b": lambda: None}, {"a": 5, "b": 2}, warmup=0)
    assert (timings["a"].samples, timings["b"].samples) == (5, 2)


@pytest.mark.parametrize("dialect", sorted(fixtures.FIXTURE_DIRS))
def test_recorded_streams_split_into_events(dialect: str) -> None:
    found, _ = fixtures.recorded(dialect)
    for stream in found:
        assert stream.events > 0 and b"".join(stream.chunks) and len(stream.chunks) >= stream.events - 1
        for payload in stream.payloads:
            json.loads(payload)


def test_request_benchmark(targets: list[str]) -> None:
    rows, notes = requests.run(targets, {"small": 1, "long": 1}, None, {"small": 1, "long": 1})
    assert not notes
    assert {(r.workload, r.target) for r in rows} == {(w, t) for w in ("small", "long") for t in targets}
    assert all(r.ours_us > 0 and r.floor_us > 0 and r.orjson_floor_us > 0 and r.out_bytes > 0 for r in rows)


def test_stream_benchmark(targets: list[str]) -> None:
    rows, files, _ = streams.run(targets, 1, None, 1, long_deltas=20)
    assert {r.dialect for r in rows} == set(targets) and len(files) >= len(rows)
    assert all(r.events > 0 and r.ours_ns > 0 and r.orjson_floor_ns > 0 for r in rows)
    synthetic = next(r for r in rows if r.stream == "synthetic long answer")
    assert synthetic.events == 25 and synthetic.terminal == "response.completed"


@pytest.mark.filterwarnings("ignore::UserWarning")  # litellm's TypedDicts under pydantic
def test_peer_benchmark() -> None:
    pytest.importorskip("litellm")
    from bench import peer_litellm

    peer = peer_litellm.load()
    assert not isinstance(peer, str), peer
    small = workloads.small_request()
    requests.check_peer(peer, small, requests.ours(small, "anthropic"))
    answer = fixtures.long_answer(10)
    translation = translate_request(json.loads(small), "anthropic", None)
    ours = streams.translate("anthropic", translation, answer.chunks)
    streams.check_peer(peer, peer.prepare(small), answer, ours)


@pytest.mark.timeout(120)
def test_proxy_benchmark() -> None:
    result = proxy.run(deltas=30, interval_ms=1.0, turns=1, warmup=0)
    assert result.plain.events_seen == result.hook.events_seen == result.addon.events_seen == 30
    assert result.addon.cpu_ms_per_turn >= 0 and result.plain.latency_us_median > 0


@pytest.mark.timeout(120)
def test_proxy_benchmark_times_the_stream_callable_inside_mitmdump() -> None:
    result = proxy.run(deltas=30, interval_ms=1.0, turns=1, warmup=0, callable_turns=1)
    assert result.callable_us_median is not None and result.callable_us_median > 0


@pytest.mark.timeout(180)
def test_proxy_benchmark_pools_sessions_of_fresh_mitmdumps() -> None:
    result = proxy.run(deltas=30, interval_ms=1.0, turns=1, warmup=0, sessions=2)
    assert result.addon.events_seen == 2 * 30
    assert len(result.session_cpu_ratios) == 2 and all(ratio > 0 for ratio in result.session_cpu_ratios)


@pytest.mark.timeout(180)
def test_stall_benchmark_measures_the_steady_stream_before_and_during_the_heavy_request() -> None:
    from bench import stall

    rows = stall.run(items=2_000, event_mb=1)
    assert [(row.case, round(row.heavy_mb)) for row in rows] == [("2k-item request", 0), ("1 MB event", 1)]
    assert all(row.quiet_ms > 0 and row.stall_ms > 0 and row.work_ms > 0 for row in rows)


def test_profile() -> None:
    pytest.importorskip("pyinstrument")
    from bench import profile

    small = workloads.small_request()
    prof = profile.profile("request small", lambda: requests.ours(small, "anthropic"), seconds=0.05)
    assert prof.calls >= 1 and prof.hotspots


def test_main_writes_the_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    skipped = ("streams", "proxy", "stall", "hooks", "peer", "profile")
    skips = [arg for step in skipped for arg in ("--skip", step)]
    status = cli.main(["--quick", *skips, "--out", str(out)])
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert "Request translation" in printed and "Targets" in printed
    data = json.loads(out.read_text())
    assert data["requests"] and data["targets"] and not data["errors"]


def test_growth_benchmark_times_both_sizes_of_each_case() -> None:
    from bench import growth

    rows = growth.run(samples=1)
    assert [(r.case, r.large_bytes // r.small_bytes) for r in rows] == [("tool input", 8), ("one event", 8)]
    assert all(r.small_ms > 0 and r.large_ms > 0 for r in rows)  # timed; how they compare is the benchmark's


def test_growth_workloads_translate_to_one_whole_answer() -> None:
    from bench import growth

    translation = translate_request(json.loads(workloads.small_request()), "anthropic", None)
    out = streams.translate("anthropic", translation, growth.tool_input(1000))
    assert streams.terminal(out) == "response.completed" and out.count(b'"p') > 0
    out = streams.translate("anthropic", translation, growth.one_event(70_000))
    assert streams.terminal(out) == "response.completed" and b"g" * 70_000 in out


def test_lite_sessions_grow_from_the_real_lite_request() -> None:
    lite = json.loads(workloads.lite_session(188))
    capture = json.loads(workloads.capture(workloads.LITE_CAPTURE))
    assert len(lite["input"]) == 188 and lite["input"][:5] == capture["input"]
    assert lite | {"input": []} == capture | {"input": []}
    before = json.loads(workloads.lite_before(188))["input"]
    assert lite["input"][:len(before)] == before and len(before) < 188
    turn = json.loads(workloads.with_a_call(workloads.lite_session(200)))["input"]
    assert len(turn) == 202 and [i["type"] for i in turn[-2:]] == ["function_call", "function_call_output"]
    assert len(json.loads(workloads.steered(workloads.lite_session(9)))["input"]) == 10


def test_session_benchmark_times_every_case_fresh_and_warm(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    from bench import sessions

    rows, turn = sessions.run(samples=1, warmup=0)
    assert [(r.case, r.cache) for r in rows] == [
        ("lite 188", "fresh"), ("lite 188", "warm"), ("classic 216", "fresh"), ("classic 216", "warm"),
        ("fresh request", "fresh"), ("+2 items to 200", "warm"), ("10-item request", "fresh")]
    assert all(r.ours_us > 0 and r.floor_us > 0 for r in rows) and turn.ratio > 0
    assert sessions.main(["--samples", "1", "--json", str(tmp_path / "s.json")]) == 0
    assert "+2 items to 200 (warm) / 10-item request" in capsys.readouterr().out
    assert json.loads((tmp_path / "s.json").read_text())[0]["turn"]["ratio"] > 0
