"""OpenAI Responses: the client's dialect (decoded to the IR) and a passthrough target."""
