"""Bytes and framings shared by every dialect: JSON at the wire edge, `text/event-stream`, the
decoders' failure convention, a whole body where a stream was asked for, the gateway's own payloads
in replayed fields, upstream error terms and response headers, the client's terminal failure
event, and the text the mitmweb views show (docs/architecture.md "Where things are")."""
