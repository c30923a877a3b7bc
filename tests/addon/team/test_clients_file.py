"""addon/team/clients_file.py: the clients file read and checked, and the `clients` command that
writes it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from addon.team import clients_file, keys
from addon.team.clients_file import Client, ClientsError

ANA = clients_file.KEY_PREFIX + "ana-unit-key-0123456789"
BOB = clients_file.KEY_PREFIX + "bob-unit-key-0123456789"


def test_a_file_reads_into_clients_with_their_limits() -> None:
    text = ('[[client]]\nname = "ana"\nkey_sha256 = "' + "A" * 64 + '"\nmodels = ["gpt-5*"]\n'
            'tokens_per_day = 1000\nrequests_per_minute = 6\n')
    (ana,) = clients_file.parse(text)
    assert ana == Client("ana", "a" * 64, ("gpt-5*",), 1000, 6)
    assert ana.allows("gpt-5.5") and not ana.allows("o3")


@pytest.mark.parametrize(("text", "said"), [
    ('[[client]]\nname = "ana"\n', "key_sha256 must be 64 hex digits"),
    ('[[client]]\nname = "ana"\nkey_sha256 = "' + "a" * 64 + '"\nkey = "x"\n', "unknown field(s) key"),
    ('[[client]]\nname = "a b"\nkey_sha256 = "' + "a" * 64 + '"\n', "name must be"),
    ('[[client]]\nname = "ana"\nkey_sha256 = "' + "a" * 64 + '"\ntokens_per_day = -1\n', "tokens_per_day"),
    ('[[client]]\nname = "ana"\nkey_sha256 = "' + "a" * 64 + '"\nmodels = "gpt-5*"\n', "models must be"),
    ('[[client]]\nname = "ana"\nkey_sha256 = "' + "a" * 64 + '"\n[[client]]\nname = "ana"\n'
     'key_sha256 = "' + "b" * 64 + '"\n', "used twice"),
    ('[[client]]\nname = "ana"\nkey_sha256 = "' + "a" * 64 + '"\n[[client]]\nname = "bob"\n'
     'key_sha256 = "' + "a" * 64 + '"\n', "same key_sha256"),
    ("[route]\n", "write [[client]] tables only"),
    ("[[client]\n", "is not TOML"),
])
def test_a_file_that_cannot_be_used_is_refused_with_what_to_change(text: str, said: str) -> None:
    with pytest.raises(ClientsError, match=said.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        clients_file.parse(text)


def test_add_prints_a_key_once_and_keeps_its_hash_only(tmp_path: Path) -> None:
    path = tmp_path / "clients.toml"
    out = io.StringIO()
    assert clients_file.main(["--file", str(path), "add", "ana", "--models", "gpt-5*,o4*",
                         "--tokens-per-day", "500"], out=out) == 0
    key = out.getvalue().strip().splitlines()[-1]
    assert key.startswith(clients_file.KEY_PREFIX)
    assert key not in path.read_text()
    (ana,) = clients_file.load(str(path))
    assert keys.match((ana,), key) == ana
    assert (ana.models, ana.tokens_per_day) == (("gpt-5*", "o4*"), 500)
    assert path.stat().st_mode & 0o777 == 0o600


def test_rotate_gives_a_new_key_and_keeps_the_limits_and_remove_revokes(tmp_path: Path) -> None:
    path = tmp_path / "clients.toml"
    first, second, listed = io.StringIO(), io.StringIO(), io.StringIO()
    clients_file.main(["--file", str(path), "add", "ana", "--requests-per-minute", "5"], out=first)
    clients_file.main(["--file", str(path), "add", "bob"], out=io.StringIO())
    assert clients_file.main(["--file", str(path), "add", "ana"], out=io.StringIO()) == 2
    assert clients_file.main(["--file", str(path), "rotate", "ana"], out=second) == 0
    old, new = first.getvalue().split()[-1], second.getvalue().split()[-1]
    known = clients_file.load(str(path))
    assert keys.match(known, old) is None and keys.match(known, new).requests_per_minute == 5
    assert clients_file.main(["--file", str(path), "remove", "ana"], out=io.StringIO()) == 0
    assert [c.name for c in clients_file.load(str(path))] == ["bob"]
    assert clients_file.main(["--file", str(path), "list"], out=listed) == 0
    assert listed.getvalue().startswith("bob\t")
    assert clients_file.main(["--file", str(path), "remove", "ana"], out=io.StringIO()) == 2


def test_the_file_may_be_named_after_the_command_as_the_docs_write_it(tmp_path: Path) -> None:
    path = tmp_path / "clients.toml"
    assert clients_file.main(["add", "ana", "--file", str(path)], out=io.StringIO()) == 0
    assert clients_file.main(["rotate", "ana", "--file", str(path)], out=io.StringIO()) == 0
    listed = io.StringIO()
    assert clients_file.main(["list", "--file", str(path)], out=listed) == 0
    assert "ana" in listed.getvalue()
    assert clients_file.main(["remove", "ana", "--file", str(path)], out=io.StringIO()) == 0
    assert not clients_file.load(str(path))



def test_usd_budgets_are_read_written_and_changed_by_set(tmp_path: Path) -> None:
    path = tmp_path / "clients.toml"
    out = io.StringIO()
    assert clients_file.main(["--file", str(path), "add", "ana", "--usd-per-day", "2.5"], out=out) == 0
    (ana,) = clients_file.load(str(path))
    assert (ana.usd_per_day, ana.usd_per_month, ana.limited) == (2.5, 0.0, True)
    assert clients_file.main(["--file", str(path), "set", "ana", "--usd-per-month", "40",
                              "--tokens-per-day", "1000", "--models", "gpt-5*"], out=out) == 0
    (changed,) = clients_file.load(str(path))
    assert changed == Client("ana", ana.key_sha256, ("gpt-5*",), 1000, 0, 2.5, 40.0)  # the key stays
    assert clients_file.main(["--file", str(path), "set", "ana", "--usd-per-day", "-1"], out=out) == 2
    assert clients_file.main(["--file", str(path), "set", "bob", "--usd-per-day", "1"], out=out) == 2
    listed = io.StringIO()
    clients_file.main(["--file", str(path), "list"], out=listed)
    assert "usd_per_day=2.5\tusd_per_month=40.0" in listed.getvalue()
    with pytest.raises(ClientsError, match="usd_per_month"):
        clients_file.parse('[[client]]\nname = "ana"\nkey_sha256 = "' + "a" * 64 + '"\nusd_per_month = "5"\n')
