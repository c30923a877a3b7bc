"""Images a tool returned, as each upstream's request carries them, and a small PNG for a tool to
return (docs/claude-code.md "Images a tool returns"): Anthropic's `tool_result` image block, Gemini's
`functionResponse.parts` `inlineData`, Bedrock's `toolResult` `image` block, and on Chat (whose `tool`
messages take text only) an `image_url` part in the user message after the tool messages."""

from __future__ import annotations

import base64
import itertools
import struct
import zlib
from typing import Any


def png(width: int = 16, height: int = 16) -> bytes:
    """A valid RGB PNG, a red-to-blue gradient (zlib-compressed scanlines, CRCs written)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = b"".join(b"\x00" + bytes(c for x in range(width) for c in (255 - x * 15, 0, x * 15))
                    for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def tool_images(dialect: str, body: Any) -> list[tuple[str, bytes]]:
    """(media type, decoded bytes) of every image a tool's result brought into this request."""
    if not isinstance(body, dict):
        return []
    found: list[tuple[str, str]] = []
    if dialect == "anthropic":
        for message in body.get("messages") or []:
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                    found += [(b["source"]["media_type"], b["source"]["data"]) for b in block["content"]
                              if b.get("type") == "image" and b["source"].get("type") == "base64"]
    elif dialect == "gemini":
        for content in body.get("contents") or []:
            for part in content.get("parts") or []:
                response = part.get("functionResponse") or {}
                found += [(p["inlineData"]["mimeType"], p["inlineData"]["data"])
                          for p in response.get("parts") or [] if "inlineData" in p]
    elif dialect == "bedrock":
        for message in body.get("messages") or []:
            for block in message.get("content") or []:
                for item in (block.get("toolResult") or {}).get("content") or []:
                    if "image" in item:
                        found.append((f"image/{item['image']['format']}", item["image"]["source"]["bytes"]))
    elif dialect == "chat":
        messages = body.get("messages") or []
        for before, message in itertools.pairwise(messages):
            if before.get("role") == "tool" and message.get("role") == "user" and isinstance(
                    message.get("content"), list):
                for part in message["content"]:
                    url = (part.get("image_url") or {}).get("url", "")
                    if part.get("type") == "image_url" and url.startswith("data:"):
                        head, _, data = url.partition(",")
                        found.append((head[5:].split(";")[0], data))
    return [(media, base64.b64decode(data)) for media, data in found]


def is_image(data: bytes) -> bool:
    """PNG, JPEG or WebP bytes (a client may re-encode what the tool read)."""
    return data.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")) or data[8:12] == b"WEBP"
