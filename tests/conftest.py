"""The whole suite sees one registry: the shipped dialects and the toy one (tests/support/toy_dialect.py),
registered here the way any dialect outside the package is, so every suite that takes its list
from the registry runs over it too."""

from tests.support import toy_dialect

toy_dialect.register()
