"""Credentials: what a user name and a secret (PIN or password) must be, and how a secret is
hashed (scrypt with its parameters kept beside the hash, so stronger ones can be adopted).

No function here keeps or logs a secret; a refusal names the account and the fix, never the
secret itself.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from controller.access.roles import ROLES
from controller.errors import InputError
from controller.logsetup import secret as keep_out_of_logs

MIN_SECRET_CHARS = 6
MAX_SECRET_CHARS = 128
NAME_RE = re.compile(r"[a-z][a-z0-9._-]{0,31}\Z")
NAME_HELP = "1–32 characters: a lowercase letter, then lowercase letters, digits, '.', '_' or '-'"


class AccountError(InputError):
    """An account operation that cannot be done: one line naming the account and the fix."""


@dataclass(frozen=True)
class ScryptParams:
    """scrypt cost parameters; n=2**15, r=8 uses 32 MiB per hash (memory-hard)."""
    n: int = 2 ** 15
    r: int = 8
    p: int = 1
    dklen: int = 32

    def __post_init__(self) -> None:
        if self.n < 2 or self.n & (self.n - 1):
            raise ValueError(f"scrypt n must be a power of 2 above 1, got {self.n}")
        if self.r < 1 or self.p < 1 or self.dklen < 16:
            raise ValueError(f"scrypt r, p must be ≥ 1 and dklen ≥ 16, got {self}")

    def stronger_than(self, other: "ScryptParams") -> bool:
        """At least as costly in every parameter and different (re-hashing never weakens)."""
        return self != other and all(getattr(self, f) >= getattr(other, f)
                                     for f in ("n", "r", "p", "dklen"))

    @property
    def maxmem(self) -> int:
        # OpenSSL needs 128·r·(n + p + 2) bytes; give it headroom
        return 2 * 128 * self.r * (self.n + self.p + 2) + (1 << 20)


DEFAULT_KDF = ScryptParams()


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise AccountError(f"user name {name!r} is not valid; use {NAME_HELP}")
    return name


def check_role(role: str) -> str:
    if role not in ROLES:
        raise AccountError(f"role {role!r} is not known; use one of {', '.join(ROLES)}")
    return role


def check_secret(secret: str, name: str) -> str:
    """Policy: 6–128 characters, not the user name. Returns the normalized secret."""
    secret = keep_out_of_logs(unicodedata.normalize("NFC", secret))
    if len(secret) < MIN_SECRET_CHARS:
        raise AccountError(f"PIN for {name!r} is too short; use at least {MIN_SECRET_CHARS} "
                           "characters")
    if len(secret) > MAX_SECRET_CHARS:
        raise AccountError(f"PIN for {name!r} is too long; use at most {MAX_SECRET_CHARS} "
                           "characters")
    if secret.lower() == name.lower():
        raise AccountError(f"PIN for {name!r} must not be the user name; choose another")
    return secret


def derive(secret: str, salt: bytes, params: ScryptParams) -> bytes:
    """scrypt of the NFC-normalized UTF-8 secret."""
    data = unicodedata.normalize("NFC", secret).encode("utf-8")
    return hashlib.scrypt(data, salt=salt, n=params.n, r=params.r, p=params.p,
                          dklen=params.dklen, maxmem=params.maxmem)
