"""The gateway's own payloads inside fields a client replays byte for byte (a reasoning item's or a
compaction item's `encrypted_content`, docs/codex.md "Echo behaviour"): a marker naming what it is,
then the base64url of a pydantic model's JSON."""

from __future__ import annotations

import base64
import binascii

from pydantic import BaseModel, ValidationError


def write(marker: str, json_text: str) -> str:
    return marker + base64.urlsafe_b64encode(json_text.encode()).decode("ascii")


def read[M: BaseModel](marker: str, encrypted: object, model: type[M]) -> M | None:
    """The `model` written after `marker`, or None for anything else: another marker, a value that
    is not a string, corrupt base64 or JSON, or a payload the model refuses (another version)."""
    if not isinstance(encrypted, str) or not encrypted.startswith(marker):
        return None
    try:
        raw = base64.urlsafe_b64decode(encrypted[len(marker):].encode("ascii"))
        return model.model_validate_json(raw)
    except (binascii.Error, ValueError, ValidationError, UnicodeEncodeError):
        return None
