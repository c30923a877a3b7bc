"""Label values for the metrics, each from a bounded set (docs/metrics.md "Labels"): a label
value is a series for as long as the process lives, so nothing a client chooses freely (its
model name, an id, an error text, a field it invents) becomes one.

- `client`: a name in the clients file (the operator's), `-` without client keys;
- `route`: the pattern of the route the client's model takes, `-` for none;
- `model`: a model some route names (target, deployment, fallback, compaction), else the route's
  pattern, else `other`;
- `upstream`: a dialect's name, `store` or `-`;
- `deployment`: a name of the route's pool;
- `path`: a dropped field's path with its array indices as `[*]`;
and every label at most `LIMIT` distinct values, `other` after that.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from addon.routes.routing import Route, Router, pool_of
from translators import dialect as registry

OTHER = "other"
NONE = "-"
LIMIT = 200
"""Distinct values one label takes before the rest read `other`."""
LONGEST = 120
"""Characters of a value kept (a longer one reads `other`)."""
_INDEX = re.compile(r"\[\d+\]")


class Bounded:
    """The first `limit` distinct values of a label, as they come; `other` after them."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._seen: set[str] = set()

    def __call__(self, value: str) -> str:
        if value in self._seen:
            return value
        if len(self._seen) >= self.limit or not value or len(value) > LONGEST:
            return OTHER
        self._seen.add(value)
        return value


def path(dropped: str) -> str:
    """`input[12].content[3].detail` -> `input[*].content[*].detail`."""
    return _INDEX.sub("[*]", dropped)


def outcome(value: str, known: Iterable[str]) -> str:
    return value if value in known else OTHER


class Names:
    """What the current routes allow as label values: the models and deployments they name,
    rebuilt when the router changes."""

    def __init__(self) -> None:
        self._router: Router | None = None
        self._models: frozenset[str] = frozenset()
        self._deployments: dict[str, frozenset[str]] = {}
        self._upstreams = frozenset((*registry.names(), "store", NONE))

    def _know(self, router: Router) -> None:
        if router is self._router:
            return
        models: set[str] = set()
        deployments: dict[str, frozenset[str]] = {}
        for route in router.routes:
            members = [*pool_of(route)[0], *pool_of(route)[1]]
            for candidate in (route, route.summarizer, *(m.route for m in members)):
                if candidate is not None and candidate.model:
                    models.add(candidate.model)
            deployments[route.pattern] = frozenset(m.name for m in members)
        self._router, self._models, self._deployments = router, frozenset(models), deployments
        self._upstreams = frozenset((*registry.names(), "store", NONE))

    def route(self, router: Router, client_model: str | None) -> Route | None:
        self._know(router)
        return router.route(client_model) if client_model else None

    def model(self, router: Router, route: Route | None, model: Any) -> str:
        self._know(router)
        if isinstance(model, str) and model in self._models:
            return model
        return route.pattern if route is not None else OTHER

    def upstream(self, value: str) -> str:
        return value if value in self._upstreams else OTHER

    def deployment(self, route: Route | None, name: str) -> str:
        if route is None:
            return OTHER
        return name if name in self._deployments.get(route.pattern, ()) else OTHER
