"""translators/ is pure (docs/design.md "Pure translators"): importing every module of the package
reads no environment variable and opens no socket, and no module names the tools that would, but
for one declared edge: the credential source a signing dialect brings (`Signing.source`), which
only the addon calls."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import translators
from translators import dialect as dialects

ROOT = Path(translators.__file__).parent
_IMPORT_ALL = """
import os, socket, pkgutil, importlib, sys
import translators
OWN = os.path.dirname(translators.__file__)
class Refused(Exception):
    pass
def ours():
    # the caller of the environment, two frames up: refused when it is the package's own code
    return sys._getframe(2).f_code.co_filename.startswith(OWN)
class Environ(type(os.environ)):
    def __getitem__(self, key):
        if ours(): raise Refused(f"os.environ[{key!r}]")
        return super().__getitem__(key)
    def get(self, key, default=None):
        if ours(): raise Refused(f"os.environ.get({key!r})")
        return super().get(key, default)
os.environ.__class__ = Environ
def no_socket(*a, **k): raise Refused("socket")
socket.socket.connect = no_socket
socket.socket.connect_ex = no_socket
socket.create_connection = no_socket
socket.getaddrinfo = no_socket
names = [m.name for m in pkgutil.walk_packages(translators.__path__, "translators.")
         if not m.name.endswith("__main__")]  # the command line, which runs on import
for name in names:
    importlib.import_module(name)
print(len(names))
"""
FORBIDDEN = re.compile(r"\bos\.environ\b|\bos\.getenv\b|botocore\.session|"
                       r"^\s*(?:import|from) (?:socket|urllib\.request|http\.client|httpx|requests)\b",
                       re.MULTILINE)


def test_every_module_imports_with_the_environment_and_sockets_refused() -> None:
    done = subprocess.run([sys.executable, "-c", _IMPORT_ALL], capture_output=True, text=True,
                          cwd=ROOT.parent, env={**os.environ, "PYTHONPATH": str(ROOT.parent)}, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    # every module but the package itself and its command line (__main__)
    modules = [p for p in ROOT.rglob("*.py") if p not in (ROOT / "__init__.py", ROOT / "__main__.py")]
    assert int(done.stdout.split()[-1]) == len(modules)


CREDENTIAL_SOURCES = {"bedrock/credentials.py"}
"""The modules allowed to read the environment or the network: each is a shipped dialect's
credential source (`test_the_allowance_is_exactly_the_shipped_credential_sources`)."""


def test_no_module_names_the_environment_the_network_or_the_aws_chain() -> None:
    found = {str(path.relative_to(ROOT)): FORBIDDEN.findall(path.read_text())
             for path in ROOT.rglob("*.py") if FORBIDDEN.search(path.read_text())}
    assert found.keys() - CREDENTIAL_SOURCES == set()


def test_the_allowance_is_exactly_the_shipped_credential_sources() -> None:
    """Not a blanket exemption: a module is allowed I/O only as the credential source its dialect
    declares (and it does name the I/O it is allowed, or the allowance is stale)."""
    sources = {type(d.signing.source).__module__ for d in map(dialects.get, dialects.BUILTIN) if d.signing}
    declared = {str(Path(sys.modules[name].__file__ or "").relative_to(ROOT)) for name in sources}
    assert declared == CREDENTIAL_SOURCES
    assert all(FORBIDDEN.search((ROOT / path).read_text()) for path in CREDENTIAL_SOURCES)


def test_no_translator_asks_a_credential_source() -> None:
    """The source is asked by the addon only (addon/upstream/auth.py); a translator gets what it found
    (`ToSign.identity`)."""
    asks = re.compile(r"\bsource\.find\(|\bidentity\(\)")
    callers = {str(path.relative_to(ROOT)) for path in ROOT.rglob("*.py")
               if asks.search(path.read_text()) and str(path.relative_to(ROOT)) not in CREDENTIAL_SOURCES}
    assert callers == set()


def test_the_name_check_finds_what_the_old_signer_did() -> None:
    """Not vacuous: the signer once read its key and its credentials itself."""
    assert FORBIDDEN.search("import botocore.session\nsession = botocore.session.Session()")
    assert FORBIDDEN.search("token = os.environ.get('AWS_BEARER_TOKEN_BEDROCK')")
    assert FORBIDDEN.search("from urllib.request import urlopen")
