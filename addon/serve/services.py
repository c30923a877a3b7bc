"""What the pipeline and the gateway's addons share, as one typed object, built once per gateway
(addon/gateway.py `chain`): no step reaches into an addon for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from addon.routes.capabilities import Capabilities
from addon.routes.routing import Router
from addon.serve.flow import Flows
from addon.serve.ir_cache import ItemCaches
from addon.upstream.service import UpstreamLeg

if TYPE_CHECKING:
    from addon.state.storage import Storage
    from addon.state.turns import Turns
    from addon.team.budgets import Budgets
    from addon.team.keys import Keys
    from translators.dialect import Settings


@dataclass(slots=True, eq=False)
class Services:
    flows: Flows
    """The context of each flow in flight (addon/serve/flow.py)."""
    clients: Keys
    """Who each request is (`gateway_clients`, addon/team/keys.py)."""
    budgets: Budgets
    """What a client may spend, and what it spent (addon/team/budgets.py)."""
    storage: Storage
    """The response store and its thread (addon/state/storage.py)."""
    turns: Turns
    """Stored turns: `previous_response_id`, conversations, compaction (addon/state/turns.py)."""
    router: Router = field(default_factory=lambda: Router(routes=()))
    """The routes, built again by each `configure` (addon/gateway.py)."""
    capabilities: Capabilities = field(default_factory=Capabilities)
    """What each route model accepts (the vendor's models endpoint, else the shipped table)."""
    settings: dict[str, Settings] = field(default_factory=dict)
    """Each dialect's own options and environment variables (addon/routes/plugins.py)."""
    upstream: UpstreamLeg = field(default_factory=UpstreamLeg)
    """The gateway's own upstream leg: its client, runner, loopback server and pools
    (addon/upstream/service.py)."""
    items: ItemCaches = field(default_factory=ItemCaches)
    """Each client's decoded request items, which its next turns reuse (addon/serve/ir_cache.py)."""
