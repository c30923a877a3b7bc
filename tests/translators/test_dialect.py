"""translators/dialect.py: a dialect as typed parts (vendor, codec, passthrough, signing), the one
rule for which part serves a client, and the folders that keep each vendor's knowledge its own."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

import translators
from tests.support import conformance
from translators import dialect as dialects
from translators import translate_request
from translators.dialect import Codec, Dialect, Passthrough, Vendor

ROOT = Path(translators.__file__).parent
VENDOR = Vendor(display_name="Nowhere", base_url="https://api.nowhere.example")


def test_a_dialect_without_a_codec_or_a_passthrough_is_refused() -> None:
    with pytest.raises(TypeError, match="neither a codec nor a passthrough"):
        Dialect(name="nowhere", vendor=VENDOR)


def test_the_client_of_the_upstreams_own_wire_gets_its_passthrough_any_other_its_codec() -> None:
    responses = dialects.get("responses")
    assert isinstance(dialects.serving(responses, takes_passthrough=True), Passthrough)
    assert isinstance(dialects.serving(responses, takes_passthrough=False), Codec)
    assert dialects.passes_through(responses, True) and not dialects.passes_through(responses, False)


@pytest.mark.parametrize("takes_passthrough", [True, False])
def test_a_dialect_with_one_part_serves_every_client_by_it(takes_passthrough: bool) -> None:
    responses = dialects.get("responses")
    only_passthrough = replace(responses, codec=None)
    assert dialects.serving(only_passthrough, takes_passthrough) is responses.passthrough
    anthropic = dialects.get("anthropic")
    assert dialects.serving(anthropic, takes_passthrough) is anthropic.codec


@pytest.mark.parametrize("name", dialects.names())
def test_every_key_header_a_vendor_writes_is_one_it_redacts(name: str) -> None:
    vendor = dialects.get(name).vendor
    written = {header.lower() for header in vendor.key_headers("k")}
    assert written <= {header.lower() for header in vendor.secret_headers}


def test_the_registry_answers_for_shipped_and_registered_dialects() -> None:
    assert dialects.names()[: len(dialects.BUILTIN)] == dialects.BUILTIN
    assert [d.name for d in dialects.every()] == list(dialects.names())
    assert dialects.find("surely-no-such-dialect") is None
    with pytest.raises(KeyError):
        dialects.get("surely-no-such-dialect")


_IMPORT = re.compile(r"^\s*(?:from|import) translators\.(\w+)", re.MULTILINE)


@pytest.mark.parametrize("name", dialects.BUILTIN)
def test_no_dialect_folder_imports_another(name: str) -> None:
    """A dialect knows its wire and the IR; what two share lives in a family or a shared module
    (docs/design.md "Layout"): Claude on Bedrock reads the Claude family, not the Anthropic dialect."""
    others = set(dialects.BUILTIN) - {name}
    found = {str(path.relative_to(ROOT)): sorted(set(_IMPORT.findall(path.read_text())) & others)
             for path in (ROOT / name).rglob("*.py")}
    assert {path: names for path, names in found.items() if names} == {}


def test_no_family_imports_a_dialect() -> None:
    shipped = set(dialects.BUILTIN)
    found = {str(path.relative_to(ROOT)): sorted(set(_IMPORT.findall(path.read_text())) & shipped)
             for path in (ROOT / "families").rglob("*.py")}
    assert {path: names for path, names in found.items() if names} == {}


@pytest.mark.parametrize("name", dialects.names())
def test_every_dialect_declares_the_conformance_data_the_shared_suites_read(name: str) -> None:
    """tests/support/conformance/: what the shared suites run each dialect with, found by the
    dialect's name, never by a branch on it; its key header is the one the vendor writes."""
    declared = conformance.of(name)
    assert declared.dialect == name
    assert declared.recordings or declared.stream
    translation = translate_request({"model": "gpt-5.5", "input": "hi", "stream": True}, name, declared.model)
    assert declared.is_mine(translation.path) and declared.wants_stream(translation.path, translation.body)
    header, template = declared.key_header
    assert dialects.get(name).vendor.key_headers("k") == {header: template.format(key="k")}
