"""A throwaway PostgreSQL server for the shared store's tests: Debian's `postgresql` package
(installed with apt-get, once, under a lock, when it is missing and the tests run as root), a
cluster made with `initdb` in a temporary directory, started with `pg_ctl` on a free loopback
port with trust authentication, stopped at the end. As root the server runs as the `postgres`
user (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_LOCK = Path(tempfile.gettempdir()) / "dialect-gateway-postgres-install.lock"


def _bin_dir() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    return found[-1].parent if found else None


def _apt(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(["apt-get", *args], capture_output=True, text=True, env=env, timeout=900,
                          check=False)


def postgres_bin() -> Path:
    """The directory of `initdb` and `pg_ctl`, installing Debian's package when it is missing."""
    with _LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _bin_dir()
        if found is not None:
            return found
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            raise RuntimeError("PostgreSQL is missing and apt-get cannot run here: install Debian's "
                               "postgresql package")
        done = _apt("install", "-y", "--no-install-recommends", "postgresql")
        if done.returncode != 0:
            _apt("update")
            done = _apt("install", "-y", "--no-install-recommends", "postgresql")
        found = _bin_dir()
        if found is None:
            raise RuntimeError("apt-get install postgresql failed:\n"
                               f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        return found


def _free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as server:
        return server.getsockname()[1]


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextmanager
def running_postgres() -> Iterator[str]:
    """Yields a `postgresql://` URL of a fresh, empty server on 127.0.0.1."""
    bin_dir = postgres_bin()
    root = Path(tempfile.mkdtemp(prefix="dgw-pg-"))
    data = root / "data"
    port = _free_port()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    os.chmod(root, 0o700)

    def run(*args: str) -> None:
        done = subprocess.run(_as_server_user([str(bin_dir / args[0]), *args[1:]]), capture_output=True,
                              text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")

    try:
        run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c full_page_writes=off"
        run("pg_ctl", "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "-t", "60", "start")
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)
