"""Software identity for labs and regulators (standards §9 items 64–65).

The release digest is SHA-256 over every source file of the product (controller/, drivers/,
simulators/ and the profiles) in a fixed order, each as `path NUL length NUL bytes`. On demand,
an HMAC-SHA256 over the same stream with a seed the verifier supplies proves that this copy is
the approved one, not merely uncorrupted.
"""
from __future__ import annotations

import hashlib
import hmac
from functools import lru_cache
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
