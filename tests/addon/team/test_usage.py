"""addon/team/usage.py: the usage report's command."""

from __future__ import annotations

from pathlib import Path

import pytest

from addon.team import usage


def test_a_store_path_that_does_not_exist_is_an_error_and_no_new_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "gateway-store.sqlite"
    assert usage.main([str(missing)]) == 1
    assert "no store at" in capsys.readouterr().err
    assert not missing.exists()
