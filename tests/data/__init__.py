"""Where the recorded data lives (see README.md beside this file)."""

from pathlib import Path

DATA = Path(__file__).parent
CODEX = DATA / "codex"
