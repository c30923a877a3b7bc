"""The two patches of mitmproxy internals (addon/patches/cutoff.py,
addon/patches/wire_credentials.py; docs/concurrency.md "Patches of mitmproxy"): installed from the
addon, any number of times, by any copy of their module, always over mitmproxy's own method; and
only on the mitmproxy versions pinned for them. What each wrapper relies on inside mitmproxy is
checked, by name, in test_cutoff.py and test_wire_credentials.py."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import pathlib
import sys
import tomllib
from types import ModuleType
from typing import Any

import pytest
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.test import taddons
from packaging.requirements import Requirement

from addon.patches import cutoff, wire_credentials

ROOT = pathlib.Path(__file__).parents[3]
PATCHES = [(cutoff, "handle_protocol_error", "_handle_protocol_error"),
           (wire_credentials, "_handle_event", "_handle_event")]


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


@pytest.mark.parametrize(("module", "method", "wrapper"), PATCHES)
def test_installing_again_keeps_the_one_wrapper(module: ModuleType, method: str, wrapper: str) -> None:
    module.install()
    module.install()
    assert getattr(http_layer.HttpStream, method) is getattr(module, wrapper)


@pytest.mark.parametrize(("module", "method", "wrapper"), PATCHES)
def test_another_copy_of_the_module_wraps_mitmproxys_method_never_the_first_wrapper(
        module: ModuleType, method: str, wrapper: str) -> None:
    module.install()
    copy = _copy(module)
    try:
        copy.install()
        assert getattr(http_layer.HttpStream, method) is getattr(copy, wrapper)
        assert copy._ORIGINAL is module._ORIGINAL
        assert module._ORIGINAL.__qualname__ == f"HttpStream.{method}"
    finally:
        module.install()
    assert getattr(http_layer.HttpStream, method) is getattr(module, wrapper)


def test_the_gateway_installs_both_patches_when_it_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed by `load`, visibly, not by importing the script (docs/concurrency.md)."""
    from addon import gateway as script

    monkeypatch.setattr(http_layer.HttpStream, "handle_protocol_error", cutoff._ORIGINAL)
    monkeypatch.setattr(http_layer.HttpStream, "_handle_event", wire_credentials._ORIGINAL)
    monkeypatch.setattr(script, "_started", False, raising=False)  # as in a fresh process
    (gateway,) = [a for a in script.chain() if isinstance(a, script.Gateway)]
    with taddons.context(gateway):
        assert http_layer.HttpStream.handle_protocol_error is cutoff._handle_protocol_error, (
            "loading the gateway did not install addon/patches/cutoff.py: an unreachable upstream would get "
            "mitmproxy's HTML page")
        assert http_layer.HttpStream._handle_event is wire_credentials._handle_event, (
            "loading the gateway did not install addon/patches/wire_credentials.py: keys would not be sent")


def _pinned() -> Requirement:
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found = [Requirement(d) for d in project["project"]["dependencies"] if Requirement(d).name == "mitmproxy"]
    assert len(found) == 1, "pyproject.toml should name mitmproxy once"
    return found[0]


def test_the_installed_mitmproxy_is_the_range_the_patches_were_read_against() -> None:
    pin, installed = _pinned(), importlib.metadata.version("mitmproxy")
    assert pin.specifier.contains(installed), (
        f"mitmproxy {installed} is outside {pin.specifier} (pyproject.toml): re-read the internals "
        "addon/patches/cutoff.py and addon/patches/wire_credentials.py wrap (docs/mitmproxy.md "
        "\"Error hooks\", \"How a "
        "request head reaches the upstream\"), then move the pin")
