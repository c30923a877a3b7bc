"""The Responses WebSocket transport (docs/websocket.md): `ENDPOINT`, the addon serving it."""

from addon.serve.websocket.endpoint import Endpoint

ENDPOINT = Endpoint()
"""The one endpoint: the gateway hands it upgrades (`take`), mitmproxy runs it as an addon."""
