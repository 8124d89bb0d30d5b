"""Options for the behaviour suite: simulator by default, real devices when given a URL.

Journals in tests skip the fsync (Journal.durable_default in this process; the [storage] fsync
setting, TABLECTL_STORAGE_FSYNC=false, in the processes tests start) unless a test is about
durability: those take the `durable` fixture, which gives them and their processes the real
full sync.
"""
import contextlib
import fcntl
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.journal import Journal
from drivers.shoe import PROTOCOLS
from simulators.install import install


def pytest_addoption(parser):
    g = parser.getgroup("tablectl devices")
    g.addoption("--shoe-url", default=None,
                help="run the device behaviour suite against this real shoe (e.g. /dev/ttyUSB0)")
    g.addoption("--shoe-protocol", default="beetek", choices=tuple(PROTOCOLS))
    g.addoption("--shuffler-url", default=None,
                help="run the device behaviour suite against this real shuffler (usb://VID:PID)")
    g.addoption("--hardware-cards", type=int, default=4,
                help="with --shoe-url: how many cards the operator deals during the test")


@pytest.fixture
def shoe_url(request):
    return request.config.getoption("--shoe-url")


@pytest.fixture
def shuffler_url(request):
    return request.config.getoption("--shuffler-url")


@pytest.fixture
def pty():
    """(master fd, slave path): the test writes a device's bytes into the master, the port
    opens the slave path like a real /dev/tty*."""
    master, slave = os.openpty()
    yield master, os.ttyname(slave)
    os.close(master)
    os.close(slave)


@pytest.fixture(autouse=True, scope="session")
def simulators_installed():
    """Tests open shoesim:// and usb://…?sim= URLs directly, as the application does once it
    has installed the simulators."""
    install()


os.environ["TABLECTL_STORAGE_FSYNC"] = "false"
Journal.durable_default = False


@pytest.fixture(autouse=True)
def console_prefs(tmp_path, monkeypatch):
    """Each test's console keeps its people's languages in a file of its own, never in the
    home directory of whoever runs the tests."""
    monkeypatch.setenv("TABLECTL_CONSOLE_PREFS", str(tmp_path / "console-prefs.json"))


@pytest.fixture
def durable(monkeypatch):
    """Real fsync for this test and the processes it starts (crash and disk tests)."""
    monkeypatch.delenv("TABLECTL_STORAGE_FSYNC", raising=False)
    monkeypatch.setattr(Journal, "durable_default", True)


@pytest.fixture(scope="session")
def pg_server():
    """One real PostgreSQL for the tests of this session (of this worker); each test that uses
    it takes a database of its own (`pg_url`). Skipped where PostgreSQL is not installed."""
    from tests.pg import Postgres
    server = Postgres().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def pg_url(pg_server):
    """A fresh database on the session's server (its URL, the superuser's)."""
    return pg_server.new_database()


@contextlib.contextmanager
def built_once(tmp_path_factory, name: str):
    """A folder of this test run shared by its xdist workers, and whether it still has to be
    built: `with built_once(f, "x") as (folder, todo): if todo: build into folder`. The first
    worker builds it under a lock while the others wait; a build that fails is built again."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent                  # one folder for every worker of this run
    folder: Path = shared / f"built-{name}"
    with open(shared / f"built-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder / ".done"
        todo = not done.exists()
        if todo:
            import shutil
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
        yield folder, todo
        done.touch()


@pytest.fixture
def tablectl_here(capsys, caplog, monkeypatch):
    """`tablectl ARGS…` run in this process, for tests whose subject is the command and not the
    process boundary: `tablectl_here(*args, cwd=…)` gives what it printed and its exit status
    as subprocess.run would (an argparse refusal's SystemExit included), with the environment a
    test's process gets (no TABLECTL_ variable but the fsync's), and each warning it logged as
    one more line of its stderr, as the process would have printed it."""
    from controller.cli import main
    for name in [k for k in os.environ if k.startswith("TABLECTL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TABLECTL_STORAGE_FSYNC", "false")
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)     # main sets its own

    def command(*args: str, cwd: Path | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        capsys.readouterr()
        caplog.clear()
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        out = capsys.readouterr()
        logged = "".join(f"{r.getMessage()}\n" for r in caplog.records
                         if r.levelno >= logging.WARNING)
        return subprocess.CompletedProcess(args, code, out.out, out.err + logged)
    return command
