"""A stream's idle deadline as one timer for the whole stream (docs/pools.md "One attempt",
docs/benchmarks.md "The per-event path").

An `asyncio.timeout_at` around each read of a streamed answer makes a timer and cancels it per
event: on a paced stream that, with the frames around it, was a visible share of a turn's CPU.
Here the deadline is a plain number the pump moves (`deadline`), and one timer watches it. The
pump marks the time it waits on the upstream (`reading`): only then is silence the upstream's.
When the timer fires:
- before the deadline (it moved since): it is set again for the deadline;
- past it, while the pump reads: the pump's task is cancelled, and `timed_out` tells the pump
  that this cancellation is the deadline's, not one from outside (which is passed on);
- while the pump does something else (it waits on a slow client, say): nothing; the pump sets
  the timer again before its next read (`handle` is None).
"""

from __future__ import annotations

import asyncio


class Idle:
    """One stream's idle deadline. The pump's loop, per read: `if idle.handle is None:
    idle.arm()`, `idle.reading = True`, the read, `idle.reading = False`; on a CancelledError
    from the read, `idle.timed_out()` says whether it is the deadline's."""

    __slots__ = ("deadline", "expired", "handle", "loop", "reading", "task")

    def __init__(self, deadline: float) -> None:
        self.loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None, "a stream is pumped in a task"
        self.task = task
        self.deadline = deadline
        self.reading = False
        self.expired = False
        self.handle: asyncio.TimerHandle | None = None

    def arm(self) -> None:
        self.handle = self.loop.call_at(self.deadline, self._fire)

    def _fire(self) -> None:
        self.handle = None
        if not self.reading:
            return  # armed again before the next read
        if self.loop.time() < self.deadline:
            self.arm()
            return
        self.expired = True
        self.task.cancel()

    def timed_out(self) -> bool:
        """The read was cancelled by the deadline alone (as `asyncio.timeout` tells its own
        cancellation from another: the task's count of pending cancellations)."""
        if not self.expired:
            return False
        self.expired = False
        return self.task.uncancel() == 0

    def close(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
