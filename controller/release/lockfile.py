"""The table PC's lock file (requirements/table-pc.txt): every distribution the service runs
on, pinned to one version with the SHA-256 of each of its files on the package index.

It is pip's requirements format as `uv pip compile --generate-hashes` writes it (`make lock`):
`name==version \\` then one `--hash=sha256:…` line per file, `#` comments. `pip install
--require-hashes --no-deps -r` installs exactly it, refusing any file whose hash differs.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

_PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
_HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")


class LockError(ValueError):
    """A lock file that cannot be read as one (the message names the file and line)."""


@dataclass(frozen=True)
class Locked:
    name: str                   # normalised: lower case, runs of -_. as one -
    version: str
    hashes: tuple[str, ...]     # sha256 of the index's files of this version, sorted


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: str | Path) -> list[Locked]:
    """The pinned distributions of a lock file, by name; LockError on a line that pins
    nothing, a pin without a hash, or a name pinned twice."""
    text = Path(path).read_text(encoding="utf-8")
    # join continuation lines, keeping the first line's number for messages
    logical: list[tuple[int, str]] = []
    pending, start = "", 0
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not pending:
            start = n
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        pending += line
        if pending.strip():
            logical.append((start, pending.strip()))
        pending = ""
    out: dict[str, Locked] = {}
    for n, line in logical:
        m = _PIN.match(line)
        if m is None:
            raise LockError(f"{path}:{n}: {line[:40]!r} is not name==version")
        hashes = tuple(sorted(_HASH.findall(line)))
        if not hashes:
            raise LockError(f"{path}:{n}: {m[1]}=={m[2]} has no --hash=sha256:…")
        name = normalise(m[1])
        if name in out:
            raise LockError(f"{path}:{n}: {name} is pinned twice")
        out[name] = Locked(name, m[2], hashes)
    return [out[k] for k in sorted(out)]


def lock_digest(entries: list[Locked]) -> str:
    """SHA-256 over the pinned names, versions and file hashes: what the lock installs."""
    h = hashlib.sha256()
    for e in entries:
        h.update(f"{e.name}=={e.version} {' '.join(e.hashes)}\n".encode())
    return h.hexdigest()
