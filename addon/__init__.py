"""The mitmproxy side of the gateway, in wings: serve (one flow), upstream, routes, state, team,
observe, work, patches; gateway.py is what mitmproxy loads (docs/architecture.md)."""
