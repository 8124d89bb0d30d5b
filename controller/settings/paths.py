"""Files the controller keeps (journal, user store, key, report): never what it did not make.

A path given for one of them that already exists and is not a regular file (a directory, a
device node, a FIFO, a socket, or a symlink to one) is refused in one line before anything is
opened, created or chmodded: `--journal /dev/null` or `--db /etc`, typed as root, must not
change a system file's mode. Modes are tightened only on a regular file (not a symlink) owned by
the user the controller runs as: its own, made before with a looser umask or copied.
"""
from __future__ import annotations

import os
import stat

from controller.errors import InputError


class NotAFile(InputError):
    """The path names something that is not a regular file: one line naming it and the fix."""


_KINDS = ((stat.S_ISREG, "a file"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symlink"))


def kind_of(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def refuse_special(path: str | os.PathLike[str], what: str) -> None:
    """NotAFile when `path` exists and is not a regular file (a symlink is judged by what it
    points to; a dangling one is refused too: creating through it would write elsewhere)."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        if os.path.islink(p):
            raise NotAFile(f"{what} {p}: a symlink to nothing; give the path of a file") from None
        return
    except OSError as err:
        raise NotAFile(f"{what} {p}: cannot be examined ({err.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        link = " (through a symlink)" if os.path.islink(p) else ""
        raise NotAFile(f"{what} {p}: is {kind_of(st.st_mode)}{link}, not a file; give the path "
                       "of a file (an existing one is used, a missing one is created)")


def own_regular(path: str | os.PathLike[str]) -> bool:
    """True for a regular file, not a symlink, owned by this process's user."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()


def tighten(path: str | os.PathLike[str], mode: int) -> bool:
    """Take away every permission beyond `mode` from our own regular file; True when it is
    (now) within `mode`, False when it is looser and not ours to change."""
    try:
        current = os.lstat(path).st_mode & 0o777
    except OSError:
        return True
    if not current & ~mode:
        return True
    if not own_regular(path):
        return False
    try:
        # through a descriptor opened without following a symlink: what was checked is changed
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return False
        os.fchmod(fd, current & mode)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def flush(path: str | os.PathLike[str]) -> None:
    """What was written to the file or folder at `path` is on disk (fsync); a folder's names
    made or changed in it, a power cut keeps. OSError as the system gives it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
