"""Paths as the upstream's server reads them (addon/serve/paths.py; issue 35, case 4)."""

from __future__ import annotations

import pytest
from mitmproxy import http
from mitmproxy.test import tflow

from addon.serve import paths
from addon.serve.claim import gateway_literals

MATCH = ("api.openai.com/v1/responses", "/v1/responses")
LITERALS = gateway_literals(MATCH)


@pytest.mark.parametrize(("sent", "normal"), [
    ("//v1/responses", "/v1/responses"),
    ("/v1/Responses", "/v1/responses"),
    ("/V1/responses", "/v1/responses"),
    ("/v1/%72esponses", "/v1/responses"),
    ("/v1/%2e%2e/v1/responses", "/v1/responses"),
    ("/./v1/responses", "/v1/responses"),
    ("/x/../v1/responses", "/v1/responses"),
    ("/../../v1/responses", "/v1/responses"),
    ("/v1/responses/", "/v1/responses"),
    ("/v1/responses/.", "/v1/responses"),
    ("//v1/messages", "/v1/messages"),
    ("//gateway/usage", "/gateway/usage"),
    ("/GATEWAY/usage", "/gateway/usage"),
    ("/v1/responses?stream=true", "/v1/responses?stream=true"),
    ("/V1/Responses/resp_AbC/input_items", "/v1/responses/resp_AbC/input_items"),
    ("/v1/conversations/conv_XyZ/Items", "/v1/conversations/conv_XyZ/items"),
])
def test_a_variant_reads_as_the_server_reads_it(sent: str, normal: str) -> None:
    assert paths.fold(paths.canonical(sent), LITERALS) == normal


@pytest.mark.parametrize("kept", ["/v1/responses", "*", "/v1/files/file-AbC", "/v1/responses%2Fx",
                                  "/v1/models/Claude-Opus"])
def test_what_a_server_does_not_change_is_kept(kept: str) -> None:
    """An id keeps its case; an escaped reserved character (`%2F`) is not a separator; a target
    that is not a path is left alone."""
    assert paths.fold(paths.canonical(kept), LITERALS) == kept


def test_a_host_is_read_as_dns_reads_it() -> None:
    assert paths.host("API.OpenAI.com.") == "api.openai.com"


def _flow(path: str) -> http.HTTPFlow:
    flow = tflow.tflow(req=http.Request.make("POST", "https://api.openai.com/"))
    flow.request.path = path
    return flow


def test_settle_serves_a_variant_of_the_gateways_path_under_its_normal_form() -> None:
    flow = _flow("//v1/Responses/?x=1")
    assert paths.settle(flow, LITERALS, lambda f: f.request.path.startswith("/v1/responses"))
    assert flow.request.path == "/v1/responses?x=1"
    assert flow.metadata[paths.AS_SENT] == "//v1/Responses/?x=1"


def test_settle_leaves_a_request_the_gateway_does_not_take_on_as_sent() -> None:
    flow = _flow("//v1/Files/")
    assert not paths.settle(flow, LITERALS, lambda f: False)
    assert flow.request.path == "//v1/Files/"
    assert paths.AS_SENT not in flow.metadata
