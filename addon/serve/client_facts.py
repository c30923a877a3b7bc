"""Facts about the client's side, in one place: where Codex (and the openai SDK) sends its
Responses requests and fetches its model catalog, and which of its headers are its own
credentials (docs/codex.md). These name OpenAI's hosts because the client talks to them, not
because an upstream is OpenAI: upstream facts live in each dialect (translators/<name>/)."""

from __future__ import annotations

from translators import client_dialects

DEFAULT_MATCH = ("api.openai.com/v1/responses", "chatgpt.com/backend-api/codex/responses",
                 *client_dialects.default_match())
"""Where Codex sends its turns: an API key to api.openai.com, a ChatGPT login to chatgpt.com; then
the paths of the other client dialects on their own hosts (Claude Code's `/v1/messages`,
addon/serve/client_side.py; in reverse mode those match on any host)."""
RESPONSES_URL = "https://api.openai.com/v1/responses"
"""A client request's URL when the gateway makes one up (addon/observe/replay.py)."""
CATALOG_HOST = "chatgpt.com"
CATALOG_PATH = "/backend-api/codex/models"
"""Where Codex signed in with ChatGPT fetches its model catalog (addon/routes/catalog.py)."""
CREDENTIALS = ("authorization", "cookie", "chatgpt-account-id")
"""What identifies the client's own OpenAI or ChatGPT account."""
KEEP = ("user-agent",)
"""The only client headers a translated request keeps; everything else (authorization, cookies,
chatgpt-account-id, openai-*, x-codex-*, session ids) stays behind."""
