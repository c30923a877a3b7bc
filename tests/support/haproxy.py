"""HAProxy from Debian's packages in front of several local servers, for the tests of gateways
that share one store: round robin per request (`http-server-close`: every request opens its own
server connection, so consecutive requests alternate between the servers). Installed with apt-get
once, under a lock, when missing and the tests run as root."""

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

_LOCK = Path(tempfile.gettempdir()) / "dialect-gateway-haproxy-install.lock"


def haproxy_binary() -> str:
    with _LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = shutil.which("haproxy") or (os.path.exists("/usr/sbin/haproxy") and "/usr/sbin/haproxy")
        if found:
            return found
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            raise RuntimeError("haproxy is missing and apt-get cannot run here: "
                               "install Debian's haproxy package")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for args in (["install"], ["update"], ["install"]):
            command = ["apt-get", *args, *(["-y", "--no-install-recommends", "haproxy"] if args != ["update"]
                                           else [])]
            subprocess.run(command, capture_output=True, env=env, timeout=900, check=False)
            if os.path.exists("/usr/sbin/haproxy"):
                return "/usr/sbin/haproxy"
        raise RuntimeError("apt-get install haproxy failed")


def _free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as server:
        return server.getsockname()[1]


@contextmanager
def round_robin(ports: Sequence[int]) -> Iterator[str]:
    """Yields the balancer's base URL (`http://127.0.0.1:PORT`)."""
    binary = haproxy_binary()
    port = _free_port()
    servers = "\n".join(f"    server s{n} 127.0.0.1:{p}" for n, p in enumerate(ports))
    config = (f"defaults\n    mode http\n    option http-server-close\n    timeout connect 5s\n"
              f"    timeout client 60s\n    timeout server 60s\n"
              f"frontend gateway\n    bind 127.0.0.1:{port}\n    default_backend gateways\n"
              f"backend gateways\n    balance roundrobin\n{servers}\n")
    with tempfile.TemporaryDirectory(prefix="dgw-haproxy-") as tmp:
        path = Path(tmp) / "haproxy.cfg"
        path.write_text(config)
        process = subprocess.Popen([binary, "-db", "-f", str(path)], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"haproxy did not start: {process.stderr.read()!r}") from None
                    time.sleep(0.05)
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            process.wait(timeout=10)
