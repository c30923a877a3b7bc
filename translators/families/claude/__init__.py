"""The Claude model family, whichever API carries it (Anthropic Messages, Bedrock Converse):

- `models`: the shipped profiles (what each Claude model takes), read by Claude id;
- `thinking`: what a Responses `reasoning`, sampling and `max_output_tokens` become on a model;
- `structured`: a JSON schema cut to what Claude's structured output enforces;
- `turns`: IR history as alternating user/assistant turns, with Claude's rule for thinking in a
  tool loop.
"""
