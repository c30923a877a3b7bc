"""translators/features/vendor_state.py: provider state carried through the client in encrypted_content."""

from __future__ import annotations

import base64

from hypothesis import given
from hypothesis import strategies as st

from translators.features import vendor_state
from translators.ir.request import VendorState

SIGNATURE = "EqkECkYIBxgCKkA8AZ4n+/p3JTRB6Xz5297mrWhl3M==\n"
THINKING = "925 ÷ 5 = 185 — done 🧮\r\n  "


def test_a_thinking_signature_and_text_come_back_byte_exact():
    state = VendorState(dialect="anthropic", signature=SIGNATURE, text=THINKING)
    back = vendor_state.decode(vendor_state.encode(state))
    assert back is not None
    assert (back.dialect, back.signature, back.text) == ("anthropic", SIGNATURE, THINKING)


def test_the_payload_is_marked_as_the_gateways_own():
    encoded = vendor_state.encode(VendorState(dialect="anthropic", signature="s"))
    assert encoded.startswith("dgw1:")
    assert vendor_state.is_ours(encoded)


def test_openai_encrypted_reasoning_is_not_ours_and_decodes_to_nothing():
    openai_blob = "gAAAAABo" + base64.b64encode(b"opaque").decode()
    assert vendor_state.decode(openai_blob) is None
    assert not vendor_state.is_ours(openai_blob)
    assert not vendor_state.is_ours(None)


def test_a_corrupt_payload_with_our_marker_decodes_to_nothing():
    assert vendor_state.decode("dgw1:!!!not base64") is None
    assert vendor_state.decode("dgw1:" + base64.urlsafe_b64encode(b'{"no": "dialect"}').decode()) is None


@given(st.text())
def test_decoding_anything_never_raises(tail):
    result = vendor_state.decode("dgw1:" + tail)  # None or a VendorState, never an exception
    assert result is None or isinstance(result, VendorState)
    assert vendor_state.decode(tail) is None or tail.startswith("dgw1:")
