"""The last step of every flow the gateway took on, however it ended: answered by the upstream,
answered by the proxy itself, counted, or failed (docs/options.md "Credentials follow the route").

No credential stays in what is saved or shown (the request headers redacted, every value sent
scrubbed from the metadata, the comment and a whole answer), the capture is written when asked,
the flow is described for mitmweb and the console, and it is marked sealed: its context's stage
(addon/serve/flow.py) while it is live, `flowinfo.SEALED` once saved, so a loaded flow is never
answered twice.
"""

from __future__ import annotations

from pathlib import Path

from mitmproxy import ctx, http

from addon.observe import flowinfo, recording
from addon.serve.flow import Stage, context_of
from addon.upstream import auth, credentials


def seal(flow: http.HTTPFlow, *, capture: bool = False) -> None:
    """`capture`: an answered flow with a translation writes its capture folder
    (`gateway_capture_dir`, addon/observe/recording.py); a failed or refused one does not."""
    auth.redact_request(flow.request.headers)
    credentials.scrub_flow(flow)
    if capture and ctx.options.gateway_capture_dir:
        recording.save(Path(ctx.options.gateway_capture_dir), flow)
    if flowinfo.KEY in flow.metadata:
        flowinfo.describe(flow)
    flow.metadata[flowinfo.SEALED] = True
    if (fc := context_of(flow)) is not None:
        fc.at(Stage.SEALED)
