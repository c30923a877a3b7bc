"""Routes: which upstream serves a model, the dialects' settings, model capabilities, Codex's catalog."""
