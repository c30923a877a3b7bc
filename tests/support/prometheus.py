"""A throwaway Prometheus server from Debian's `prometheus` package (installed with apt-get, once,
under a lock, when missing and the tests run as root), scraping the targets a test names every
`interval` seconds, its data in a temporary directory, its web API on a free loopback port.
`query(expr)` asks its HTTP API (`/api/v1/query`) for an instant vector."""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

_LOCK = Path(tempfile.gettempdir()) / "dialect-gateway-prometheus-install.lock"


def prometheus_binary() -> str:
    with _LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if found := shutil.which("prometheus"):
            return found
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            raise RuntimeError("prometheus is missing and apt-get cannot run here: "
                               "install Debian's prometheus package")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for args in (["install"], ["update"], ["install"]):
            command = ["apt-get", *args, *(["-y", "--no-install-recommends", "prometheus"]
                                           if args != ["update"] else [])]
            subprocess.run(command, capture_output=True, env=env, timeout=900, check=False)
            if found := shutil.which("prometheus"):
                return found
        raise RuntimeError("apt-get install prometheus failed")


def _free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as server:
        return server.getsockname()[1]


class Prometheus:
    def __init__(self, url: str, output: Path) -> None:
        self.url = url
        self._output = output

    @property
    def log(self) -> str:
        return self._output.read_text(errors="replace") if self._output.exists() else ""

    def query(self, expr: str) -> list[dict[str, Any]]:
        answer = httpx.get(f"{self.url}/api/v1/query", params={"query": expr}, timeout=10).json()
        assert answer["status"] == "success", answer
        return answer["data"]["result"]

    def value(self, expr: str) -> float | None:
        """The one sample of a scalar-like query, or None when it has none."""
        result = self.query(expr)
        return float(result[0]["value"][1]) if result else None

    def targets_up(self) -> bool:
        targets = httpx.get(f"{self.url}/api/v1/targets", timeout=10).json()["data"]["activeTargets"]
        return bool(targets) and all(t["health"] == "up" for t in targets)

    def wait_for(self, expr: str, expected: float, timeout: float = 30.0) -> float | None:
        """The query's value once it equals `expected` (the next scrapes bring it), or the last
        value seen when `timeout` passes."""
        deadline, seen = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            seen = self.value(expr)
            if seen is not None and abs(seen - expected) <= 1e-9 * max(1.0, abs(expected)):
                return seen
            time.sleep(0.5)
        return seen


@contextmanager
def running_prometheus(targets: Sequence[str], interval: float = 1.0) -> Iterator[Prometheus]:
    """Yields a Prometheus scraping `targets` (`HOST:PORT`, `/metrics`) every `interval` seconds."""
    binary = prometheus_binary()
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="dgw-prometheus-") as tmp:
        root = Path(tmp)
        listed = ", ".join(f"'{t}'" for t in targets)
        every = f"{round(interval * 1000)}ms"  # a Prometheus duration: no decimals
        (root / "prometheus.yml").write_text(
            f"global:\n  scrape_interval: {every}\n  evaluation_interval: {every}\n"
            f"scrape_configs:\n  - job_name: gateway\n    static_configs:\n      - targets: [{listed}]\n")
        output = root / "prometheus.log"
        with output.open("wb") as sink:
            process = subprocess.Popen(
                [binary, f"--config.file={root / 'prometheus.yml'}", f"--storage.tsdb.path={root / 'data'}",
                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                stdout=sink, stderr=subprocess.STDOUT, cwd=root)
            server = Prometheus(f"http://127.0.0.1:{port}", output)
            try:
                deadline = time.monotonic() + 60
                while True:
                    try:
                        if httpx.get(f"{server.url}/-/ready", timeout=2).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"prometheus did not start:\n{server.log[-3000:]}")
                    time.sleep(0.2)
                yield server
            finally:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=5)
