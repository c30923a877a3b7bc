"""Serving a flow: which requests the gateway takes on, their context, the pipeline every request
takes (its request half, the one translate step, its answer half, the seal), the proxy's own
answers, the client side, the WebSocket."""
