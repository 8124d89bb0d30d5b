"""Software identity for labs and regulators (docs/operations.md).

The release digest is SHA-256 over every file the release ships — code, page templates and
scripts, message catalogues, the shipped configuration and profiles, the deploy files, the lock
file — in a fixed order, each as `path NUL length NUL bytes`, paths as the wheel names them
(`controller/shipped/config/profiles/macau.toml`), so a checkout and an installed wheel of the
same release give the same digest. On demand, an HMAC-SHA256 over the same stream with a seed
the verifier supplies proves that this copy is the approved one, not merely uncorrupted.

The dependencies digest is the lock file's (every pinned distribution's name, version and file
hashes) when what is installed is exactly what it pins: each locked distribution at its
version, and each of its installed files matching the hash its wheel recorded (RECORD). Two
table PCs installed from the same release and lock therefore report the same identity, on any
day. When the installation differs from the lock, the digest is taken over what is installed
instead (names, versions, file contents) and the identity says what differs, so it cannot
match an approval of the locked release. Driver plugins (other distributions registering
tablectl drivers) are code the table runs: their files join the digest. The software digest
joins them all; it is what `[software] approved` or a signed manifest lists, and what
`tablectl run` checks at start. Every file is hashed in chunks, never read whole.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator

from controller.settings.locations import SHIPPED

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("controller", "drivers", "simulators")
_CHUNK = 1 << 20


def _skip(rel: str) -> bool:
    return "__pycache__" in rel or rel.endswith((".pyc", ".pyo"))


def release_files(root: Path = ROOT) -> list[tuple[str, Path]]:
    """(path in the release, file) of every file the release ships, in the digest's order.

    Under `root` (a checkout, or the site-packages of an installed wheel): every file of the
    three packages but bytecode, and in a checkout, where the build has not copied them in,
    the shipped folders (config/, deploy/, requirements/) under the names the wheel gives them."""
    files: list[tuple[str, Path]] = []
    for pkg in PACKAGES:
        for p in (root / pkg).rglob("*"):
            rel = p.relative_to(root).as_posix()
            if p.is_file() and not _skip(rel):
                files.append((rel, p))
    if not (root / "controller" / "shipped").is_dir():
        for part, patterns in SHIPPED.items():
            for pattern in patterns:
                for p in (root / part).glob(pattern):
                    if p.is_file():
                        rel = p.relative_to(root / part).as_posix()
                        files.append((f"controller/shipped/{part}/{rel}", p))
    return sorted(files)


def source_files(root: Path = ROOT) -> list[Path]:
    return [p for _, p in release_files(root)]


def _chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            yield chunk


def _labelled(files: list[tuple[str, Path]]) -> Iterator[bytes]:
    """`label NUL length NUL bytes` of each file, the bytes in chunks."""
    for label, path in files:
        yield label.encode() + b"\0" + str(path.stat().st_size).encode() + b"\0"
        yield from _chunks(path)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    for chunk in _chunks(path):
        h.update(chunk)
    return h.hexdigest()


def file_digests(root: Path = ROOT) -> dict[str, str]:
    return {label: file_sha256(p) for label, p in release_files(root)}


@lru_cache(maxsize=1)
def release_digest(root: Path = ROOT) -> str:
    h = hashlib.sha256()
    for chunk in _labelled(release_files(root)):
        h.update(chunk)
    return h.hexdigest()


def seeded_hmac(seed: bytes, root: Path = ROOT) -> str:
    """HMAC-SHA256 keyed by the verifier's seed over the whole release."""
    if not seed:
        raise ValueError("the verifier's seed is empty")
    mac = hmac.new(seed, digestmod=hashlib.sha256)
    for chunk in _labelled(release_files(root)):
        mac.update(chunk)
    return mac.hexdigest()


# ---------------------------------------------------------------------------------------------
# The installed dependencies, and the software as a whole (what a lab approves)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: the namespace an approval manifest is signed in (ssh-keygen -Y sign -n …)
MANIFEST_NAMESPACE = "tablectl-software"


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(requirements: list[str]) -> list[str]:
    """Names of the requirements that apply to every install (those of an extra do not)."""
    names = []
    for req in requirements:
        spec, _, marker = req.partition(";")
        if "extra" in marker:
            continue
        m = _NAME.match(spec.strip())
        if m:
            names.append(m.group(0))
    return names


def _direct_requirements(root: Path) -> list[str]:
    """The project's own dependency list: pyproject.toml in a source tree, else its metadata."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        with open(pyproject, "rb") as fh:
            return _requirement_names(list(tomllib.load(fh)["project"].get("dependencies", [])))
    try:
        return _requirement_names(list(metadata.distribution("tablectl").requires or []))
    except metadata.PackageNotFoundError:
        return []


def dependencies(root: Path = ROOT) -> list[metadata.Distribution]:
    """The installed distributions the product runs on: its dependencies and theirs, each
    once, by name (a requirement for another platform is not installed, so not counted)."""
    seen: dict[str, metadata.Distribution] = {}
    todo = _direct_requirements(root)
    while todo:
        name = todo.pop()
        if _key(name) in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen[_key(name)] = dist
        todo += _requirement_names(list(dist.requires or []))
    return [seen[k] for k in sorted(seen)]


def _installed_files(dist: metadata.Distribution) -> Iterator[tuple[str, Any, Path]]:
    """(label, RECORD entry, file) of what a distribution installed beside the packages: its
    install metadata (.dist-info: who installed it, when), bytecode and the scripts written
    outside site-packages (their first line names the venv) are left out."""
    label = f"{_key(dist.metadata['Name'])}=={dist.version}"
    for f in dist.files or ():
        rel = str(f).replace("\\", "/")
        if ".dist-info/" in rel or rel.startswith("../") or _skip(rel):
            continue
        path = Path(str(f.locate()))
        if path.is_file():
            yield f"{label}/{rel}", f, path


def dependency_files(root: Path = ROOT) -> list[tuple[str, Path]]:
    """(label, path) of every file the dependencies installed, label `name==version/path`."""
    return sorted((label, path) for dist in dependencies(root)
                  for label, _, path in _installed_files(dist))


def files_digest(files: list[tuple[str, Path]]) -> str:
    h = hashlib.sha256()
    for chunk in _labelled(sorted(files)):
        h.update(chunk)
    return h.hexdigest()


@lru_cache(maxsize=1)
def dependencies_digest(root: Path = ROOT) -> str:
    """What is installed, whatever the lock says: every dependency's files."""
    return files_digest(dependency_files(root))


def _record_matches(entry: Any, path: Path) -> bool:
    """Does the file hold what its wheel recorded (RECORD: sha256, urlsafe base64)?"""
    h = entry.hash
    if h is None or h.mode != "sha256":
        return True             # nothing recorded to compare with (pip records every file)
    raw = hashlib.sha256()
    for chunk in _chunks(path):
        raw.update(chunk)
    return base64.urlsafe_b64encode(raw.digest()).rstrip(b"=").decode() == h.value


def lock_differences(entries: list[Any]) -> list[str]:
    """How the installation differs from the lock: a distribution missing, at another
    version, or with a file that is not what its wheel held (first few, one phrase each)."""
    problems: list[str] = []
    for e in entries:
        try:
            dist = metadata.distribution(e.name)
        except metadata.PackageNotFoundError:
            problems.append(f"{e.name} is not installed")
            continue
        if dist.version != e.version:
            problems.append(f"{e.name} {dist.version} is installed, {e.version} locked")
            continue
        for label, entry, path in _installed_files(dist):
            if not _record_matches(entry, path):
                problems.append(f"{label} differs from its wheel")
                break
    return problems


def plugins_digest() -> tuple[str, list[str]]:
    """The driver plugins' files ("" when there is none) and their names."""
    from drivers.registry import plugin_distributions
    dists = plugin_distributions()
    if not dists:
        return "", []
    files = [(label, path) for d in dists for label, _, path in _installed_files(d)]
    return files_digest(files), [f"{_key(d.metadata['Name'])}=={d.version}" for d in dists]


def software_digest(release: str, deps: str, plugins: str = "") -> str:
    """The one SHA-256 a lab approves: the release, its dependencies and its driver plugins."""
    text = f"tablectl software\nrelease {release}\ndependencies {deps}\n"
    if plugins:
        text += f"plugins {plugins}\n"
    return hashlib.sha256(text.encode()).hexdigest()


_IDENTITY_LOCK = threading.Lock()


def identity(root: Path = ROOT) -> dict[str, Any]:
    """The release, its dependencies (as locked, or what differs), its plugins, and the one
    software SHA-256 of them all; hashed once a process (threads that ask meanwhile wait for
    the one hashing)."""
    with _IDENTITY_LOCK:
        return _identity(root)


#: the child that works out `identity` apart (see identity_apart)
_CHILD = ("import json, sys; from pathlib import Path; "
          "from controller.release.software import identity; "
          "print(json.dumps(identity(Path(sys.argv[1]))))")
#: how much lower the child runs than the table (a Unix nice increment)
APART_NICENESS = 10


def identity_apart(root: Path = ROOT, timeout_s: float = 600.0) -> dict[str, Any]:
    """`identity()`, worked out by a process of its own at a lower priority, for a table that
    is dealing meanwhile: hashing the dependencies is a second or more of Python work, which
    on a thread of the table's own process would share its interpreter lock with every card
    read. The child imports this very release (`root` first on its path).
    RuntimeError (one line): the child could not say."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(root), env.get("PYTHONPATH"))))
    try:
        proc = subprocess.Popen([sys.executable, "-P", "-c", _CHILD, str(root)], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    except OSError as failed:
        raise RuntimeError(f"the software's identity: cannot start {sys.executable}: "
                           f"{failed}") from failed
    try:
        os.setpriority(os.PRIO_PROCESS, proc.pid, APART_NICENESS)
    except (AttributeError, OSError):     # no such call here, or the child has ended
        pass
    try:
        out, said = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise RuntimeError(f"the software's identity: no answer in {timeout_s:g} s") from None
    if proc.returncode != 0:
        last = (said.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"the software's identity: the child exited {proc.returncode}: "
                           f"{last}")
    try:
        answer = json.loads(out)
    except ValueError as bad:
        raise RuntimeError(f"the software's identity: the child's answer is not JSON: "
                           f"{bad}") from None
    if not isinstance(answer, dict) or "software_sha256" not in answer:
        raise RuntimeError("the software's identity: the child's answer has no software_sha256")
    return answer


@lru_cache(maxsize=1)
def _identity(root: Path) -> dict[str, Any]:
    from controller.settings.locations import lock_file
    from controller.release.lockfile import LockError, lock_digest, read_lock
    release = release_digest(root)
    lock = lock_file()
    try:
        entries = read_lock(lock) if lock.is_file() else []
    except LockError as err:
        entries, why = [], [str(err)]
    else:
        why = lock_differences(entries) if entries else [f"no lock file ({lock})"]
    if entries and not why:
        deps, state = lock_digest(entries), "as locked"
    else:
        deps = dependencies_digest(root)
        state = "not as locked: " + "; ".join(why[:3]) + (f"; {len(why) - 3} more"
                                                          if len(why) > 3 else "")
    plugins, plugin_names = plugins_digest()
    out: dict[str, Any] = {"release_sha256": release, "dependencies_sha256": deps,
                           "software_sha256": software_digest(release, deps, plugins),
                           "dependencies": state, "locked": len(entries)}
    if plugin_names:
        out["plugins"] = plugin_names
        out["plugins_sha256"] = plugins
    return out


@dataclass(frozen=True)
class Approval:
    status: str            # approved | unapproved | unchecked
    source: str            # where the approved list came from
    detail: str            # one line for the prompt and the status view


def approval(software: str, *, approved: tuple[str, ...] = (), manifest: str = "",
             allowed_signers: str = "") -> Approval:
    """Is `software` (its SHA-256) approved by the configured list or the signed manifest?"""
    short = software[:12]
    listed = {a.strip().lower() for a in approved}
    if software in listed:
        return Approval("approved", "[software] approved", f"software {short}… is approved")
    if manifest:
        try:
            hashes, signer = read_manifest(manifest, allowed_signers)
        except ManifestError as err:
            return Approval("unapproved", manifest, f"software {short}… cannot be checked: {err}")
        source = f"{manifest} (signed by {signer})"
        if software in hashes:
            return Approval("approved", source, f"software {short}… is approved by {source}")
        return Approval("unapproved", source, f"software {short}… is not in {source}")
    if listed:
        return Approval("unapproved", "[software] approved",
                        f"software {short}… is not in [software] approved")
    return Approval("unchecked", "", "no approved software configured ([software] approved "
                    "or manifest): not checked")


class ManifestError(Exception):
    """A manifest that cannot be trusted: missing, unsigned, or its signature fails."""


def read_manifest(path: str, allowed_signers: str) -> tuple[set[str], str]:
    """The SHA-256s a signed manifest approves, and who signed it.

    The manifest lists one SHA-256 a line (`#` comments); its signature is `PATH.sig`, made
    with `ssh-keygen -Y sign -n tablectl-software -f KEY PATH` and checked against the
    `allowed_signers` file (ssh-keygen's format: `NAME KEYTYPE KEY`).
    """
    import subprocess
    manifest, sig = Path(path), Path(path + ".sig")
    if not allowed_signers:
        raise ManifestError("no [software] allowed_signers to check its signature with")
    for p in (manifest, sig, Path(allowed_signers)):
        if not p.is_file():
            raise ManifestError(f"{p}: no such file")
    if shutil.which("ssh-keygen") is None:
        raise ManifestError("ssh-keygen (OpenSSH) is not installed to check the signature")
    data = manifest.read_bytes()
    found = subprocess.run(["ssh-keygen", "-Y", "find-principals", "-s", str(sig), "-f",
                            allowed_signers], capture_output=True, text=True, timeout=30)
    principals = found.stdout.split()
    if found.returncode != 0 or not principals:
        raise ManifestError(f"{sig}: not signed by anyone in {allowed_signers}")
    signer = principals[0]
    done = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", allowed_signers, "-I", signer,
                           "-n", MANIFEST_NAMESPACE, "-s", str(sig)], input=data,
                          capture_output=True, timeout=30)
    if done.returncode != 0:
        why = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
        raise ManifestError(f"{sig}: the signature does not verify "
                            f"({why[0] if why else 'ssh-keygen refused it'})")
    hashes = set()
    for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        word = line.split("#", 1)[0].split()
        if not word:
            continue
        if not re.fullmatch(r"[0-9a-fA-F]{64}", word[0]):
            raise ManifestError(f"{manifest}:{n}: {word[0][:20]!r} is not a SHA-256")
        hashes.add(word[0].lower())
    return hashes, signer
