"""Where work runs and its bounds: the event loop, threads, worker processes, limits."""
