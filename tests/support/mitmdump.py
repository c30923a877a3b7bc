"""Real `mitmdump` as a subprocess on 127.0.0.1, an ephemeral port and a private confdir: the one
runner every end-to-end test uses (the gateway's, the Codex CLI's, the reliability suite's).

Output is drained all the time (a full pipe would block the proxy) and kept for failure messages.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MITMDUMP = Path(sys.executable).parent / "mitmdump"
GATEWAY = ROOT / "addon" / "gateway.py"
_LISTENING = re.compile(r"listening at (?:http://)?127\.0\.0\.1:(\d+)")
_STARTUP_ERROR = "Error logged during startup"
_SERVER_CONNECT = re.compile(r"server connect (\S+?):\d+")
STARTED = Path(__file__).with_name("started.py")
"""Loaded after the other scripts: writes `<confdir>/started` once start-up passed mitmproxy's own
error check. A script that fails to load is reported *after* "listening at", then mitmdump exits:
the proxy is ready when it listens and that file is there, so a test never talks to a dead port."""
STARTED_MARK = "started"
"""The file tests/support/started.py writes (its `MARK`)."""


class MitmDump:
    def __init__(self, confdir: Path, *, mode: str | None = None, scripts: Sequence[Path] = (GATEWAY,),
                 options: Mapping[str, str] | None = None, args: Sequence[str] = (),
                 block_list: Sequence[str] = (), env: Mapping[str, str | None] | None = None,
                 startup_timeout: float = 60.0) -> None:
        self.confdir = confdir
        # the gateway forces connection_strategy=lazy itself; other scripts (test harnesses) need it too
        self.command = [str(MITMDUMP), "--listen-host", "127.0.0.1", "-p", "0",
                        "--set", f"confdir={confdir}", "--set", "connection_strategy=lazy"]
        if mode:
            self.command += ["--mode", mode]
        for script in (*scripts, STARTED):
            self.command += ["-s", str(script)]
        for rule in block_list:
            self.command += ["--set", f"block_list={rule}"]
        for name, value in (options or {}).items():
            self.command += ["--set", f"{name}={value}"]
        self.command += list(args)
        # a None value removes the variable (e.g. a credential the test must not inherit)
        merged = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
        self.env = {name: value for name, value in merged.items() if value is not None}
        self.startup_timeout = startup_timeout
        self.output: list[str] = []
        self.port = 0
        self._ready = threading.Event()
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> MitmDump:
        self.confdir.mkdir(parents=True, exist_ok=True)
        started = self.confdir / STARTED_MARK
        started.unlink(missing_ok=True)  # a confdir used before
        self._process = subprocess.Popen(self.command, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._drain, name="mitmdump-output", daemon=True).start()
        deadline = time.monotonic() + self.startup_timeout
        while not (self._ready.is_set() and started.exists()):
            if self._process.poll() is not None or time.monotonic() > deadline or _STARTUP_ERROR in self.log:
                self._fail_start()
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _fail_start(self) -> None:
        self.stop()
        raise RuntimeError(f"mitmdump did not start: {' '.join(self.command)}\n{self.log}")

    def _drain(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            self.output.append(line)
            if not self._ready.is_set() and (match := _LISTENING.search(line)):
                self.port = int(match[1])
                self._ready.set()

    def stop(self) -> int | None:
        """SIGINT is mitmdump's graceful shutdown: `-w` files are closed, exit code 0."""
        if self._process is None:
            return None
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGINT)
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=5)
        return self._process.returncode

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ca_cert(self) -> Path:
        """The CA that clients must trust in regular (CONNECT) mode; generated at start-up."""
        return self.confdir / "mitmproxy-ca-cert.pem"

    @property
    def returncode(self) -> int | None:
        return None if self._process is None else self._process.poll()

    @property
    def log(self) -> str:
        return "".join(self.output)

    def upstream_hosts(self) -> set[str]:
        """Every host mitmdump opened a server connection to (from its "server connect" log lines)."""
        return set(_SERVER_CONNECT.findall(self.log))
