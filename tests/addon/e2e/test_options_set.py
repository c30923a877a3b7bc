"""Every gateway option is one `--set name=value` of real mitmdump takes: mitmproxy parses str,
int, bool and list options only, and a float option stopped mitmdump at start ("unsupported option
type: float"; docs/team.md "Options `--set` takes")."""

from __future__ import annotations

from pathlib import Path

import pytest
from mitmproxy.addons import proxyserver, serverplayback
from mitmproxy.test import taddons

from tests.addon.conftest import Chain
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(90)

CHANGED = {"gateway_store_ttl": "20", "gateway_capabilities_timeout": "1.5"}
"""The values the finding was about; every other option is set to its own default."""


def _every_option() -> dict[str, str]:
    addon = Chain()
    with taddons.context(proxyserver.Proxyserver(), serverplayback.ServerPlayback(), *addon.members) as tctx:
        found = {}
        for name, option in tctx.options.items():
            if not name.startswith("gateway_") or isinstance(option.default, (list, tuple)):
                continue
            default = option.default
            found[name] = str(default).lower() if isinstance(default, bool) else str(default)
    return found


def test_every_gateway_option_is_taken_by_set(tmp_path: Path) -> None:
    options = {**_every_option(), **CHANGED, "gateway_store_path": str(tmp_path / "store.sqlite")}
    assert {"gateway_store_ttl", "gateway_capabilities_timeout", "gateway_clients"} <= set(options)
    with MitmDump(tmp_path / "conf", mode="reverse:https://api.openai.com", options=options) as proxy:
        assert "unsupported option type" not in proxy.log
