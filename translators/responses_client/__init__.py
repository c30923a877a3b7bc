"""The OpenAI Responses client dialect (Codex, the openai SDKs): its request decoded to the IR, the
IR's events written as its stream, its echo and compaction answers."""
