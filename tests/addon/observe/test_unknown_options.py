"""An unknown `gateway_*` option stops mitmdump and mitmweb at start-up with the nearest known name
(addon/observe/unknown_options.py, docs/console.md "Unknown options"): through the real programs,
with the name given by `--set` and by mitmproxy's `config.yaml`; a `$GATEWAY_DIALECTS` dialect's own
option is known."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest
from mitmproxy import exceptions, options, optmanager

from addon.observe import unknown_options
from tests.support.mitmdump import GATEWAY, MITMDUMP, ROOT, MitmDump

WAIT = 60.0
TYPO = "unknown option gateway_upstrem: did you mean gateway_upstream?"
PLUGIN = '''
import dataclasses

from tests.support import toy_dialect
from translators.dialect import Option

DIALECT = dataclasses.replace(toy_dialect.DIALECT, options=(
    Option("gateway_lines_flavour", str, "plain", "The toy dialect's own option."),))
'''
"""A dialect module `$GATEWAY_DIALECTS` names, declaring an option of its own."""


def start(program: Path, confdir: Path, *args: str,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The program with the gateway, on loopback, run until it exits (a start-up that fails) or
    `WAIT` passes (one that does not: the test fails on the timeout)."""
    command = [str(program), "--listen-host", "127.0.0.1", "-p", "0", "--set", f"confdir={confdir}",
               "-s", str(GATEWAY), *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=WAIT,
                          env={**os.environ, **(env or {})})


def assert_stopped_with(done: subprocess.CompletedProcess[str], program: str, says: str) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line == f"{program}: {says}"
    assert "Traceback" not in done.stdout + done.stderr
    assert "listening" not in done.stdout + done.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def plugin_env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "flavoured_lines.py").write_text(PLUGIN)
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    return {"GATEWAY_DIALECTS": "flavoured_lines", "PYTHONPATH": path}


# -- through the real programs --------------------------------------------------------------------
def test_a_misspelled_set_option_stops_mitmdump_naming_the_nearest(tmp_path: Path) -> None:
    done = start(MITMDUMP, tmp_path / "conf", "--set", "gateway_upstrem=chat")
    assert_stopped_with(done, "mitmdump", TYPO)


def test_a_misspelled_option_in_config_yaml_stops_mitmdump(tmp_path: Path) -> None:
    confdir = tmp_path / "conf"
    confdir.mkdir()
    (confdir / "config.yaml").write_text("gateway_upstrem: chat\n")
    done = start(MITMDUMP, confdir)
    assert_stopped_with(done, "mitmdump", TYPO)


def test_a_misspelled_set_option_stops_mitmweb(tmp_path: Path) -> None:
    done = start(MITMDUMP.parent / "mitmweb", tmp_path / "conf", "--web-host", "127.0.0.1",
                 "--web-port", str(free_port()), "--no-web-open-browser", "--set", "gateway_upstrem=chat")
    assert_stopped_with(done, "mitmweb", TYPO)


def test_every_unknown_name_is_on_the_one_line(tmp_path: Path) -> None:
    done = start(MITMDUMP, tmp_path / "conf", "--set", "gateway_upstrem=chat",
                 "--set", "gateway_frobnicate=1")
    assert_stopped_with(done, "mitmdump", "unknown option gateway_frobnicate: no gateway option has a "
                        f"name near it (docs/options.md lists them); {TYPO}")


def test_an_option_a_plugin_dialect_declares_is_known(tmp_path: Path) -> None:
    env = plugin_env(tmp_path)
    with MitmDump(tmp_path / "conf", options={"gateway_lines_flavour": "salty"}, env=env) as proxy:
        assert proxy.returncode is None
    done = start(MITMDUMP, tmp_path / "conf2", "--set", "gateway_lines_flavor=salty", env=env)
    assert_stopped_with(done, "mitmdump",
                        "unknown option gateway_lines_flavor: did you mean gateway_lines_flavour?")


def test_without_the_plugin_its_option_is_unknown(tmp_path: Path) -> None:
    done = start(MITMDUMP, tmp_path / "conf", "--set", "gateway_lines_flavour=salty")
    assert done.returncode == 1
    assert "unknown option gateway_lines_flavour" in done.stderr


# -- what it rests on, and the wording ----------------------------------------------------------------
def test_mitmproxy_still_keeps_unknown_names_in_deferred(tmp_path: Path) -> None:
    """The check reads `options.deferred`, where `--set` and `config.yaml` leave a name no addon
    declared: if a mitmproxy release stops keeping them there, this fails rather than the check
    going quiet."""
    opts = options.Options()
    opts.set("gateway_upstrem=chat", defer=True)
    (tmp_path / "config.yaml").write_text("gateway_modle: x\n")
    optmanager.load_paths(opts, str(tmp_path / "config.yaml"))
    assert {"gateway_upstrem", "gateway_modle"} <= set(opts.deferred)


def test_other_addons_names_and_known_names_pass() -> None:
    known = {"gateway_upstream", "gateway_model", "flow_detail"}
    unknown_options.check({"gateway_model": ["x"], "someone_elses": ["y"]}, known)
    with pytest.raises(exceptions.OptionsError, match=r"^unknown option gateway_modle: did you mean "
                                                       r"gateway_model\?$"):
        unknown_options.check({"gateway_modle": ["x"], "someone_elses": ["y"]}, known)
