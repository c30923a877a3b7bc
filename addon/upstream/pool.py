"""Which deployment of a route's pool serves an attempt (docs/pools.md "Which deployment").

Pure and clock-injected: every decision takes `now` (monotonic seconds) from its caller, so the
tests drive time. One `Balancer` per pool keeps, per deployment, what its answers said (healthy,
or cooling down until a time after a failure), how many attempts it serves right now, and which
conversations it served last. The rules:

- **Sticky.** A conversation (its affinity keys: `prompt_cache_key`, a Claude Code session, the
  response a `previous_response_id` names, a WebSocket connection) goes to the deployment that
  served it last while that one is usable, so the upstream's prompt cache keeps working; when it
  is not, the conversation moves, once, to wherever its next answer comes from.
- **Spread.** Otherwise the least busy usable deployment by attempts in flight per weight; ties
  go round by weight (smooth weighted round robin), so sequential new conversations are spread
  by weight too.
- **Cooldown.** A failure (refused, timed out, 408/429/5xx/529, an overload before content) cools
  the deployment down for its `retry-after`, else 1, 2, 4 ... seconds (each capped at `cap`);
  a success ends it. Failures of attempts that started before the first one was known are the
  same outage: they neither lengthen nor restart it.
- **One probe.** A deployment whose cooldown ended is tried by one attempt at a time until an
  answer says it is back, so a dead deployment costs one attempt per cooldown, however many
  turns are waiting.
- **Fallbacks**, in order, once no deployment is usable or each failed this turn, and for a
  request whose input estimate does not fit a deployment's context window.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from addon.routes.routing import Deployment

AFFINITY = 10_000
"""Conversations remembered per pool; the one seen longest ago is forgotten first."""
BACKOFF = 1.0
"""Seconds of the first cooldown without a retry-after; doubled by each failure in a row."""
CAP = 60.0
"""The longest cooldown, retry-after included."""

Outcome = Literal["ok", "failed", "answered", "dropped"]
"""How an attempt ended, for the deployment's health: `ok` (it answered, the answer was used),
`failed` (a fault of the deployment: it cools down), `answered` (it answered, with the client's
fault: alive), `dropped` (the attempt was abandoned, the client left: says nothing)."""


@dataclass(frozen=True, slots=True)
class Choice:
    deployment: Deployment
    fallback: bool
    why: Literal["sticky", "spread", "fallback", "again"]
    """`sticky`: the conversation's own; `spread`: least busy; `fallback`: the pool could not
    serve; `again`: one that failed this turn, its cooldown over."""
    probe: bool
    """The deployment is coming back from a cooldown: this attempt is its one probe."""

    @property
    def name(self) -> str:
        return self.deployment.name


@dataclass(slots=True)
class Health:
    in_flight: int = 0
    failures: int = 0
    """Failures in a row; 0: healthy."""
    cool_until: float = 0.0
    probing: bool = False
    turn: float = 0.0
    """Smooth weighted round robin's running score."""

    def cooling(self, now: float) -> bool:
        return self.failures > 0 and now < self.cool_until

    def usable(self, now: float) -> bool:
        return self.failures == 0 or (now >= self.cool_until and not self.probing)


@dataclass(slots=True, eq=False, weakref_slot=True)
class Balancer:
    deployments: tuple[Deployment, ...]
    fallbacks: tuple[Deployment, ...] = ()
    backoff: float = BACKOFF
    cap: float = CAP
    affinity_size: int = AFFINITY
    on_change: Callable[[], None] | None = None
    """Called when a deployment's state changed (an attempt ended): waiters look again."""
    _health: dict[str, Health] = field(default_factory=dict)
    _affinity: collections.OrderedDict[str, str] = field(default_factory=collections.OrderedDict)

    def __post_init__(self) -> None:
        names = [d.name for d in (*self.deployments, *self.fallbacks)]
        if not self.deployments:
            raise ValueError("a pool needs at least one deployment")
        if len(set(names)) != len(names):
            raise ValueError(f"deployment names must differ within a pool: {names}")
        self._health = {name: Health() for name in names}

    @property
    def alone(self) -> bool:
        """One deployment and no fallback: nothing else could serve what it refuses for good, so
        such a refusal (its key, its model) passes on each time and cools nothing down."""
        return len(self.deployments) + len(self.fallbacks) == 1

    def health(self, name: str) -> Health:
        return self._health[name]

    # -- choosing ------------------------------------------------------------------------------
    def pick(self, now: float, *, affinity: Sequence[str] = (), failed: Iterable[str] = (),
             excluded: Iterable[str] = (), needs: int | None = None) -> Choice | None:
        """The deployment for the next attempt, counted in flight until `done`; None when none is
        usable now (`ready_at` says when one may be). `failed`: deployments that failed this
        turn (tried again once nothing else is left and their cooldown is over); `excluded`:
        never this turn; `needs`: the request's input estimate in tokens."""
        failed = set(failed)
        out = set(excluded)
        needs = self._needs(needs, out)
        fresh = [d for d in self.deployments
                 if d.name not in failed and d.name not in out and self._open(d, now, needs)]
        if fresh:
            for key in affinity:
                name = self._affinity.get(key)
                if name is None:
                    continue
                self._affinity.move_to_end(key)
                for deployment in fresh:
                    if deployment.name == name:
                        return self._begin(deployment, now, fallback=False, why="sticky")
            return self._begin(self._least_busy(fresh), now, fallback=False, why="spread")
        for deployment in self.fallbacks:
            if deployment.name not in failed and deployment.name not in out \
                    and self._open(deployment, now, needs):
                return self._begin(deployment, now, fallback=True, why="fallback")
        for deployment in (*self.deployments, *self.fallbacks):
            if deployment.name not in out and self._open(deployment, now, needs):
                return self._begin(deployment, now, fallback=deployment in self.fallbacks, why="again")
        return None

    def ready_at(self, now: float, *, excluded: Iterable[str] = (), needs: int | None = None) -> float | None:
        """When a deployment that fits stops cooling down (the soonest); None when none is
        cooling (all usable, or each waiting for a probe's answer)."""
        out = set(excluded)
        needs = self._needs(needs, out)
        times = [self._health[d.name].cool_until for d in (*self.deployments, *self.fallbacks)
                 if d.name not in out and _fits(d, needs) and self._health[d.name].cooling(now)
                 and not self._health[d.name].probing]
        return min(times) if times else None

    def _needs(self, needs: int | None, excluded: set[str]) -> int | None:
        """`needs`, or None when nothing left fits it by its stated window: the upstreams say."""
        if needs is None:
            return None
        left = [d for d in (*self.deployments, *self.fallbacks) if d.name not in excluded]
        return needs if any(_fits(d, needs) for d in left) else None

    def probing(self) -> bool:
        """A probe is out: its answer may make a deployment usable."""
        return any(h.probing for h in self._health.values())

    def _open(self, deployment: Deployment, now: float, needs: int | None) -> bool:
        return _fits(deployment, needs) and self._health[deployment.name].usable(now)

    def _least_busy(self, candidates: list[Deployment]) -> Deployment:
        """Fewest in flight per weight; among equals, smooth weighted round robin."""
        load = {d.name: self._health[d.name].in_flight / d.weight for d in candidates}
        low = min(load.values())
        tied = [d for d in candidates if load[d.name] == low]
        if len(tied) == 1:
            return tied[0]
        total = sum(d.weight for d in tied)
        for d in tied:
            self._health[d.name].turn += d.weight
        best = max(tied, key=lambda d: self._health[d.name].turn)
        self._health[best.name].turn -= total
        return best

    def _begin(self, deployment: Deployment, now: float, *, fallback: bool,
               why: Literal["sticky", "spread", "fallback", "again"]) -> Choice:
        health = self._health[deployment.name]
        probe = health.failures > 0
        health.in_flight += 1
        if probe:
            health.probing = True
        return Choice(deployment, fallback, why, probe)

    # -- what the attempt said ----------------------------------------------------------------
    def done(self, choice: Choice, now: float, outcome: Outcome, retry_after: float | None = None) -> None:
        """The attempt of `choice` ended: its deployment's health follows from `outcome`."""
        health = self._health[choice.name]
        health.in_flight = max(0, health.in_flight - 1)
        probing = choice.probe and health.probing  # not yet said back by `alive`
        if choice.probe:
            health.probing = False
        if outcome == "ok" or (outcome == "answered" and probing):
            health.failures, health.cool_until = 0, 0.0
        elif outcome == "failed" and (health.failures == 0 or probing):
            # a failure while healthy starts a cooldown, a failed probe the next one; other
            # attempts that fail meanwhile started before it was known: the same outage
            health.failures += 1
            wait = retry_after if retry_after is not None and retry_after > 0 else \
                self.backoff * 2 ** (health.failures - 1)
            health.cool_until = now + min(wait, self.cap)
        if self.on_change is not None:
            self.on_change()

    def alive(self, choice: Choice) -> None:
        """The attempt's deployment answered a success head: it is back, before its answer ends
        (a long stream holds no waiting turn behind its probe)."""
        health = self._health[choice.name]
        if choice.probe and health.probing:
            health.failures, health.cool_until, health.probing = 0, 0.0, False
            if self.on_change is not None:
                self.on_change()

    def remember(self, keys: Iterable[str], name: str) -> None:
        """These conversations go to `name` while it is usable (the deployment that answered)."""
        for key in keys:
            self._affinity[key] = name
            self._affinity.move_to_end(key)
        while len(self._affinity) > self.affinity_size:
            self._affinity.popitem(last=False)

    def remembered(self, key: str) -> str | None:
        return self._affinity.get(key)


def _fits(deployment: Deployment, needs: int | None) -> bool:
    window = deployment.window
    return needs is None or window is None or needs <= window


class Pools:
    """One `Balancer` per pool, kept across reconfigurations while its deployments are the same
    (health and conversations survive a reload of unchanged routes)."""

    def __init__(self, *, backoff: float = BACKOFF, cap: float = CAP, affinity_size: int = AFFINITY) -> None:
        self._by_pool: dict[tuple[tuple[Deployment, ...], tuple[Deployment, ...]], Balancer] = {}
        self._settings = (backoff, cap, affinity_size)

    def balancer(self, deployments: Sequence[Deployment], fallbacks: Sequence[Deployment] = ()) -> Balancer:
        key = (tuple(deployments), tuple(fallbacks))
        found = self._by_pool.get(key)
        if found is None:
            backoff, cap, size = self._settings
            found = Balancer(key[0], key[1], backoff=backoff, cap=cap, affinity_size=size)
            self._by_pool[key] = found
        return found

    def keep_only(self, pools: Iterable[tuple[Sequence[Deployment], Sequence[Deployment]]]) -> None:
        """Forget the balancers of pools no route has any more (after a reconfiguration)."""
        wanted = {(tuple(d), tuple(f)) for d, f in pools}
        for key in [k for k in self._by_pool if k not in wanted]:
            del self._by_pool[key]
