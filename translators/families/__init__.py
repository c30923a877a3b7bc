"""Model families: what a model family needs whichever dialect carries it.

A dialect folder (`translators/<name>/`) knows one wire; a family folder knows one vendor's models,
served over several wires: `claude/` (profiles, thinking and effort, structured output, the
turn rules), used by the Anthropic Messages and Bedrock Converse dialects alike. A family imports
no dialect; dialects import the family (docs/design.md "Layout").
"""
