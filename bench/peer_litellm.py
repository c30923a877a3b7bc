"""The peer: litellm's own Responses -> Anthropic bridge (litellm 1.110.2), called in-process.

Request, as `litellm.responses(...)` -> `LiteLLMCompletionTransformationHandler.response_api_handler`
-> `litellm.completion(...)` -> `AnthropicChatCompletion.completion` run it:
`with_additional_tools_hoisted` (litellm/responses/additional_tools.py),
`bridge_client_tool_search` (what `response_api_handler` does with tool_search calls and outputs, so
the tools those loaded reach the model as ours do),
`ResponsesAPIRequestUtils.get_requested_response_api_optional_param`,
`LiteLLMCompletionResponsesConfig.transform_responses_api_request_to_chat_completion_request`,
`map_developer_role_to_system_role`, `get_optional_params`, `AnthropicConfig().transform_request`,
then `json.dumps` of the body, as the HTTP handler does.

Stream: the recorded Anthropic SSE text through `iter_sse_lines` -> anthropic `ModelResponseIterator`
-> `CustomStreamWrapper` -> `LiteLLMCompletionStreamingIterator`, each Responses event written as
SSE (`event:` + `data: model_dump_json(exclude_none=True)`).

Timed generously: no HTTP client, no deep copies the handler makes, per-chunk logging threads off
(`litellm.disable_streaming_logging`), no cost map download.
"""

from __future__ import annotations

import datetime
import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

MODEL = "claude-sonnet-4-6"


@dataclass(frozen=True, slots=True)
class Prepared:
    """A Codex request as litellm's stream side needs it (the bridge computes this once per request)."""

    input: Any
    params: Any


class LitellmPeer:
    name = "litellm"

    def __init__(self) -> None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import
        import litellm
        from litellm.litellm_core_utils.litellm_logging import Logging
        from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper
        from litellm.llms.anthropic.chat.handler import ModelResponseIterator
        from litellm.llms.anthropic.chat.transformation import AnthropicConfig
        from litellm.llms.base_llm.base_utils import map_developer_role_to_system_role
        from litellm.llms.custom_httpx.sse_lines import iter_sse_lines
        from litellm.responses.additional_tools import with_additional_tools_hoisted
        from litellm.responses.litellm_completion_transformation.client_tool_search import (
            bridge_client_tool_search,
        )
        from litellm.responses.litellm_completion_transformation.streaming_iterator import (
            LiteLLMCompletionStreamingIterator,
        )
        from litellm.responses.litellm_completion_transformation.transformation import (
            LiteLLMCompletionResponsesConfig,
        )
        from litellm.responses.utils import ResponsesAPIRequestUtils
        from litellm.utils import get_optional_params

        litellm.disable_streaming_logging = True
        litellm.suppress_debug_info = True
        self.version = metadata.version("litellm")
        self._hoist = with_additional_tools_hoisted
        self._bridge_tool_search = bridge_client_tool_search
        self._params = ResponsesAPIRequestUtils.get_requested_response_api_optional_param
        bridge = LiteLLMCompletionResponsesConfig
        self._to_chat = bridge.transform_responses_api_request_to_chat_completion_request
        self._developer_to_system = map_developer_role_to_system_role
        self._optional_params = get_optional_params
        self._anthropic = AnthropicConfig
        self._logging = Logging
        self._sse_lines = iter_sse_lines
        self._iterator = ModelResponseIterator
        self._wrapper = CustomStreamWrapper
        self._responses = LiteLLMCompletionStreamingIterator

    # -- request ----------------------------------------------------------------------------------
    def prepare(self, raw: bytes) -> Prepared:
        body: dict[str, Any] = dict(self._hoist(json.loads(raw), drop_params=True))
        searched = self._bridge_tool_search(body["input"], body.get("tools"), ())
        if searched.bridged:
            body = {**body, "input": searched.input, "tools": list(searched.tools)}
        params = self._params({k: v for k, v in body.items() if k not in ("model", "input")})
        return Prepared(input=body["input"], params=params)

    def request(self, raw: bytes) -> bytes:
        """Codex request bytes -> Anthropic Messages request bytes."""
        prepared = self.prepare(raw)
        chat = self._to_chat(model=MODEL, input=prepared.input, responses_api_request=prepared.params,
                             custom_llm_provider="anthropic", stream=True, drop_params=True)
        messages = self._developer_to_system(chat["messages"])
        optional = self._optional_params(
            model=MODEL, custom_llm_provider="anthropic", messages=messages, tools=chat.get("tools"),
            tool_choice=chat.get("tool_choice"), parallel_tool_calls=chat.get("parallel_tool_calls"),
            stream=True, stream_options=chat.get("stream_options"),
            reasoning_effort=chat.get("reasoning_effort"),
            web_search_options=chat.get("web_search_options"), max_tokens=chat.get("max_tokens"),
            temperature=chat.get("temperature"), top_p=chat.get("top_p"), drop_params=True)
        body = self._anthropic().transform_request(model=MODEL, messages=messages,
                                                   optional_params=dict(optional),
                                                   litellm_params={"drop_params": True}, headers={})
        return json.dumps(body).encode()

    # -- stream -----------------------------------------------------------------------------------
    def stream(self, prepared: Prepared, chunks: Sequence[bytes]) -> bytes:
        """Anthropic SSE chunks -> Responses SSE bytes."""
        logging = self._logging(model=MODEL, messages=[], stream=True, call_type="responses",
                                start_time=datetime.datetime.now(), litellm_call_id=str(uuid.uuid4()),
                                function_id="bench")
        logging.update_environment_variables(litellm_params={}, optional_params={}, model=MODEL,
                                             custom_llm_provider="anthropic")
        lines = self._sse_lines(chunk.decode() for chunk in chunks)
        iterator = self._iterator(streaming_response=lines, sync_stream=True, json_mode=False)
        wrapper = self._wrapper(completion_stream=iterator, model=MODEL, custom_llm_provider="anthropic",
                                logging_obj=logging)
        events = self._responses(model=MODEL, litellm_custom_stream_wrapper=wrapper,
                                 request_input=prepared.input, responses_api_request=prepared.params,
                                 custom_llm_provider="anthropic")
        out = []
        for event in events:
            kind = getattr(event.type, "value", event.type)
            out.append(f"event: {kind}\ndata: {event.model_dump_json(exclude_none=True)}\n\n".encode())
        return b"".join(out)


def load() -> LitellmPeer | str:
    """The peer, or why it cannot run (then the peer columns are skipped)."""
    try:
        return LitellmPeer()
    except ImportError as exc:
        return f"litellm is not installed ({exc.name}); install the bench extra: pip install -e '.[bench]'"
    except Exception as exc:  # a different litellm whose internals moved
        return f"litellm could not be loaded: {exc!r}"
