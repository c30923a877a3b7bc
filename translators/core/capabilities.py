"""What an upstream model accepts, whoever said so: the vendor's models endpoint or the shipped
table of the model's dialect (docs/models.md).

One vendor-neutral record, so the encoders ask one question ("does this model take adaptive
thinking, which effort words, a JSON schema?") and the addon can serve the same facts to Codex
(the context window). The record is pure data; fetching it is the addon's business.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

Source = Literal["vendor", "table", "guess"]
"""`vendor`: read from the vendor's models endpoint; `table`: the shipped table knows the model;
`guess`: neither, the dialect's default for a model it does not know."""

Lifecycle = Literal["active", "deprecated", "retired"]


@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    model: str
    source: Source = "guess"
    context_window: int | None = None
    """Input tokens the model takes (Anthropic `max_input_tokens`, Gemini `inputTokenLimit`)."""
    max_output_tokens: int | None = None
    """The largest `max_tokens` the model takes."""
    thinking: frozenset[str] = frozenset()
    """Thinking types a request may name: `enabled` (a budget), `adaptive`, `disabled`."""
    effort: frozenset[str] = frozenset()
    """Effort words the model takes (`low`, `medium`, `high`, `xhigh`, `max`); empty: no effort knob."""
    structured_output: bool = False
    """Takes a JSON schema the answer must follow."""
    image_input: bool = True
    pdf_input: bool = False
    """Reads documents: PDFs and the other files its dialect takes (`input_file` parts; each
    dialect's page, "Files"). Without it every file is reported dropped."""
    web_search: bool = False
    """Has the vendor's own server-side web search."""
    one_sampling_knob: bool = False
    """Refuses `temperature` and `top_p` in the same request (Claude Opus 4.1 and later)."""
    lifecycle: Lifecycle = "active"
    retires: str | None = None
    """The retirement date the vendor announced (ISO date), if any."""
    extra: dict[str, str] = field(default_factory=dict)
    """Per-dialect facts without a common name (e.g. a Gemini thinking scheme); free-form."""

    def with_source(self, source: Source) -> ModelCapabilities:
        return replace(self, source=source)

    @property
    def thinks(self) -> bool:
        return bool(self.thinking & {"enabled", "adaptive"})

    def lifecycle_note(self) -> str | None:
        """What a flow should say about a model on its way out, or None for an active one."""
        if self.lifecycle == "active":
            return None
        when = f" (retires {self.retires})" if self.retires and self.lifecycle == "deprecated" else ""
        return f"model {self.model} is {self.lifecycle}{when}: map the route to a current model"
