"""Every command in README.md and docs/ runs as written from a fresh clone once `./run` has made
`.venv` (issue 38).

A command is a line of a ```sh block (continuation lines joined, `# ...` comments left out) or an
inline `./run ...` / `.venv/bin/...` span. `./run X` is read through the `run` script itself (the
`exec` line of its `X)` case), `.venv/bin/` is the venv running the tests. Then, by what it runs:

- offline and with nothing left to fill in (`./run demo`, `./run clients ...`, `./run usage ...`,
  `./run catalog ...`, `python -m translators ...`): it is run, in a private $HOME (`~` is
  there), and must end with status 0 and no traceback. A file it writes by a relative name
  (`--file clients.toml`) goes to a temporary folder instead of the clone; `./run usage` finds the
  store a gateway with client keys would have made.
- the same with a placeholder (`DIR`, `[--model NAME]`, `a|b`, `...`) or an input file the docs
  only describe (`request.json`): every subcommand and flag it names is in the command's `--help`.
- mitmdump and mitmweb (a vendor key and the network): mitmproxy's own argument parser takes the
  arguments, each `--set` name is an option of that program with the gateway loaded, the scripts
  exist, a filter expression parses, and a gateway listens on loopback unless it has client keys
  (docs/team.md "Listen on loopback unless clients have keys").
- `codex exec`: its flags and its `-c` keys are those docs/codex.md documents.
- pytest, ruff: the paths it names exist; the program is in the venv.

A bare `mitmdump`, `python` or `pip` is never the venv's: a command names `./run` or `.venv/bin/`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import io
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from mitmproxy import flowfilter, options
from mitmproxy.proxy.mode_specs import ProxyMode
from mitmproxy.tools import cmdline
from mitmproxy.tools.dump import DumpMaster
from mitmproxy.tools.web.master import WebMaster

from addon.__main__ import COMMANDS as ADDON_TOOLS
from addon.state.store import open_store

ROOT = Path(__file__).resolve().parents[2]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
VENV_BIN = Path(sys.executable).parent
SHELL = ("sh", "bash", "shell")
"""The fence languages of command blocks."""
PROGRAMS = ("./run", ".venv/bin/", "mitmdump", "mitmweb", "python", "python3", "pip", "codex", "claude",
            "export", "npm")
"""First words that make a line a command (for the check that commands are in ```sh blocks)."""
OURS = ("addon", "translators", "bench")
"""The project's own `python -m` tools (others, e.g. pip, are the venv's: present is enough)."""
OFFLINE = {("addon", "replay"), ("addon", "clients"), ("addon", "usage"), ("addon", "catalog"),
           ("translators",)}
"""`python -m` tools that need neither a key nor the network: run as written."""
WRITES = ("--file", "-o", "--output", "-w", "--write")
"""Flags naming a file the command writes: a relative one goes to a temporary folder."""
STORE = "~/.mitmproxy/gateway-store.sqlite"
"""The store a gateway with client keys writes (gateway_store_path's default, docs/options.md)."""
TIMEOUT = 120


@dataclass(frozen=True)
class Command:
    where: str
    """`docs/team.md:23`: the file and line it starts on."""
    lines: tuple[str, ...]
    """One or more commands run in order in one shell (a block's lines)."""

    inline: bool = False
    """An inline span: `./run X` alone there names the tool (checked, not run)."""

    def __str__(self) -> str:
        return f"{self.where} {self.lines[0][:60]}"


# -- reading the Markdown -------------------------------------------------------------------------
def fences(text: str) -> Iterator[tuple[str, int, str]]:
    """(language, line number of its first line, body) of each fenced block."""
    for match in re.finditer(r"^```(\w*)[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
        yield match[1], text.count("\n", 0, match.start(2)) + 1, match[2]


def block_lines(body: str) -> list[str]:
    """The block's commands: continuation lines joined, blank and comment-only lines left out."""
    joined = re.sub(r"\\\n\s*", " ", body)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def inline(text: str) -> Iterator[tuple[int, str]]:
    """(line, text) of each inline code span outside fenced blocks that starts with `./run ` or
    `.venv/bin/`."""
    prose = re.sub(r"^```.*?^```", lambda m: "\n" * m[0].count("\n"), text, flags=re.S | re.M)
    for match in re.finditer(r"`(\./run\b[^`\n]*|\.venv/bin/[^`\n]*)`", prose):
        yield prose.count("\n", 0, match.start()) + 1, match[1]


def doc_commands() -> list[Command]:
    found = []
    for path in DOCS:
        name = path.relative_to(ROOT).as_posix()
        text = path.read_text()
        for lang, line, body in fences(text):
            if lang in SHELL and (lines := block_lines(body)):
                found.append(Command(f"{name}:{line}", tuple(lines)))
        found += [Command(f"{name}:{line}", (span,), inline=True) for line, span in inline(text)]
    return found


COMMANDS = doc_commands()


# -- what a command runs --------------------------------------------------------------------------
@functools.cache
def run_script() -> dict[str, list[str]]:
    """`./run`'s subcommands: each case label and the words of its `exec` line (`"$@"` left out,
    `$cmd` replaced by the label, `.venv/bin/` by the venv's)."""
    text = (ROOT / "run").read_text()
    arrays = {m[1]: shlex.split(m[2]) for m in re.finditer(r"^(\w+)=\((.*)\)$", text, flags=re.M)}
    cases = text.split('case "$cmd" in', 1)[1].split("esac", 1)[0]
    table: dict[str, list[str]] = {}
    for entry in cases.split(";;"):
        head = re.match(r"\s*([\w|]+)\)(.*)", entry, flags=re.S)
        if head is None:
            continue
        execs = re.findall(r"\bexec (.*)$", head[2], flags=re.M)
        for label in head[1].split("|"):
            words: list[str] = []
            for word in shlex.split(execs[-1]) if execs else []:
                if word == "$@":
                    continue
                if (array := re.fullmatch(r"\$\{(\w+)\[@\]\}", word)) is not None:
                    words += arrays[array[1]]
                    continue
                word = word.replace("$cmd", label)
                words.append(str(VENV_BIN / word.removeprefix(".venv/bin/")) if word.startswith(".venv/bin/")
                             else word)
            table[label] = words
    return table


def split(line: str) -> tuple[dict[str, str], list[str]]:
    """(the variables set before the program, the program and its arguments)."""
    words = shlex.split(line, comments=True)
    env = {}
    while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    return env, words


def resolve(words: list[str]) -> list[str]:
    """The venv program and arguments `./run X ...` or `.venv/bin/X ...` runs."""
    if words[0] == "./run":
        sub = words[1] if len(words) > 1 else "demo"  # `./run` alone is the demo (the script's default)
        assert sub in run_script(), f"./run has no subcommand {sub!r}: {sorted(run_script())}"
        return [*run_script()[sub], *words[2:]]
    return [str(VENV_BIN / words[0].removeprefix(".venv/bin/")), *words[1:]]


def is_placeholder(word: str) -> bool:
    """`DIR`, `FILE`, `[--model`, `NAME]`, `a|b`, `...`: words the reader fills in."""
    return (bool(re.fullmatch(r"[A-Z][A-Z_]*", word)) or word in ("...", "…") or "|" in word
            or word.startswith("[") or word.endswith("]"))


# -- checks ----------------------------------------------------------------------------------------
@functools.cache
def help_text(argv: tuple[str, ...]) -> str:
    done = subprocess.run([*argv, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, f"{' '.join(argv)} --help: {done.stderr}"
    return done.stdout


def subcommands(text: str) -> list[str]:
    found = re.search(r"positional arguments:\n\s+\{([^}]*)\}", text)
    return found[1].split(",") if found else []


def check_against_help(program: list[str], args: list[str]) -> None:
    """Each subcommand the arguments name, and each flag, is in the `--help` of that subcommand."""
    path, rest = list(program), [w for w in args if w not in ("...", "…")]
    if path[2:] == ["addon"]:  # `python -m addon` takes a tool's name first (addon/__main__.py)
        for alternative in rest.pop(0).split("|"):
            assert alternative in ADDON_TOOLS, f"python -m addon has no {alternative!r}: {ADDON_TOOLS}"
        return
    text = help_text(tuple(path))
    while rest and not rest[0].startswith("-") and (choices := subcommands(text)):
        named = rest.pop(0)
        for alternative in named.split("|"):  # `clients|usage|catalog|replay`
            assert alternative in choices, f"{' '.join(path)} has no subcommand {alternative!r}: {choices}"
        if "|" in named:
            return
        path.append(named)
        text = help_text(tuple(path))
    flags = [w.strip("[]()") for w in rest if w.lstrip("[(").startswith("-") and len(w.strip("[]()")) > 1]
    for flag in flags:
        name = flag.split("=", 1)[0]
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), \
            f"{' '.join(path)} has no {name} (its --help:\n{text})"


def runnable(program: list[str], args: list[str]) -> bool:
    """An offline tool, with no placeholder and every file it reads present."""
    module = tuple(program[2:4]) if program[1:2] == ["-m"] else ()
    if not any(module[:len(key)] == key for key in OFFLINE):
        return False
    if any(is_placeholder(word) for word in args):
        return False
    reads = [w for i, w in enumerate(args) if not w.startswith(("-", "~")) and "://" not in w
             and re.search(r"\.\w+$|/", w) and (i == 0 or args[i - 1] not in WRITES)]
    return all((ROOT / w).exists() for w in reads)


def run_offline(env: dict[str, str], argv: list[str], home: Path, work: Path) -> None:
    args = [str(home / w[2:]) if w.startswith("~/") else w.replace("$HOME", str(home)) for w in argv]
    for i, word in enumerate(args[:-1]):
        if word in WRITES and not Path(args[i + 1]).is_absolute():
            args[i + 1] = str(work / args[i + 1])
    quiet = {k: v for k, v in os.environ.items() if not k.endswith(("_KEY", "_TOKEN"))}
    dead = "http://127.0.0.1:9"  # anything that tries the network fails at once
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT,
                          env={**quiet, "HOME": str(home), "HTTPS_PROXY": dead, "HTTP_PROXY": dead, **env})
    assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr


@functools.cache
def option_names(program: str) -> frozenset[str]:
    """Every option of mitmdump or mitmweb with the gateway loaded (`--options` prints them)."""
    done = subprocess.run([str(VENV_BIN / program), "--options", "-s", "addon/gateway.py"], cwd=ROOT,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    return frozenset(re.findall(r"^(\w+):", done.stdout, flags=re.M))


@functools.cache
def parsers() -> dict[str, argparse.ArgumentParser]:
    """mitmdump's and mitmweb's own argument parsers, made as `mitmproxy.tools.main.run` makes
    them: over the options their master's addons declare."""
    async def make() -> dict[str, argparse.ArgumentParser]:
        dump, web = options.Options(), options.Options()
        DumpMaster(dump)
        WebMaster(web)
        return {"mitmdump": cmdline.mitmdump(dump), "mitmweb": cmdline.mitmweb(web)}
    return asyncio.run(make())


def check_mitmproxy(program: str, args: list[str]) -> None:
    args = [w for w in args if not is_placeholder(w)]  # `ARGS`, "and the rest of your options"
    parser = parsers()[program]
    with contextlib.redirect_stderr(io.StringIO()) as said:
        try:
            parsed = parser.parse_args(args)
        except SystemExit:
            raise AssertionError(f"{program} does not take {args}: {said.getvalue()}") from None
    sets = dict(s.split("=", 1) for s in parsed.setoptions or ())
    unknown = sorted(set(sets) - option_names(program))
    assert not unknown, f"{program} has no option {unknown}"
    for script in parsed.scripts or ():
        assert (ROOT / script).is_file(), f"no script {script} (from the clone's root, where ./run runs)"
    for mode in parsed.mode or ():
        ProxyMode.parse(mode)  # raises on a bad mode spec
    if getattr(parsed, "filter_args", None):
        assert flowfilter.parse(" ".join(parsed.filter_args)), parsed.filter_args
    if "addon/gateway.py" in (parsed.scripts or ()):
        on_loopback = parsed.listen_host in ("127.0.0.1", "::1", "localhost") or any(
            re.search(r"@(127\.0\.0\.1|localhost)(:\d+)?$", mode) for mode in parsed.mode or ())
        assert on_loopback or "gateway_clients" in sets, (
            "a gateway without client keys listens on loopback (--listen-host 127.0.0.1): "
            "docs/team.md \"Listen on loopback unless clients have keys\"")


@functools.cache
def codex_doc() -> tuple[frozenset[str], frozenset[str]]:
    """The config keys docs/codex.md documents (the keys of its TOML blocks, a `-c key=` or a
    `key=` inside a `{...}` it shows, a key in backticks) and the `codex exec` flags it lists
    ("flags worth knowing")."""
    text = (ROOT / "docs" / "codex.md").read_text()
    keys: set[str] = set()

    def walk(table: dict) -> None:
        for key, value in table.items():
            keys.add(key)
            if isinstance(value, dict):
                walk(value)
    for lang, _, body in fences(text):
        if lang == "toml":
            walk(tomllib.loads(body))
    for span in re.findall(r"`([^`\n]+)`", text):
        keys.update(re.findall(r"-c '?(\w+)", span))
        keys.update(re.findall(r"[{,]\s*(\w+)=", span))
        keys.update(re.findall(r"^([a-z_]+)$", span))
    listed = text.split("`codex exec` flags worth knowing", 1)[1].split("\n\n", 1)[0]
    flags = {flag for span in re.findall(r"`(-[^`]*)`", listed)
             for flag in re.findall(r"--?[\w-]+", span.split(" ", 1)[0])}
    return frozenset(keys), frozenset(flags)


def check_codex(args: list[str]) -> None:
    keys, flags = codex_doc()
    assert args[:1] == ["exec"], f"codex {args[:1]}: the docs run `codex exec`"
    words = iter(args[1:])
    for word in words:
        if not word.startswith("-"):
            continue
        assert word in flags, f"codex exec {word} is not among docs/codex.md's flags {sorted(flags)}"
        if word in ("-c", "--config"):
            key, value = next(words).split("=", 1)
            names = [key.split(".")[0]]
            with contextlib.suppress(tomllib.TOMLDecodeError):
                table = tomllib.loads(f"v = {value}")["v"]
                names += list(table) if isinstance(table, dict) else []
            unknown = sorted(set(names) - keys)
            assert not unknown, f"codex config keys {unknown} are not in docs/codex.md"


def check(command: Command, tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    for line in command.lines:
        env, words = split(line)
        if words and words[0].startswith("--"):  # options to add to the command before (README: mitmweb)
            problems = []
            for program in ("mitmweb", "mitmdump"):
                try:
                    check_mitmproxy(program, ["-s", "addon/gateway.py", "--listen-host", "127.0.0.1", *words])
                    break
                except AssertionError as exc:
                    problems.append(str(exc))
            else:
                raise AssertionError(problems)
            continue
        if not words or words[0] in ("export", "claude"):
            continue
        if words[0] == "codex":
            check_codex(words[1:])
            continue
        assert words[0] == "./run" or words[0].startswith(".venv/bin/"), (
            f"{words[0]} is not the venv's: write ./run {words[0]} or .venv/bin/{words[0]}")
        argv = resolve(words)
        program, rest = Path(argv[0]).name, argv[1:]
        if program in ("mitmdump", "mitmweb"):
            check_mitmproxy(program, rest)
        elif program.startswith("python") and rest[:2] == ["-m", "pytest"]:
            paths = [w for w in rest[2:] if w.startswith("tests")]
            assert all((ROOT / p.split("::")[0]).exists() for p in paths), paths
        elif program.startswith("python") and rest[:1] == ["-m"] and rest[1].split(".")[0] in OURS:
            module = rest[1]
            depth = 3 if module == "addon" and len(rest) > 2 and not is_placeholder(rest[2]) else 2
            tool, args = argv[:depth + 1], argv[depth + 1:]
            if runnable(tool, args) and (args or not command.inline):
                if tool[2:4] == ["addon", "usage"] and STORE in line:
                    store = home / STORE.removeprefix("~/")
                    store.parent.mkdir(parents=True, exist_ok=True)
                    open_store(str(store), ttl=0, max_bytes=0).close()  # as a gateway with client keys
                run_offline(env, argv, home, work)
            else:
                check_against_help(tool, args)
        else:
            assert Path(argv[0]).exists(), f"{argv[0]} is not in the venv"


@pytest.mark.parametrize("command", COMMANDS, ids=str)
def test_a_doc_command_runs_as_written(command: Command, tmp_path: Path) -> None:
    check(command, tmp_path)


def test_the_docs_have_commands_of_every_kind() -> None:
    """The extraction sees what the docs hold (a change of their form would otherwise pass empty)."""
    lines = [line for command in COMMANDS for line in command.lines]
    for expected in ("./run demo", "./run clients add ana --file clients.toml", "./run usage ",
                     "./run catalog ", ".venv/bin/python -m translators capture ", "codex exec ",
                     "./run mitmdump --listen-host 127.0.0.1 --mode reverse:https://api.anthropic.com"):
        assert any(line.startswith(expected) or f" {expected}" in line for line in lines), expected
    assert len(COMMANDS) > 30


def test_commands_are_in_sh_blocks() -> None:
    """A command outside a ```sh block (an indented block, an unlabelled fence) would escape the
    checks above."""
    stray = []
    for path in DOCS:
        text = path.read_text()
        for lang, line, body in fences(text):
            if lang not in SHELL and any(map(_starts_a_command, block_lines(body))):
                stray.append(f"{path.relative_to(ROOT)}:{line} (```{lang})")
        outside = re.sub(r"^```.*?^```", lambda m: "\n" * m[0].count("\n"), text, flags=re.S | re.M)
        for number, text_line in enumerate(outside.splitlines(), 1):
            if text_line.startswith("    ") and _starts_a_command(text_line.strip()):
                stray.append(f"{path.relative_to(ROOT)}:{number} (indented)")
    assert not stray


def _starts_a_command(line: str) -> bool:
    words = line.split()
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
        words.pop(0)
    return bool(words) and (words[0] in PROGRAMS or words[0].startswith(PROGRAMS[:2]))


BARE = re.compile(r"`((?:python3? -m (?:addon|translators|bench|tests)\b|pip3? install |"
                  r"(?:mitmdump|mitmweb) [^`]*-s addon/gateway\.py)[^`\n]*)`")


def test_no_inline_command_names_a_bare_program_of_the_gateway() -> None:
    """`python -m addon ...`, `pip install ...` or `mitmdump ... -s addon/gateway.py` in prose: the
    system's python has no mitmproxy (`ModuleNotFoundError`), its pip installs elsewhere, a system
    mitmdump is not the pinned one."""
    bare = []
    for path in DOCS:
        for match in re.finditer(BARE, path.read_text()):
            bare.append(f"{path.relative_to(ROOT)}: {match[1]}")
    assert not bare


@pytest.mark.parametrize(("line", "expected"), [
    ("./run demo", [sys.executable, "-m", "addon", "replay"]),
    ("./run clients list", [sys.executable, "-m", "addon", "clients", "list"]),
    ("./run mitmdump -p 1", [str(VENV_BIN / "mitmdump"), "-p", "1"]),
    ("./run test tests/x", [sys.executable, "-m", "pytest", "-m", "", "-n", "3", "--dist", "loadgroup",
                            "tests/x"]),
])
def test_run_subcommands_are_read_from_the_script(line: str, expected: Sequence[str]) -> None:
    assert resolve(split(line)[1]) == [str(VENV_BIN / Path(expected[0]).name), *expected[1:]]
