"""Reasoning state inside a thinking block's `signature` (docs/claude-code.md "Reasoning state").

A Messages client sends every thinking block back unmodified on the next turn, signature and all
(the anthropic SDK's `BetaThinkingBlockParam`: "exactly as returned by the API in a previous
response"), as Codex does a reasoning item's `encrypted_content`. So the gateway writes the
upstream's state there in the very format `translators/features/vendor_state.py` writes for Codex (a
marked payload), and reads it back into the same `VendorState`. A signature without the marker
is Anthropic's own: it is kept as an Anthropic state, which only an Anthropic upstream replays
(`vendor_state.replayable`).
"""

from __future__ import annotations

from translators.features import vendor_state
from translators.ir.request import VendorState

ANTHROPIC = "anthropic"


def write(state: VendorState | None, *, shown: bool = True) -> str:
    """The `signature` of a thinking block made from `state`: Anthropic's own signature as it is
    (the client may take it back to Anthropic itself), any other state in the gateway's format;
    no state: an empty signature, which reads back as none. `shown`: the block carries the
    thinking text; when it does not (`display: "omitted"`) while Anthropic wrote text, the
    signature alone would come back over an empty text, which Anthropic refuses, so the whole
    state (text and signature) goes in the gateway's format."""
    if state is None:
        return ""
    if is_native(state) and (shown or not state.text):
        return state.signature or ""
    return vendor_state.encode(state)


def write_redacted(state: VendorState) -> str:
    """The `data` of a redacted_thinking block: Anthropic's own as it is, any other vendor's
    redacted reasoning (Bedrock's) in the gateway's format."""
    if state.dialect == ANTHROPIC and state.redacted is not None and not state.signature:
        return state.redacted
    return vendor_state.encode(state)


def is_native(state: VendorState) -> bool:
    """Anthropic's own signed thinking: the signature goes to the client as Anthropic wrote it."""
    return (state.dialect == ANTHROPIC and state.signature is not None and state.redacted is None
            and not state.blocks and not state.call_ids)


def read(signature: object, thinking: str) -> VendorState | None:
    """The state a thinking block carries: the gateway's own, exactly as it was written, else
    Anthropic's signature over `thinking`; None for an empty or absent one."""
    if not isinstance(signature, str) or not signature:
        return None
    if vendor_state.is_ours(signature):
        return vendor_state.decode(signature)
    return VendorState(dialect=ANTHROPIC, signature=signature, text=thinking)


def read_redacted(data: object) -> VendorState | None:
    if not isinstance(data, str) or not data:
        return None
    if vendor_state.is_ours(data):
        return vendor_state.decode(data)
    return VendorState(dialect=ANTHROPIC, redacted=data)
