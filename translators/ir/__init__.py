"""The canonical form every dialect decodes to and encodes from."""

from translators.ir.events import (
    Event,
    Failed,
    Finished,
    Note,
    ReasoningDelta,
    ReasoningDone,
    Started,
    TextDelta,
    TextDone,
    ToolCallDelta,
    ToolCallDone,
    ToolCallStarted,
    Unknown,
    Usage,
)
from translators.ir.request import (
    CustomTool,
    FunctionTool,
    HostedTool,
    Image,
    Item,
    LocalShellTool,
    Message,
    Namespace,
    Part,
    Reasoning,
    ReasoningConfig,
    Request,
    Text,
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSearchTool,
    VendorState,
)

__all__ = [
    "CustomTool", "Event", "Failed", "Finished", "FunctionTool", "HostedTool", "Image", "Item",
    "LocalShellTool", "Message", "Namespace", "Note", "Part", "Reasoning", "ReasoningConfig",
    "ReasoningDelta", "ReasoningDone", "Request", "Started", "Text", "TextDelta", "TextDone", "Tool",
    "ToolCall", "ToolCallDelta", "ToolCallDone", "ToolCallStarted", "ToolChoice", "ToolResult",
    "ToolSearchTool", "Unknown", "Usage", "VendorState",
]
