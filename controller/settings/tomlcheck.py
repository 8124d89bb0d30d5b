"""Strict reading of TOML tables: typed keys, ranges, choices, and unknown keys as errors.

Every failure is one line naming the file, the dotted key, the problem and the fix.
"""
from __future__ import annotations

from typing import Any, Callable, Collection, Mapping


class Section:
    """Reads one table of a TOML document, remembering which keys were used."""

    def __init__(self, data: Mapping, where: str, error: Callable[[str, str, str, str], Exception],
                 prefix: str = ""):
        self.data, self.where, self.prefix, self.error = dict(data), where, prefix, error
        self.used: set[str] = set()

    def key(self, k: str) -> str:
        return f"{self.prefix}{k}"

    def fail(self, k: str, problem: str, fix: str) -> Exception:
        return self.error(self.where, self.key(k), problem, fix)

    def get(self, k: str, typ: type, default: Any = ..., choices: Collection[Any] | None = None,
            lo: Any = None, hi: Any = None) -> Any:
        self.used.add(k)
        if k not in self.data:
            if default is ...:
                raise self.fail(k, "missing", f"add `{k} = …`")
            return default
        v = self.data[k]
        if typ is float and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
            raise self.fail(k, f"expected {typ.__name__}, got {v!r}",
                            f"write a {typ.__name__}")
        if choices is not None and v not in choices:
            raise self.fail(k, f"{v!r} is not allowed", f"use one of {', '.join(map(str, choices))}")
        if lo is not None and v < lo or hi is not None and v > hi:
            raise self.fail(k, f"{v!r} is out of range", f"use a value from {lo} to {hi}")
        return v

    def table(self, k: str) -> "Section":
        self.used.add(k)
        v = self.data.get(k, {})
        if not isinstance(v, dict):
            raise self.fail(k, "expected a table", f"write [{self.key(k)}]")
        return Section(v, self.where, self.error, f"{self.key(k)}.")

    def done(self) -> None:
        extra = sorted(set(self.data) - self.used)
        if extra:
            raise self.fail(extra[0], "unknown key", "remove it or check its spelling (see the README)")
