"""Serving a flow: the pipeline every request takes, its context, the proxy's own answers, the
client side, the WebSocket."""
