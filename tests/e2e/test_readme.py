"""The README's "Codex in five minutes" runs as written: each setup's two blocks (the gateway, then
Codex), parsed from README.md, run with the real Codex CLI 0.169.0 and Codex's default model,
against a local fake of the block's upstream.

What the test changes, and only that: the gateway listens on a free port instead of 8080 (every
`127.0.0.1:8080` of the Codex block follows), the route's base URL is the fake's (with
`gateway_key_env` naming the block's exported variable: a local host gets only a named key), the
exported key is a test value, `$HOME` is a private folder (mitmproxy's CA is written to its
`.mitmproxy`, where the README's path looks), and Codex's start-up calls to the internet go to a
loopback black hole, as in the other Codex tests (tests/support/codex_cli.py). Codex runs with
`--json` so its answer can be read. The fake answers the vendor's models endpoint as the vendor
does (the gateway asks it for the routed model's capabilities), and a passive script
(tests/support/gateway_lines.py) copies the gateway's own log lines to a file, so the test tells
them from mitmdump's when it compares the output with docs/console.md "What each README setup
prints" and with the README's sample.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.targets import TARGETS, Target, is_turn
from tests.support.codex_cli import (
    REPO_ROOT,
    CodexRun,
    _base_env,
    _write_config,
    codex_binary,
    codex_mitmdump,
)
from tests.support.fake_upstream import FakeUpstream, Reply, empty_reply, json_reply, refuse_everything
from tests.support.mitmdump import GATEWAY, MitmDump
from tests.support.models_endpoint import claude_model_info, gemini_model

pytestmark = [pytest.mark.codex, pytest.mark.timeout(420)]

README = REPO_ROOT / "README.md"
SECTION = "## Codex in five minutes"
README_PORT = "127.0.0.1:8080"
CODEX_DEFAULT_MODEL = "gpt-6.1-sol"
"""What Codex 0.169 sends when its config names no model (docs/codex.md "Default model")."""
ANSWER = "hi from the README's upstream"
LINES_SCRIPT = REPO_ROOT / "tests" / "support" / "gateway_lines.py"
CONSOLE_DOC = REPO_ROOT / "docs" / "console.md"
CONSOLE_SECTION = "## What each README setup prints"
README_SAMPLE = r"From the\s+first setup"
"""Where the README's sample of the console starts."""
KEY = "readme-test-key-0123456789"
NOISE = ("Error in WebSocket connection", "ABNORMAL_CLOSURE", "[replay]", "server listening on",
         "connection open", "/<ticket>")
"""What the gateway's WebSocket end printed of itself while it was a loopback server mitmproxy relayed
to (issue 38): never printed now that the socket is served where mitmproxy hands it over
(docs/websocket.md "Where the socket is served")."""


@dataclass(frozen=True)
class Setup:
    title: str
    gateway: str
    """The gateway block: `export VAR=...` lines and one `./run mitmdump ...` command."""
    codex: str
    """The Codex block: `VAR=value ... codex exec ...`."""

    def __str__(self) -> str:
        return self.title


def commands(block: str) -> list[str]:
    """The block's commands, continuation lines joined, comments left out."""
    joined = re.sub(r"\\\n\s*", " ", block)
    lines = [line.strip() for line in joined.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def readme_setups(text: str) -> list[Setup]:
    """Each numbered setup of the section: its title and its two `sh` blocks, in order."""
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    setups = []
    for part in re.split(r"\n\*\*\d\. ", section)[1:]:
        title = part.split("**", 1)[0]
        blocks = re.findall(r"```sh\n(.*?)```", part, flags=re.S)
        gateway = [b for b in blocks if "./run mitmdump" in b]
        codex = [b for b in blocks if "codex exec" in b]
        assert len(gateway) == 1 and len(codex) == 1, f"setup {title!r}: one gateway and one Codex block"
        setups.append(Setup(title, gateway[0], codex[0]))
    return setups


SETUPS = readme_setups(README.read_text())


def test_the_readme_shows_three_setups_each_catching_every_model() -> None:
    assert [s.title.split(" (")[0] for s in SETUPS] == [
        "Regular proxy mode", "Reverse mode with `openai_base_url`", "A custom provider"]
    for setup in SETUPS:
        options = gateway_command(setup)[1]
        pairs = [p.strip() for p in options["gateway_model"].split(",")]
        assert pairs[-1].startswith("*="), setup  # `*=` last: Codex's default model and any other


# -- the gateway block ------------------------------------------------------------------------------
def gateway_command(setup: Setup) -> tuple[list[str], dict[str, str], list[str]]:
    """(mitmdump arguments other than --set, --set options, exported variable names)."""
    exported = []
    command = None
    for line in commands(setup.gateway):
        if line.startswith("export "):
            exported.append(line.removeprefix("export ").split("=", 1)[0])
        elif line.startswith("./run mitmdump"):
            command = shlex.split(line)[2:]
    assert command is not None, setup.gateway
    args: list[str] = []
    options: dict[str, str] = {}
    it = iter(command)
    for arg in it:
        if arg == "--set":
            name, value = next(it).split("=", 1)
            options[name] = value
        else:
            args.append(arg)
    return args, options, exported


def start_gateway(setup: Setup, upstream: FakeUpstream, home: Path) -> MitmDump:
    args, options, exported = gateway_command(setup)
    assert len(exported) == 1, f"{setup}: one key variable exported"
    kept: list[str] = []
    it = iter(args)
    for arg in it:
        if arg == "-p":
            assert next(it) == README_PORT.rsplit(":", 1)[1]  # the port the Codex block names
        elif arg == "-s":
            assert next(it) == "addon/gateway.py"
            kept += ["-s", str(GATEWAY)]
        else:
            kept.append(arg)
    mode = None
    if "--mode" in kept:
        at = kept.index("--mode")
        mode = kept[at + 1]
        del kept[at:at + 2]
    assert "gateway_base_url" not in options, "the examples use each upstream's public URL"
    options |= {"gateway_base_url": upstream.url, "gateway_key_env": exported[0]}
    kept += ["-s", str(LINES_SCRIPT)]  # copies the gateway's own lines to a file (docs/console.md)
    return codex_mitmdump(home / ".mitmproxy", mode=mode, scripts=(), args=kept, options=options,
                          env={exported[0]: KEY, "GATEWAY_LINES": str(home / "gateway-lines.txt")})


# -- the Codex block --------------------------------------------------------------------------------
def codex_command(setup: Setup, port: int) -> tuple[dict[str, str], list[str]]:
    """(the variables the block sets, the `codex exec` arguments), the README's port replaced."""
    (line,) = commands(setup.codex)
    words = shlex.split(line.replace(README_PORT, f"127.0.0.1:{port}"))
    env = {}
    while "=" in words[0] and not words[0].startswith("-"):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    assert words[:2] == ["codex", "exec"], line
    return env, words[2:]


def run_codex(setup: Setup, mitm: MitmDump, home: Path, black_hole: FakeUpstream, work: Path) -> CodexRun:
    codex_home = home / ".codex"
    _write_config(codex_home, {"check_for_update_on_startup": False}, {"analytics": {"enabled": False}})
    given, args = codex_command(setup, mitm.port)
    proxy = given.get("HTTPS_PROXY")
    env = _base_env(codex_home, proxy or black_hole.url, None if proxy else "127.0.0.1,localhost")
    env["HOME"] = str(home)  # the README's $HOME/.mitmproxy path
    env |= {name: os.path.expandvars(value.replace("$HOME", str(home))) for name, value in given.items()}
    command = [str(codex_binary()), "exec", "--json", "--skip-git-repo-check", *args]
    done = subprocess.run(command, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=240)
    return CodexRun(done.returncode, done.stdout, done.stderr)


# -- the run ----------------------------------------------------------------------------------------
@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    with FakeUpstream(refuse_everything) as hole:
        yield hole


def answering(target: Target) -> Any:
    def answer(body: Any, _headers: Mapping[str, str], path: str) -> Reply:
        if is_turn(body):
            return target.text(ANSWER, 100)
        # the vendor's models endpoint, as the gateway asks it (gateway_capabilities=vendor)
        model = path.split("?", 1)[0].rsplit("/", 1)[-1]
        if target.dialect == "anthropic" and path.startswith("/v1/models/"):
            return json_reply(200, claude_model_info(model))
        if target.dialect == "gemini" and path.startswith("/v1beta/models/"):
            return json_reply(200, gemini_model(model))
        return empty_reply(404)
    return answer


def target_of(setup: Setup) -> Target:
    dialect = gateway_command(setup)[1]["gateway_upstream"]
    return next(t for t in TARGETS if t.dialect == dialect)


def routed_model(setup: Setup, client_model: str) -> str:
    for pair in gateway_command(setup)[1]["gateway_model"].split(","):
        pattern, model = pair.split("=", 1)
        if fnmatch.fnmatchcase(client_model, pattern.strip()):
            return model.strip()
    raise AssertionError(f"{client_model} matches no pattern of {setup}")


@pytest.mark.parametrize("setup", SETUPS, ids=["regular", "openai_base_url", "custom_provider"])
def test_each_readme_setup_translates_a_turn_of_codex_default_model(tmp_path: Path, setup: Setup,
                                                                    black_hole: FakeUpstream) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    target = target_of(setup)
    with FakeUpstream(answering(target)) as upstream, start_gateway(setup, upstream, home) as mitm:
        run = run_codex(setup, mitm, home, black_hole, work)
        context = f"{run.describe()}\n--- mitmdump ---\n{mitm.log}\n--- upstream ---\n{upstream.errors}"
        assert run.returncode == 0, context
        assert run.final_message == ANSWER, context
        model = routed_model(setup, CODEX_DEFAULT_MODEL)
        turns = [r for r in upstream.requests if is_turn(r.json)]
        assert turns, context
        assert model in (turns[0].json.get("model"), turns[0].path.split("/")[-1].split(":")[0]), context
        assert KEY in " ".join(turns[0].headers.values()), turns[0].headers
        # what the README says to look at: the console's line for the turn
        console_line(mitm, f"{CODEX_DEFAULT_MODEL} -> {target.dialect} {model} | 200", context)
        # and what docs/console.md (and, for the first setup, the README) shows of the whole output
        printed = Printed(mitm, home / "gateway-lines.txt", upstream.url, public_url(setup))
        printed.shows(documented_output(SETUPS.index(setup) + 1), f"{CONSOLE_DOC.name}, setup {setup}")
        printed.never(NOISE, f"setup {setup}")
        if SETUPS.index(setup) == 0:
            printed.shows(readme_sample(), "README.md's sample", whole=False)  # an excerpt


def console_line(mitm: MitmDump, text: str, context: str) -> None:
    """Waits for mitmdump's line holding `text` (its output is read by another thread)."""
    deadline = time.monotonic() + 30
    while not any(text in line for line in list(mitm.output)):
        assert time.monotonic() < deadline, f"no console line {text!r}\n{context}"
        time.sleep(0.05)


# -- the console, as docs/console.md shows it --------------------------------------------------------
TIME = re.compile(r"^\[\d\d:\d\d:\d\d\.\d{3}\] ?")


def documented_output(number: int) -> list[str]:
    """The block docs/console.md shows for README setup `number` (its `**N. ...**` paragraph)."""
    section = CONSOLE_DOC.read_text().split(CONSOLE_SECTION, 1)[1].split("\n## ", 1)[0]
    part = section.split(f"**{number}. ", 1)[1]
    return re.findall(r"```\n(.*?)```", part, flags=re.S)[0].splitlines()


def readme_sample() -> list[str]:
    part = re.split(README_SAMPLE, README.read_text(), maxsplit=1)[1]
    return re.findall(r"```\n(.*?)```", part, flags=re.S)[0].splitlines()


def public_url(setup: Setup) -> str:
    """The upstream's own base URL, which the route line names when `gateway_base_url` is not set."""
    from translators import dialect as dialects

    return dialects.get(gateway_command(setup)[1]["gateway_upstream"]).vendor.base_url


def shape(line: str) -> str:
    """A console line with what varies from run to run made alike: the time, numbers (ports,
    tokens, sizes), the one-shot ticket in an internal URL, the HTTP version (the local fake
    speaks HTTP/1.1 where the vendor speaks HTTP/2), runs of spaces."""
    line = TIME.sub("", line)
    line = re.sub(r"\s*\bHTTP/\d(\.\d)?\b", "", line)
    line = re.sub(r"/[A-Za-z0-9_-]{20,}", "/<ticket>", line)
    line = re.sub(r"\d+(?:[.,]\d+)*", "N", line)
    return " ".join(line.split())


def alike(documented: str, printed: str) -> bool:
    """A documented line cut with `…` at its start or end matches the printed line's end or start."""
    if documented.startswith("…") and printed.endswith(documented[1:].strip()):
        return True
    if documented.endswith("…") and printed.startswith(documented[:-1].strip()):
        return True
    return documented == printed


@dataclass
class Printed:
    """What mitmdump printed, and which of it is the gateway's (tests/support/gateway_lines.py)."""

    mitm: MitmDump
    gateway_file: Path
    fake_url: str
    public: str

    def lines(self) -> tuple[list[str], set[int]]:
        ours = set(self.gateway_file.read_text().splitlines()) if self.gateway_file.exists() else set()
        raw = [line.rstrip("\n") for line in list(self.mitm.output)]
        printed = [shape(line.replace(self.fake_url, self.public)) for line in raw]
        gateway = {i for i, line in enumerate(raw) if TIME.sub("", line).strip() in ours}
        return printed, gateway

    def shows(self, documented: list[str], where: str, *, whole: bool = True) -> None:
        """Every documented line was printed, in the documented order (`…` alone: lines left
        out), and (`whole`) every line of the gateway's is documented. Waits for lines still to
        come."""
        expected = [shape(line) for line in documented if line.strip() and line.strip() != "…"]
        deadline = time.monotonic() + 30
        while True:
            printed, gateway = self.lines()
            found, missing = follow(expected, printed)
            untold = [printed[i] for i in sorted(gateway - set(found))] if whole else []
            if not missing and not untold:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"{where}: not printed, or not in this order: {missing}; the "
                                     f"gateway's lines not shown: {untold}\n--- printed ---\n"
                                     + "\n".join(printed))
            time.sleep(0.2)


    def never(self, noise: tuple[str, ...], where: str) -> None:
        """None of `noise` in any printed line (shaped: a ticket reads `/<ticket>`)."""
        printed, _ = self.lines()
        found = [line for line in printed if any(n in line for n in noise)]
        assert not found, f"{where}: printed {found}\n--- printed ---\n" + "\n".join(printed)


def follow(expected: list[str], printed: list[str]) -> tuple[list[int], list[str]]:
    """Where each expected line is in `printed`, in order; the first that is not, and the rest."""
    found, at = [], 0
    for i, line in enumerate(expected):
        while at < len(printed) and not alike(line, printed[at]):
            at += 1
        if at == len(printed):
            return found, expected[i:]
        found.append(at)
        at += 1
    return found, []
