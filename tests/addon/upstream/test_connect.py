"""addon/upstream/connect.py: an upstream's origin, as the client keys its kept connections and
writes its host header."""

from __future__ import annotations

import pytest

from addon.upstream.connect import Origin


def test_an_origin_is_scheme_host_and_port_and_its_host_header_omits_a_default_port() -> None:
    assert Origin.of("https://api.anthropic.com/v1/messages?beta=true") == (
        Origin("https", "api.anthropic.com", 443), "/v1/messages?beta=true")
    assert Origin("https", "api.anthropic.com", 443).host_header == "api.anthropic.com"
    assert Origin("http", "::1", 8080).host_header == "[::1]:8080"
    with pytest.raises(ValueError):
        Origin.of("ftp://example.com/")
