"""Real `mitmdump -s addon/gateway.py` as a subprocess on 127.0.0.1 and an ephemeral port.

The addon forces `connection_strategy=lazy` itself, so it is deliberately not set here.
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

ROOT = Path(__file__).resolve().parents[3]
MITMDUMP = Path(sys.executable).parent / "mitmdump"
_LISTENING = re.compile(r"listening at (?:http://)?127\.0\.0\.1:(\d+)")


class MitmDump:
    def __init__(self, confdir: Path, *, mode: str | None = None, options: Mapping[str, str] | None = None,
                 args: Sequence[str] = (), env: Mapping[str, str | None] | None = None) -> None:
        self.confdir = confdir
        self.command = [str(MITMDUMP), "--listen-host", "127.0.0.1", "-p", "0",
                        "--set", f"confdir={confdir}", "-s", str(ROOT / "addon" / "gateway.py")]
        if mode:
            self.command += ["--mode", mode]
        for name, value in (options or {}).items():
            self.command += ["--set", f"{name}={value}"]
        self.command += list(args)
        # a None value removes the variable (e.g. a credential the test must not inherit)
        merged = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
        self.env = {name: value for name, value in merged.items() if value is not None}
        self.output: list[str] = []
        self.port = 0
        self._ready = threading.Event()
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> MitmDump:
        self._process = subprocess.Popen(self.command, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._drain, name="mitmdump-output", daemon=True).start()
        deadline = time.monotonic() + 30
        while not self._ready.wait(0.05):
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mitmdump did not start: {self.command}\n{self.log}")
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

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
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=5)
        return self._process.returncode

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ca_cert(self) -> Path:
        return self.confdir / "mitmproxy-ca-cert.pem"

    @property
    def log(self) -> str:
        return "".join(self.output)
