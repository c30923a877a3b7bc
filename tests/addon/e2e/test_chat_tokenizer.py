"""A Chat route whose server has a tokenizer counts a Messages client's `count_tokens` there, at
the server's root (`POST /tokenize`, llama.cpp's and vLLM's shapes), through real mitmdump
(docs/chat.md "Token counts"); without one the count is still an estimate."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import anthropic
import pytest

from tests.e2e.targets import write_routes
from tests.support.fake_upstream import FakeUpstream, Reply, chat_message, empty_reply, json_reply
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(120)

LLAMA_TOKENS = list(range(57))
VLLM_COUNT = 311


def tokenizer(kind: str) -> Any:
    """llama.cpp's server (README "POST /tokenize": `{"tokens": [...]}`) or vLLM's
    (`TokenizeResponse`: `{"count", "max_model_len", "tokens"}`); chat turns at /v1."""
    def answer(body: Any, _headers: Mapping[str, str], path: str) -> Reply:
        if path == "/tokenize" and isinstance(body, dict):
            if kind == "llamacpp" and isinstance(body.get("content"), str):
                return json_reply(200, {"tokens": LLAMA_TOKENS})
            if kind == "vllm" and isinstance(body.get("messages"), list) and body.get("model"):
                return json_reply(200, {"count": VLLM_COUNT, "max_model_len": 8192,
                                        "tokens": [1] * VLLM_COUNT})
            error = {"message": "bad tokenize body", "type": "invalid_request_error"}
            return json_reply(400, {"error": error})
        if path == "/v1/chat/completions":
            return chat_message("hi")
        return empty_reply(404)
    return answer


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("tokenizer")
    fakes = {kind: FakeUpstream(tokenizer(kind)) for kind in ("llamacpp", "vllm", "none")}
    anthropic_itself = FakeUpstream(lambda body, headers, path: empty_reply(500))
    with anthropic_itself:
        for fake in fakes.values():
            fake.__enter__()
        try:
            write_routes(tmp / "routes.toml", [
                {"model": f"local-{kind}", "upstream": "chat", "base_url": f"{fake.url}/v1",
                 "target_model": "local.gguf", "tokenizer": kind} for kind, fake in fakes.items()])
            with MitmDump(tmp / "mitm", mode=f"reverse:{anthropic_itself.url}",
                          options={"gateway_config": str(tmp / "routes.toml"),
                                   "gateway_capabilities": "table"}) as mitm:
                yield {"mitm": mitm, "fakes": fakes}
        finally:
            for fake in fakes.values():
                fake.__exit__(None, None, None)


def count(world: dict[str, Any], kind: str) -> int:
    client = anthropic.Anthropic(base_url=world["mitm"].url, api_key="sk-ant-client", max_retries=0)
    return client.messages.count_tokens(model=f"local-{kind}", system="Be brief.",
                                        messages=[{"role": "user", "content": "count me " * 50}]).input_tokens


def test_llama_cpps_tokenizer_counts_the_requests_text(world: dict[str, Any]) -> None:
    assert count(world, "llamacpp") == len(LLAMA_TOKENS)
    sent = world["fakes"]["llamacpp"].requests[-1]
    assert (sent.method, sent.path) == ("POST", "/tokenize")  # the server's root, not /v1
    body = sent.json
    assert body["add_special"] is True and "Be brief." in body["content"] and "count me" in body["content"]


def test_vllms_tokenizer_counts_the_chat_prompt(world: dict[str, Any]) -> None:
    assert count(world, "vllm") == VLLM_COUNT
    sent = world["fakes"]["vllm"].requests[-1]
    assert sent.path == "/tokenize"
    assert sent.json["model"] == "local.gguf" and sent.json["add_generation_prompt"] is True
    assert sent.json["messages"][0] == {"role": "system", "content": "Be brief."}


def test_a_server_without_one_is_not_asked(world: dict[str, Any]) -> None:
    before = len(world["fakes"]["none"].requests)
    assert count(world, "none") >= 100  # the estimate: 4 characters a token
    assert len(world["fakes"]["none"].requests) == before
