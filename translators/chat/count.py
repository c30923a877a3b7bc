"""A Chat route's token count by its server's own tokenizer, where the route says it has one
(docs/chat.md "Token counts"): llama.cpp's server and vLLM both answer `POST /tokenize` at the
server's root (not under `/v1`), in different shapes.

- llama.cpp (`llama-server`, its README "POST /tokenize"): `{"content": str, "add_special": bool,
  "with_pieces": bool}` -> `{"tokens": [id, ...]}`. It tokenizes text, without the chat template:
  the request's texts are counted, the template's few tokens a message are not.
- vLLM (`TokenizeChatRequest`, `TokenizeResponse` in its OpenAI server's protocol): `{"model",
  "messages", "add_generation_prompt", "tools"?}` -> `{"count", "max_model_len", "tokens"}`. It
  applies the model's chat template, so the count is the prompt's.

Another server (the route states `none`) gets no count request: the addon estimates
(translators/features/estimate.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from translators.chat.settings import TOKENIZER
from translators.dialect import CountEndpoint
from translators.wire import wirejson

PATH = "/tokenize"
Server = Literal["llamacpp", "vllm"]


def server_of(server: Mapping[str, str]) -> Server | None:
    """The tokenizer the route states its server has (`tokenizer`), or None."""
    value = server.get(TOKENIZER)
    return value if value in ("llamacpp", "vllm") else None  # type: ignore[return-value]


def endpoint(server: Mapping[str, str]) -> CountEndpoint | None:
    """The route's count endpoint (`Codec.count_for`): its server's `/tokenize`, else None."""
    kind = server_of(server)
    if kind is None:
        return None
    return CountEndpoint(encode=lambda body, model: (PATH, encode(body, model, kind)),
                         parse=lambda answer: parse(kind, answer), base=root)


def root(base_url: str) -> str:
    """The server's root: the Chat base URL without its `/v1` (where `/tokenize` is)."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def encode(body: dict[str, Any], model: str, server: Server) -> dict[str, Any]:
    """The count request for a Chat body the encoder wrote."""
    if server == "vllm":
        out: dict[str, Any] = {"model": model, "messages": body.get("messages", []),
                               "add_generation_prompt": True}
        if body.get("tools"):
            out["tools"] = body["tools"]
        return out
    return {"content": _text(body), "add_special": True}


def parse(server: Server, answer: Any) -> int:
    """Input tokens from the server's answer; ValueError for another body."""
    if isinstance(answer, dict):
        count = answer.get("count")
        if server == "vllm" and isinstance(count, int) and not isinstance(count, bool):
            return count
        if server == "llamacpp" and isinstance(answer.get("tokens"), list):
            return len(answer["tokens"])
    raise ValueError(f"not a {server} /tokenize answer")


def _text(body: dict[str, Any]) -> str:
    """What llama.cpp tokenizes: each message's text, then the tools' JSON, a line each."""
    lines: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            lines.append(content)
        elif isinstance(content, list):
            lines += [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            lines.append(f"{function.get('name', '')} {function.get('arguments', '')}")
    if body.get("tools"):
        lines.append(wirejson.dumps(body["tools"]).decode("utf-8"))
    return "\n".join(lines)
