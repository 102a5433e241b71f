"""A throwaway PostgreSQL cluster for the store tests (real components in tests)."""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from tests.helpers import require_system


def pg_bindir() -> Path | None:
    for pattern in ("/usr/lib/postgresql/*/bin", "/usr/local/pgsql/bin"):
        for d in sorted(glob.glob(pattern), reverse=True):
            if os.path.exists(os.path.join(d, "initdb")) and os.path.exists(
                os.path.join(d, "pg_ctl")
            ):
                return Path(d)
    found = shutil.which("initdb")
    return Path(found).resolve().parent if found and shutil.which("pg_ctl") else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgCluster:
    """initdb into a temporary folder and pg_ctl start on a free 127.0.0.1 port."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="ragmeter-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.prefix: list[str] = []
        if os.geteuid() == 0:  # initdb refuses to run as root
            import pwd

            user = "postgres"
            try:
                pw = pwd.getpwnam(user)
            except KeyError:
                require_system(False, "running as root and no 'postgres' user for initdb")
                raise
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self.prefix = ["runuser", "-u", user, "--"]
        self._counter = itertools.count()

    def _run(self, *args: str) -> None:
        proc = subprocess.run(
            [*self.prefix, *args], capture_output=True, text=True, timeout=120, cwd=self.root
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {proc.stderr or proc.stdout}")

    def start(self) -> None:
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "ragmeter",
            "-E",
            "UTF8",
            "--no-locale",
        )
        opts = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            opts,
            "-l",
            str(self.root / "log"),
            "-w",
            "start",
        )

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://ragmeter@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        import psycopg

        name = f"t{os.getpid()}_{next(self._counter)}"
        with psycopg.connect(self.url("postgres").replace("+psycopg", ""), autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)
