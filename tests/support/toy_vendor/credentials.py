"""Tokenline's credential source: the token in the file `$TOKENLINE_TOKEN_FILE` names, read again
at every request (a rotated token is used from the next request on). The I/O edge the dialect
brings (`Signing.source`); only the addon asks it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

TOKEN_FILE_ENV = "TOKENLINE_TOKEN_FILE"


@dataclass(frozen=True, slots=True)
class TokenFile:
    name: str = "token-file"

    def find(self) -> str | None:
        """The token, or None: no variable, no file, or an empty one."""
        where = os.environ.get(TOKEN_FILE_ENV, "").strip()
        if not where:
            return None
        try:
            return Path(where).read_text().strip() or None
        except OSError:
            return None


SOURCE = TokenFile()
