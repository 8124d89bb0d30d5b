"""Software identity for labs and regulators (docs/operations.md).

The release digest is SHA-256 over every source file of the product (controller/, drivers/,
simulators/ and the profiles) in a fixed order, each as `path NUL length NUL bytes`. On demand,
an HMAC-SHA256 over the same stream with a seed the verifier supplies proves that this copy is
the approved one, not merely uncorrupted.

The dependencies digest covers every file the installed dependencies put on the machine (the
product's requirements and theirs), each as `name==version/path NUL length NUL bytes`. The
software digest joins the two; it is what `[software] approved` or a signed manifest lists,
and what `tablectl run` checks at start.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import shutil
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("controller", "drivers", "simulators", "config/profiles")
SUFFIXES = (".py", ".toml")


def source_files(root: Path = ROOT) -> list[Path]:
    files = []
    for part in PARTS:
        base = root / part
        files += [p for p in base.rglob("*") if p.is_file() and p.suffix in SUFFIXES
                  and "__pycache__" not in p.parts]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _stream(root: Path) -> Iterator[bytes]:
    for path in source_files(root):
        data = path.read_bytes()
        yield path.relative_to(root).as_posix().encode() + b"\0" + str(len(data)).encode() + b"\0"
        yield data


def file_digests(root: Path = ROOT) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in source_files(root)}


@lru_cache(maxsize=1)
def release_digest(root: Path = ROOT) -> str:
    h = hashlib.sha256()
    for chunk in _stream(root):
        h.update(chunk)
    return h.hexdigest()


def seeded_hmac(seed: bytes, root: Path = ROOT) -> str:
    """HMAC-SHA256 keyed by the verifier's seed over the whole release."""
    if not seed:
        raise ValueError("the verifier's seed is empty")
    mac = hmac.new(seed, digestmod=hashlib.sha256)
    for chunk in _stream(root):
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


def dependency_files(root: Path = ROOT) -> list[tuple[str, Path]]:
    """(label, path) of every file the dependencies installed, label `name==version/path`;
    their install metadata (.dist-info: who installed them, when) and bytecode left out."""
    out = []
    for dist in dependencies(root):
        label = f"{_key(dist.metadata['Name'])}=={dist.version}"
        for f in dist.files or ():
            rel = str(f)
            if ".dist-info/" in rel or "__pycache__" in rel or rel.endswith(".pyc"):
                continue
            path = Path(str(f.locate()))
            if path.is_file():
                out.append((f"{label}/{rel}", path))
    return sorted(out)


@lru_cache(maxsize=1)
def dependencies_digest(root: Path = ROOT) -> str:
    h = hashlib.sha256()
    for label, path in dependency_files(root):
        data = path.read_bytes()
        h.update(label.encode() + b"\0" + str(len(data)).encode() + b"\0")
        h.update(data)
    return h.hexdigest()


def software_digest(release: str, deps: str) -> str:
    """The one SHA-256 a lab approves: the release and its dependencies together."""
    return hashlib.sha256(f"tablectl software\nrelease {release}\ndependencies {deps}\n"
                          .encode()).hexdigest()


def identity(root: Path = ROOT) -> dict[str, str]:
    release, deps = release_digest(root), dependencies_digest(root)
    return {"release_sha256": release, "dependencies_sha256": deps,
            "software_sha256": software_digest(release, deps)}


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
