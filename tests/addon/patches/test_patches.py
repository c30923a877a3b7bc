"""The patches of mitmproxy internals (addon/patches/; docs/concurrency.md "Patches of mitmproxy"):
installed from the addon, any number of times, by any copy of their module, always over mitmproxy's
own method; and only on the mitmproxy versions pinned for them. What each wrapper relies on inside
mitmproxy is checked, by name: here for every name a patch module lists in its `INTERNALS`, and by
behaviour in the tests beside this one."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import pathlib
import sys
import tomllib
from types import ModuleType
from typing import Any

import pytest
from mitmproxy.proxy import server
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.proxy.layers import websocket as websocket_layer
from mitmproxy.proxy.layers.http import _http1
from mitmproxy.proxy.layers.http._http1 import Http1Server
from mitmproxy.test import taddons
from packaging.requirements import Requirement

from addon.patches import (
    admission,
    body_relay,
    early_answer,
    head_bound,
    loopback_pipe,
    trailers,
    unrouted,
    websocket_bound,
    websocket_served,
)

ROOT = pathlib.Path(__file__).parents[3]
STREAM = http_layer.HttpStream
PATCHES = [(early_answer, STREAM, "state_wait_for_request_headers", "_wait_for_request_headers"),
           (early_answer, STREAM, "state_consume_request_body", "_consume_request_body"),
           (admission, server.ConnectionHandler, "handle_client", "_handle_client"),
           (head_bound, Http1Server, "read_headers", "_read_headers"),
           (head_bound, Http1Server, "wait", "_wait"),
           (trailers, _http1, "make_body_reader", "_make_body_reader"),
           (websocket_bound, websocket_layer.WebsocketLayer, "relay_messages", "_relay_messages"),
           (websocket_served, STREAM, "flow_done", "_flow_done"),
           (unrouted, STREAM, "handle_protocol_error", "_handle_protocol_error"),
           (loopback_pipe, server.ConnectionHandler, "open_connection", "_open_connection")]
"""(module, the mitmproxy class or module it patches, the method or function, the module's wrapper)."""
LISTED = [early_answer, admission, head_bound, trailers, websocket_bound, websocket_served, unrouted,
          loopback_pipe, body_relay]
"""The patch modules that list the mitmproxy internals they use (`INTERNALS`)."""


def _copy(module: ModuleType) -> ModuleType:
    """Another copy of `module`, as a second import by path or under another name makes one."""
    assert module.__file__ is not None
    spec = importlib.util.spec_from_file_location(f"gateway_test_copy_of_{module.__name__}", module.__file__)
    assert spec is not None and spec.loader is not None
    copy = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = copy  # as an import does (its dataclasses look their module up)
    try:
        spec.loader.exec_module(copy)
    finally:
        del sys.modules[spec.name]
    return copy


@pytest.mark.parametrize(("module", "owner", "method", "wrapper"), PATCHES)
def test_installing_again_keeps_the_one_wrapper(module: ModuleType, owner: Any, method: str,
                                                wrapper: str) -> None:
    module.install()
    module.install()
    assert getattr(owner, method) is getattr(module, wrapper)


@pytest.mark.parametrize(("module", "owner", "method", "wrapper"), PATCHES)
def test_another_copy_of_the_module_wraps_mitmproxys_method_never_the_first_wrapper(
        module: ModuleType, owner: Any, method: str, wrapper: str) -> None:
    module.install()
    copy = _copy(module)
    try:
        copy.install()
        assert getattr(owner, method) is getattr(copy, wrapper)
        original = getattr(module, wrapper)._gateway_wraps  # what a wrapper wraps
        assert getattr(copy, wrapper)._gateway_wraps is original
        assert original.__qualname__.rpartition(".")[2] == method and "gateway" not in original.__module__
    finally:
        module.install()
    assert getattr(owner, method) is getattr(module, wrapper)


def test_the_gateway_installs_every_patch_when_it_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed by `load`, visibly, not by importing the script (docs/concurrency.md)."""
    from addon import gateway as script

    for module, owner, method, wrapper in PATCHES:
        monkeypatch.setattr(owner, method, getattr(module, wrapper)._gateway_wraps
                            if hasattr(getattr(module, wrapper), "_gateway_wraps") else module._ORIGINAL)
    monkeypatch.setattr(script, "_started", False, raising=False)  # as in a fresh process
    (gateway,) = [a for a in script.chain() if isinstance(a, script.Gateway)]
    with taddons.context(gateway):
        for module, owner, method, wrapper in PATCHES:
            assert getattr(owner, method) is getattr(module, wrapper), (
                f"loading the gateway did not install {module.__name__} ({owner.__name__}.{method})")


def _pinned() -> Requirement:
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found = [Requirement(d) for d in project["project"]["dependencies"] if Requirement(d).name == "mitmproxy"]
    assert len(found) == 1, "pyproject.toml should name mitmproxy once"
    return found[0]


def test_the_installed_mitmproxy_is_the_range_the_patches_were_read_against() -> None:
    pin, installed = _pinned(), importlib.metadata.version("mitmproxy")
    assert pin.specifier.contains(installed), (
        f"mitmproxy {installed} is outside {pin.specifier} (pyproject.toml): re-read the internals "
        "addon/patches/ wraps (docs/mitmproxy.md "
        "\"Error hooks\", \"How a "
        "request head reaches the upstream\"), then move the pin")


def _resolve(dotted: str) -> object:
    """The object a dotted name names: a module's attribute, a class's attribute, or an attribute
    a class's methods assign to `self` (`__static_attributes__`, Python 3.13)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for i, name in enumerate(parts[cut:], start=cut):
            if hasattr(found, name):
                found = getattr(found, name)
            elif isinstance(found, type) and i == len(parts) - 1 and any(
                    name in getattr(k, "__static_attributes__", ()) for k in found.__mro__):
                return name
            else:
                raise AttributeError(f"{'.'.join(parts[:i])} has no attribute {name!r}")
        return found
    raise AttributeError(f"no module in {dotted}")


@pytest.mark.parametrize("dotted", [name for module in LISTED for name in module.INTERNALS])
def test_every_internal_a_patch_uses_is_in_the_installed_mitmproxy(dotted: str) -> None:
    try:
        _resolve(dotted)
    except AttributeError as exc:
        pytest.fail(f"{dotted} is gone from mitmproxy {importlib.metadata.version('mitmproxy')} ({exc}): "
                    "re-read the patch that lists it (addon/patches/) against the new internals")
