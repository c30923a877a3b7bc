"""A Chat server's own tokenizer as the route's count (translators/chat/count.py, docs/chat.md
"Token counts"): llama.cpp's and vLLM's `POST /tokenize`, request and answer."""

from __future__ import annotations

import pytest

from translators import dialect as dialects
from translators.chat import DIALECT
from translators.chat.count import encode, endpoint, parse, root

BODY = {"model": "local.gguf", "stream": True,
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"},
                     {"role": "assistant", "content": "",
                      "tool_calls": [{"id": "c1", "type": "function",
                                      "function": {"name": "ls", "arguments": "{\"path\": \".\"}"}}]},
                     {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "a.txt"}]}],
        "tools": [{"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}]}


def test_vllm_applies_the_chat_template_to_the_messages_and_tools():
    assert encode(BODY, "local.gguf", "vllm") == {"model": "local.gguf", "messages": BODY["messages"],
                                                  "add_generation_prompt": True, "tools": BODY["tools"]}
    assert parse("vllm", {"count": 42, "max_model_len": 8192, "tokens": [1] * 42}) == 42


def test_llama_cpp_tokenizes_the_requests_text():
    sent = encode(BODY, "local.gguf", "llamacpp")
    assert sent["add_special"] is True
    assert sent["content"].split("\n")[:5] == ["Be brief.", "hi", "", 'ls {"path": "."}', "a.txt"]
    assert '"name":"ls"' in sent["content"]  # the tools' JSON
    assert parse("llamacpp", {"tokens": [1, 2, 3]}) == 3
    assert parse("llamacpp", {"tokens": [{"id": 1, "piece": "a"}]}) == 1


@pytest.mark.parametrize("server, answer", [("vllm", {"tokens": [1]}), ("vllm", {"count": True}),
                                            ("llamacpp", {"count": 3}), ("llamacpp", [1, 2])])
def test_another_answer_is_no_count(server, answer):
    with pytest.raises(ValueError, match="/tokenize answer"):
        parse(server, answer)


@pytest.mark.parametrize("base, expected", [("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
                                            ("http://h:8000/v1/", "http://h:8000"),
                                            ("https://gpu.example/llama", "https://gpu.example/llama")])
def test_tokenize_is_at_the_servers_root(base, expected):
    assert root(base) == expected


def test_a_route_counts_there_only_when_it_says_its_server_has_a_tokenizer():
    assert endpoint({"tokenizer": "none"}) is None and endpoint({}) is None
    assert dialects.counter(DIALECT, {"tokenizer": "none"}) is None  # estimated
    counter = dialects.counter(DIALECT, {"tokenizer": "llamacpp"})
    assert counter is not None
    path, body = counter.encode(BODY, "local.gguf")
    assert path == "/tokenize" and "content" in body
    assert dialects.count_url(counter, "http://127.0.0.1:8080/v1", path) == "http://127.0.0.1:8080/tokenize"


def test_tokenizer_is_a_chat_option_and_a_route_key():
    option = next(o for o in DIALECT.options if o.name == "gateway_chat_tokenizer")
    assert (option.default, option.route_key) == ("none", "tokenizer")
    assert option.check is not None and option.check("vllm") is None
    assert option.check("tiktoken") == "gateway_chat_tokenizer 'tiktoken': write one of none, llamacpp, vllm"
