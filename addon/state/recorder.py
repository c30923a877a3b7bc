"""A stream translator that records its turn as it finishes (addon/state/turns.py `Turns.recorder`):
the store's write is queued before the terminal event's bytes are handed to mitmproxy, so the
client's next request finds the turn (docs/state.md "Read your own turn")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Recording:
    """A stream translator that calls `on_finish(response object)` once, when it has finished."""

    def __init__(self, inner: Any, on_finish: Callable[[dict[str, Any]], None]) -> None:
        self.inner = inner
        self.report = inner.report
        self._on_finish = on_finish
        self._done = False

    @property
    def finished(self) -> bool:
        return self.inner.finished

    # what the upstream leg watches (addon/upstream/leg.py `Observed`)
    @property
    def content_started(self) -> bool:
        return bool(getattr(self.inner, "content_started", True))

    @property
    def early_failure(self) -> Any:
        return getattr(self.inner, "early_failure", None)

    @property
    def progress(self) -> int:
        return int(getattr(self.inner, "progress", 0))

    def response(self) -> dict[str, Any]:
        return self.inner.response()

    def feed(self, data: bytes) -> bytes:
        return b"".join(self.feed_parts(data))

    def close(self) -> bytes:
        return b"".join(self.close_parts())

    def feed_parts(self, data: bytes) -> list[bytes]:
        out = self.inner.feed_parts(data)
        self._check()
        return out

    def close_parts(self) -> list[bytes]:
        out = self.inner.close_parts()
        self._check()
        return out

    def _check(self) -> None:
        if not self._done and self.inner.finished:
            if self.early_failure is not None and not self.content_started:
                return  # a failure before content: the upstream leg tries again, this is no answer
            self._done = True
            try:
                self._on_finish(self.inner.response())
            except Exception as exc:  # recording must never break the client's stream
                self.report.note(f"state: the turn was not stored: {exc!r}")
