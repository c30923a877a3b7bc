"""A mitmproxy script the test harness loads last (tests/support/mitmdump.py): once mitmdump's
start-up is over and has passed mitmproxy's own check (the `errorcheck` addon, which exits on any
error logged while starting, scripts' included), it writes `<confdir>/started`. The harness waits
for that file instead of a fixed time after "listening at"."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from mitmproxy import ctx

MARK = "started"
"""The file's name in the confdir."""


class Started:
    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None

    def running(self) -> None:
        # the check runs after every addon's `running`: wait for it without holding the others up
        self._task = asyncio.get_running_loop().create_task(self._after_the_check())

    async def _after_the_check(self) -> None:
        check = ctx.master.addons.get("errorcheck")
        # it stops watching the log once start-up passed it; on an error it exits instead
        while check is not None and check.logger in logging.getLogger().handlers:
            await asyncio.sleep(0.01)
        (Path(ctx.options.confdir).expanduser() / MARK).touch()


addons = [Started()]
