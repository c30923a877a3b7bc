"""`translators.report`, the name plugins import `Report` by (docs/adding-a-dialect.md): it only
re-exports `translators/core/report.py`. The package's own modules import the core module."""

from translators.core.report import COSMETIC, Kind, Report, kind_of

__all__ = ["COSMETIC", "Kind", "Report", "kind_of"]
