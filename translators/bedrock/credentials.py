"""The AWS credential chain: Bedrock's credential source (`Signing.source`) when a route names no
Bedrock API key. Env keys, shared profile, SSO, container or instance role, found through one
process-wide botocore session (docs/bedrock.md "Endpoint, signing and API keys").

The one module of the package that reads the environment and may call the network (an instance
role): the declared I/O edge a dialect may supply (docs/design.md "Pure translators"). Nothing in
`translators/` calls it; the addon does, off its event loop, and hands the result to the pure
signer (`auth.sign_request`) as `ToSign.identity`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import botocore.session


@dataclass(frozen=True, slots=True)
class Identity:
    credentials: Any
    """Frozen credentials (`access_key`, `secret_key`, `token`), or None: none found."""
    region: str | None
    """The AWS profile's configured region (for a host that names none)."""


@functools.cache
def session() -> botocore.session.Session:
    """One session per process: it caches (and refreshes) what the chain finds, so a role or SSO
    profile is not assumed again for every request. `session.cache_clear()` forgets it."""
    return botocore.session.Session()


def identity() -> Identity:
    found = session().get_credentials()
    if found is not None and hasattr(found, "get_frozen_credentials"):  # one consistent key triple
        found = found.get_frozen_credentials()
    return Identity(found, session().get_config_variable("region"))


@dataclass(frozen=True, slots=True)
class AwsChain:
    """The chain as a `CredentialSource` (translators/dialect.py)."""

    name: str = "aws"

    def find(self) -> Identity:
        return identity()


SOURCE = AwsChain()
