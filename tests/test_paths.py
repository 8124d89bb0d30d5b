"""Never touch what it did not make: a directory, a device node, a FIFO or a symlink to one,
given where a file of the controller's belongs (journal, user store, key, socket, report,
diagram), is refused in one line with exit 2, and keeps its type, mode and owner. Run as root,
as `tablectl users` and `install` are on a table PC: the slip that would change a system file's
mode (`--db /etc`, `--journal /dev/null`) is exactly what root can do."""
from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest

from controller.cli import main

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="makes device nodes: needs root")


class Started(AssertionError):
    """The command got past its checks."""


@pytest.fixture(autouse=True)
def guarded(monkeypatch):
    for name in [k for k in os.environ if k.startswith("TABLECTL_")]:
        if name != "TABLECTL_STORAGE_FSYNC":
            monkeypatch.delenv(name)

    def started(*a, **kw):
        raise Started("the command went on to run")

    monkeypatch.setattr("controller.service.runtime.TableRuntime.run", started)
    monkeypatch.setattr("controller.commands._simulation.run_simulation", started)
    old = signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(Started("hung")))
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def specials(where: Path, suffix: str = "") -> dict[str, Path]:
    """One of each kind of thing that is not a file, made loose (mode 0777 or 0666)."""
    where.mkdir()
    made = {"directory": where / f"dir{suffix}", "device": where / f"null{suffix}",
            "fifo": where / f"fifo{suffix}", "symlink to a directory": where / f"link{suffix}"}
    made["directory"].mkdir()
    os.chmod(made["directory"], 0o777)
    os.mknod(made["device"], stat.S_IFCHR | 0o666, os.makedev(1, 3))    # as /dev/null is
    os.mkfifo(made["fifo"], 0o666)
    made["symlink to a directory"].symlink_to(made["directory"])
    return made


def state(path: Path) -> tuple:
    st = os.lstat(path)
    return stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid


COMMANDS = {
    "run --journal": lambda p, w: ["run", "--journal", str(p), "--no-control"],
    "simulate --journal": lambda p, w: ["simulate", "--profile", "macau", "--seed", "1",
                                        "--journal", str(p)],
    "new-journal --journal": lambda p, w: ["new-journal", "--journal", str(p), "--as", "mia",
                                           "--reason", "r", "--db", str(w / "users.db")],
    "verify-journal --journal": lambda p, w: ["verify-journal", "--journal", str(p)],
    "recall --journal": lambda p, w: ["recall", "--journal", str(p)],
    "backup --journal": lambda p, w: ["backup", "--journal", str(p), str(w / "copy.db")],
    "users --db": lambda p, w: ["users", "list", "--as", "x", "--db", str(p)],
    "run --anchor-key": lambda p, w: ["run", "--anchor-key", str(p), "--journal",
                                      str(w / "j.db"), "--no-control"],
    "anchor-key": lambda p, w: ["anchor-key", str(p)],
    "run --socket": lambda p, w: ["run", "--socket", str(p), "--journal", str(w / "j.db")],
    "report --output": lambda p, w: ["report", "--journal", str(w / "j.db"), "--output",
                                     str(p)],
    "diagram --output": lambda p, w: ["diagram", "--output", str(p)],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_what_is_not_a_file_is_refused_and_left_as_it_was(command, tmp_path, capsys):
    things = specials(tmp_path / "things", ".pdf" if command.startswith("report") else "")
    (tmp_path / "j.db").touch()                 # a journal where one is needed besides
    before = {name: state(path) for name, path in things.items()}
    for name, path in things.items():
        capsys.readouterr()
        try:
            rc = main(COMMANDS[command](path, tmp_path))
        except SystemExit as done:
            rc = done.code
        err = capsys.readouterr().err
        assert rc == 2, (command, name, rc, err)
        assert err.count("\n") == 1 and "Traceback" not in err, (command, name, err)
    assert {name: state(path) for name, path in things.items()} == before
    # and nothing was made beside them (no journal, lock, store, copy or key)
    assert sorted((tmp_path / "things").iterdir()) == sorted(things.values())
    assert list(things["directory"].iterdir()) == []


def test_modes_are_tightened_only_on_the_controllers_own_files(tmp_path):
    """A loose journal or user store of its own is tightened; one owned by someone else is
    left as it is (and said), never chmodded behind their back."""
    from controller.access.accounts import AccountStore, ScryptParams
    from controller.journal import Journal
    mine, theirs = tmp_path / "mine.db", tmp_path / "theirs.db"
    for path in (mine, theirs):
        Journal(path).close()
        os.chmod(path, 0o666)
    os.chown(theirs, 4242, 4242)
    Journal(mine).close()
    Journal(theirs).close()
    assert stat.S_IMODE(os.stat(mine).st_mode) == 0o640
    assert stat.S_IMODE(os.stat(theirs).st_mode) == 0o666
    store = tmp_path / "users.db"
    AccountStore(store, kdf=ScryptParams(n=2 ** 4, r=1, p=1))
    os.chmod(store, 0o644)
    os.chown(store, 4242, 4242)
    AccountStore(store, kdf=ScryptParams(n=2 ** 4, r=1, p=1))
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o644
