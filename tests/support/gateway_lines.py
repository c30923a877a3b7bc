"""A mitmproxy script for tests that copies each record of the gateway's loggers (`addon.*`) to the
file `$GATEWAY_LINES`, one message a line, in the order they are made: which of mitmdump's
lines are the gateway's (tests/e2e/test_readme.py compares them with docs/console.md).

Loaded with `-s` after addon/gateway.py; it adds nothing else to the proxy.
"""

from __future__ import annotations

import logging
import os

LOGGER = "addon"


class _Copy(logging.Handler):
    def __init__(self, path: str) -> None:
        super().__init__(logging.INFO)  # what mitmdump prints (termlog_verbosity=info)
        self._path = path

    def emit(self, record: logging.LogRecord) -> None:
        with open(self._path, "a", encoding="utf-8") as out:
            out.write(record.getMessage().replace("\n", " ") + "\n")


def _install() -> None:
    path = os.environ.get("GATEWAY_LINES")
    logger = logging.getLogger(LOGGER)
    if path and not any(isinstance(h, _Copy) for h in logger.handlers):
        logger.addHandler(_Copy(path))


_install()
