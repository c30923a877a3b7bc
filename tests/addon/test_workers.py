"""Large requests translated in a worker process (addon/workers.py): the same upstream body and
metadata as a translation in the proxy, refusals crossing as themselves, another process."""

from __future__ import annotations

import asyncio
import json
import os
import signal

import pytest

from addon import workers
from translators import TranslatorError, translate_request, wirejson

BODY = {"model": "gpt-5.5", "stream": True, "instructions": "be brief",
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {}}}],
        "input": [{"type": "message", "role": "user" if i % 2 == 0 else "assistant",
                   "content": [{"type": "input_text" if i % 2 == 0 else "output_text", "text": f"é {i}"}]}
                  for i in range(2000)]}


@pytest.fixture(scope="module", autouse=True)
def _pool_shut_down_after() -> object:
    yield
    workers.shutdown()


def test_a_worker_writes_the_upstream_body_and_metadata_the_proxy_would() -> None:
    data = json.dumps(BODY, ensure_ascii=False).encode()
    done = asyncio.run(workers.run_translate(data, "anthropic", "claude-haiku-4-5", None, "follow"))
    here = translate_request(BODY, "anthropic", "claude-haiku-4-5")
    assert done.content == wirejson.dumps(here.body)
    assert done.saved == here.model_dump(mode="json", exclude={"body"})
    assert done.translation.tools == here.tools and done.translation.echo == here.echo
    assert set(done.translation.body) == {"sha1"}  # the body itself stays with the flow


def test_a_refused_request_comes_back_as_the_translators_error() -> None:
    data = json.dumps({"model": "gpt-5.5", "input": [{"type": "reasoning", "summary": 5}]}).encode()
    with pytest.raises(TranslatorError) as refused:
        asyncio.run(workers.run_translate(data, "anthropic", None, None, "follow"))
    assert refused.value.status == 400 and refused.value.message


def test_the_work_runs_in_another_process() -> None:
    assert workers.pool().submit(os.getpid).result(timeout=60) != os.getpid()


def test_a_pool_whose_worker_died_is_replaced() -> None:
    broken = workers.pool()
    os.kill(broken.submit(os.getpid).result(timeout=60), signal.SIGKILL)
    data = json.dumps({"model": "gpt-5.5", "input": "hi"}).encode()
    done = asyncio.run(workers.run_translate(data, "anthropic", "claude-haiku-4-5", None, "follow"))
    assert json.loads(done.content)["messages"][0]["content"][0]["text"] == "hi"
    assert workers.pool() is not broken
