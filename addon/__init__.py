"""mitmproxy glue for the translators: options, matching, re-targeting, auth, streaming, metadata."""
