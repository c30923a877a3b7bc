"""Large requests read and translated in a worker process (addon/work/workers.py): the same upstream
body and metadata as a translation in the proxy, the same history and stored items as the proxy's
own expansion, refusals crossing as themselves, another process."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile

import pytest

from addon.serve import bodies
from addon.serve.translate import Asked
from addon.state import stored_items
from addon.work import offload, workers
from translators import TranslatorError, translate_request
from translators.wire import wirejson

BODY = {"model": "gpt-5.5", "stream": True, "instructions": "be brief",
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {}}}],
        "input": [{"type": "message", "role": "user" if i % 2 == 0 else "assistant",
                   "content": [{"type": "input_text" if i % 2 == 0 else "output_text", "text": f"é {i}"}]}
                  for i in range(2000)]}


@pytest.fixture(scope="module", autouse=True)
def _pool_shut_down_after() -> object:
    yield
    workers.shutdown()


def _asked(model: str | None = "claude-haiku-4-5", *, endpoint: bool = False, client: str = "responses",
           counting: bool = False) -> Asked:
    return Asked("anthropic", model, client, "compaction_endpoint" if endpoint else "turn", counting, None,
                 "follow")


def _translate(data: bytes, asked: Asked,
               past: list[dict[str, object]] | None = None) -> workers.Translated[bytes]:
    """`data` translated in a worker, as the gateway hands a large body over (a private file)."""
    spilled = workers.spill(data)
    try:
        return asyncio.run(workers.run_translate(spilled, asked, past))
    finally:
        workers.discard(spilled)


def test_a_worker_writes_the_upstream_body_and_metadata_the_proxy_would() -> None:
    data = json.dumps(BODY, ensure_ascii=False).encode()
    done = _translate(data, _asked())
    here = translate_request(BODY, "anthropic", "claude-haiku-4-5")
    assert done.content == wirejson.dumps(here.body)
    assert done.saved == here.model_dump(mode="json", exclude={"body"})
    assert done.translation.tools == here.tools and done.translation.echo == here.echo
    assert set(done.translation.body) == {"sha1"}  # the body itself stays with the flow


def test_a_refused_request_comes_back_as_the_translators_error() -> None:
    data = json.dumps({"model": "gpt-5.5", "input": [{"type": "reasoning", "summary": 5}]}).encode()
    with pytest.raises(TranslatorError) as refused:
        _translate(data, _asked(None))
    assert refused.value.status == 400 and refused.value.message


def test_a_translation_after_a_worker_died_is_done_by_a_new_pool() -> None:
    """The pool itself: addon/work/offload.py (tests/addon/work/test_offload.py)."""
    broken = offload.pool()
    os.kill(broken.submit(os.getpid).result(timeout=60), signal.SIGKILL)
    data = json.dumps({"model": "gpt-5.5", "input": "hi"}).encode()
    done = _translate(data, _asked())
    assert json.loads(done.content)["messages"][0]["content"][0]["text"] == "hi"
    assert offload.pool() is not broken


PAST = [{"type": "message", "role": "user", "content": "before", "id": "msg_1", "status": "completed"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}],
         "id": "msg_2", "status": "completed"}]


def test_a_turn_that_reads_state_is_expanded_in_the_worker_as_in_the_proxy() -> None:
    data = json.dumps(BODY, ensure_ascii=False).encode()
    done = _translate(data, _asked(), PAST)
    expanded, new_items = stored_items.expand(BODY, PAST)
    here = translate_request(expanded, "anthropic", "claude-haiku-4-5")
    assert done.content == wirejson.dumps(here.body)
    stored = json.loads(done.new_items)
    assert done.count == len(stored) == len(new_items) == len(BODY["input"])
    assert [{k: v for k, v in i.items() if k != "id"} for i in stored] == \
        [{k: v for k, v in i.items() if k != "id"} for i in new_items]
    assert all(i["id"].startswith("msg_") for i in stored) and not done.translation.compaction


def test_a_compaction_keeps_the_user_messages_of_the_history_and_the_new_input() -> None:
    data = json.dumps({"model": "gpt-5.5", "input": "summarize me"}).encode()
    done = _translate(data, _asked(endpoint=True), PAST)
    assert done.translation.compaction and not done.translation.stream
    kept = done.translation.compaction_kept or []
    assert [m["content"][0]["text"] for m in kept] == ["before", "summarize me"]


def test_the_head_of_a_large_body_is_its_short_members_and_never_its_input() -> None:
    body = {**BODY, "previous_response_id": "resp_1", "instructions": "x" * 10_000}
    data = json.dumps(body).encode()
    head = asyncio.run(workers.read_head(data, None, 1 << 30, 1 << 30))
    assert head.fields == {"model": "gpt-5.5", "stream": True, "previous_response_id": "resp_1",
                           "tools": BODY["tools"]}
    assert not head.trigger
    assert json.loads(head.client_text) == body and workers.read(head.body) == data
    workers.discard(head.body)


def test_the_head_says_when_the_body_asks_for_a_compaction_and_gives_back_what_it_decoded() -> None:
    import gzip

    body = {"model": "gpt-5.5", "input": [{"type": "message", "role": "user", "content": "hi"},
                                          {"type": "compaction_trigger"}]}
    data = json.dumps(body).encode()
    head = asyncio.run(workers.read_head(gzip.compress(data), "gzip", 1 << 20, 1 << 20))
    assert head.trigger and workers.read(head.body) == data
    workers.discard(head.body)


def test_a_body_past_the_bound_or_not_json_raises_what_the_proxy_answers() -> None:
    with pytest.raises(bodies.TooLarge):
        asyncio.run(workers.read_head(b"[" + b"1," * 1000 + b"1]", None, 100, 100))
    with pytest.raises(ValueError):
        asyncio.run(workers.read_head(b"{not json", None, 100, 100))


def test_bodies_cross_in_private_files_that_are_gone_once_read_back() -> None:
    """Every file a hand-off wrote is removed, whatever the outcome, and the folder goes with
    the pool; each is readable by the proxy's user only."""
    data = json.dumps(BODY).encode()
    head = asyncio.run(workers.read_head(data, None, 1 << 30, 1 << 30))
    folder = os.path.dirname(head.body.path)
    assert os.stat(folder).st_mode & 0o777 == 0o700 and os.stat(head.body.path).st_mode & 0o777 == 0o600
    asyncio.run(workers.run_translate(head.body, _asked()))
    workers.discard(head.body)
    with pytest.raises(ValueError):
        asyncio.run(workers.read_head(b"{not json" + b" " * 1000, None, 1 << 20, 1 << 20))
    assert os.listdir(folder) == [".owner"]  # the file its proxy holds locked while it runs
    used = offload.pool()
    workers.shutdown()
    assert not os.path.exists(folder) and offload.pool() is not used  # the pool ended with it


def test_the_files_go_to_the_temporary_folder_when_dev_shm_is_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """A container's `/dev/shm` is often 64 MB: three files of one large request would not fit."""
    real = os.statvfs

    def small_shm(path: str) -> os.statvfs_result:
        got = real(path)
        if path != "/dev/shm":
            return got
        return os.statvfs_result((*got[:4], 0, *got[5:]))  # no block free for the unprivileged

    workers.shutdown()
    monkeypatch.setattr(os, "statvfs", small_shm)
    spilled = workers.spill(b"{}")
    try:
        assert not spilled.path.startswith("/dev/shm/")
        assert os.path.dirname(os.path.dirname(spilled.path)) == tempfile.gettempdir()
    finally:
        workers.discard(spilled)
        workers.shutdown()


def _spilling_process(root: pathlib.Path) -> tuple[subprocess.Popen[str], pathlib.Path]:
    """Another process that hands a body over in `root`, as a proxy does, and stays."""
    code = ("import sys, time\nfrom addon.work import workers\nworkers._spill_root = lambda: sys.argv[1]\n"
            "print(workers.spill(b'{}').path, flush=True)\ntime.sleep(60)\n")
    process = subprocess.Popen([sys.executable, "-c", code, str(root)], stdout=subprocess.PIPE, text=True,
                               cwd=pathlib.Path(__file__).parents[3])
    assert process.stdout is not None
    return process, pathlib.Path(process.stdout.readline().strip()).parent


def test_the_folder_of_a_killed_proxy_is_removed_by_the_next_and_a_running_ones_kept(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    """A proxy killed with SIGKILL never runs `shutdown`: the next one to hand a body over removes
    its folder (conversations, held in memory on `/dev/shm`); a running proxy's stays."""
    killed, left = _spilling_process(tmp_path)
    running, kept = _spilling_process(tmp_path)
    try:
        killed.kill()
        killed.wait()
        assert left.is_dir()
        workers.shutdown()
        monkeypatch.setattr(workers, "_spill_root", lambda: str(tmp_path))
        workers.spill(b"{}")
        assert not left.exists()
        assert kept.is_dir() and len(list(kept.iterdir())) == 2  # its owner file and its body
    finally:
        running.kill()
        running.wait()
        workers.shutdown()
