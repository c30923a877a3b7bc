"""What a route states about its server (`--set gateway_chat_*`, `[[route]]` keys; addon/routes/routing.py
`server_of`, addon/routes/capabilities.py `resolve`) reaches the request the gateway sends upstream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import exceptions
from mitmproxy.test import taddons

from tests.addon.conftest import Chain, client_flow, run_request

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
STRUCTURED = {"model": "gpt-5.5", "input": "where?", "stream": True,
              "text": {"format": {"type": "json_schema", "name": "place", "schema": SCHEMA, "strict": True}}}


def _sent(gateway: tuple[Chain, taddons.context], body: dict[str, Any] = STRUCTURED) -> dict[str, Any]:
    addon, _ = gateway
    flow = client_flow(body)
    run_request(addon, flow)
    assert flow.response is None, flow.response and flow.response.text
    return json.loads(flow.request.content)


def _chat(gateway: tuple[Chain, taddons.context], listener: str, **options: Any) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_upstream="chat", gateway_base_url=listener, gateway_model="qwen3",
                   gateway_key_env="", **options)


def test_without_a_setting_a_chat_route_writes_openais_json_schema(gateway, listener: str) -> None:
    _chat(gateway, listener)
    assert _sent(gateway)["response_format"]["type"] == "json_schema"


def test_the_option_sets_how_every_chat_route_writes_text_format(gateway, listener: str) -> None:
    _chat(gateway, listener, gateway_chat_structured_output="json_object")
    assert _sent(gateway)["response_format"] == {"type": "json_object", "schema": SCHEMA}


def test_a_route_table_sets_it_for_its_own_route(gateway, listener: str, tmp_path: Path) -> None:
    config = tmp_path / "routes.toml"
    config.write_text(f'[[route]]\nmodel = "gpt-5.5"\nupstream = "chat"\nbase_url = "{listener}"\n'
                      'target_model = "local"\nstructured_output = "prompt"\nmessage_parts = "list"\n'
                      f'[[route]]\nupstream = "chat"\nbase_url = "{listener}"\ntarget_model = "local"\n')
    addon, tctx = gateway
    tctx.configure(addon, gateway_config=str(config), gateway_key_env="")
    assert _sent(gateway)["response_format"] == {"type": "json_object"}
    assert _sent(gateway, {**STRUCTURED, "model": "gpt-5.4"})["response_format"]["type"] == "json_schema"


def test_a_value_the_option_does_not_know_is_an_options_error(gateway, listener: str) -> None:
    with pytest.raises(exceptions.OptionsError, match="gateway_chat_structured_output 'xml': write one of"):
        _chat(gateway, listener, gateway_chat_structured_output="xml")
