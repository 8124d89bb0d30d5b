"""A real PostgreSQL for the floor store's tests: `initdb` into a temporary folder as an
unprivileged user (the tests may run as root, which PostgreSQL refuses: then as Debian's
`postgres`, or a system user made for it), started with `pg_ctl` on a free loopback port with
its socket in the same folder, stopped, killed and started again; a fresh database per test.

PostgreSQL is Debian's `postgresql` package (.ci/run installs it where it is missing); without
its binaries the tests that need it are skipped, saying so.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from tests.broker import free_port


def bindir() -> Path | None:
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2])
                    if p.split("/")[-2].isdigit() else 0, reverse=True):
        if os.path.exists(os.path.join(d, "initdb")):
            return Path(d)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def need_postgres() -> Path:
    where = bindir()
    if where is None:
        pytest.skip("PostgreSQL is not installed: `apt-get install postgresql` (.ci/run does it)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install '.[test]')")
    return where


def _server_user() -> str | None:
    """Whom the server runs as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "tablectl-pg"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                    "tablectl-pg"], check=True, capture_output=True)
    return "tablectl-pg"


SUPERUSER, PASSWORD = "floor", "floor-test-secret"


class Postgres:
    """One server in a folder of its own; `url(db)` reaches it as the superuser by password."""

    def __init__(self, *, fsync: bool = False):
        self.bin = need_postgres()
        self.user = _server_user()
        self.dir = Path(tempfile.mkdtemp(prefix="tablectl-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.fsync = fsync
        pwfile = self.dir / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
            os.chown(pwfile, entry.pw_uid, entry.pw_gid)
        os.chmod(self.dir, 0o700)
        self._run([str(self.bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER,
                   "--pwfile", str(pwfile), "--auth-local=trust", "--auth-host=scram-sha-256",
                   "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
        pwfile.unlink()
        self.proc_pid: int | None = None

    def _run(self, cmd: list[str], **kw) -> subprocess.CompletedProcess:
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd="/", **kw)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {done.stdout}{done.stderr}")
        return done

    def url(self, db: str = "postgres", *, user: str = SUPERUSER,
            password: str = PASSWORD) -> str:
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{db}"

    def start(self) -> "Postgres":
        opts = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                f"-c max_connections=60 -c shared_buffers=32MB")
        if not self.fsync:
            opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", opts,
                   "-l", str(self.dir / "log"), "-w", "-t", "30", "start"])
        return self

    def stop(self, mode: str = "fast") -> None:
        """`fast` (a clean shutdown) or `immediate` (as a crash: recovery at the next start)."""
        try:
            self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w",
                       "-t", "30", "stop"])
        except RuntimeError:
            pass

    def kill(self) -> None:
        """SIGKILL the postmaster (a crashed server; its backends end with it)."""
        pid_file = self.data / "postmaster.pid"
        if pid_file.exists():
            pid = int(pid_file.read_text().split()[0])
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
            # its children notice the postmaster is gone by themselves; the next start waits
            time.sleep(0.3)

    def sql(self, statement: str, db: str = "postgres") -> list[tuple]:
        import psycopg
        with psycopg.connect(self.url(db), autocommit=True, connect_timeout=10) as conn:
            cur = conn.execute(statement)
            return cur.fetchall() if cur.description else []

    def new_database(self) -> str:
        """A fresh database's URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        self.sql(f"CREATE DATABASE {name}")
        return self.url(name)

    def close(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)
