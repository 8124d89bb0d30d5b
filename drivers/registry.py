"""Driver plugins: shoe protocols and shufflers found by entry point, built-in ones included.

A distribution offers a driver by naming it in an entry-point group of its metadata, as
python-can finds its interfaces:

    [project.entry-points."tablectl.shoe_protocols"]
    acme = "acme_shoe:AcmeDriver"            # a drivers.shoe.base.ShoeDriverBase subclass

    [project.entry-points."tablectl.shufflers"]
    acme = "acme_shuffler:open_acme"         # open(url, **options) -> a ShufflerDriver
                                             # (drivers.interfaces)

tablectl's own drivers register the same way (pyproject.toml), so a vendor's protocol is
chosen by its name exactly like `beetek` ([shoe] protocol, --shoe-protocol; [shuffler]
protocol). Names are read from the installed metadata when first asked for; a driver's module
is imported only when it is used, and an import that fails is one line naming the
distribution, the entry point and the cause. See docs/drivers.md.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import metadata
from typing import Any

from drivers.errors import DriverUnavailable

SHOE_PROTOCOLS = "tablectl.shoe_protocols"
SHUFFLERS = "tablectl.shufflers"


class DriverRegistry(Mapping[str, Any]):
    """name → the loaded object of one entry-point group (a Mapping, names sorted)."""

    def __init__(self, group: str, what: str):
        self.group, self.what = group, what
        self._points: dict[str, metadata.EntryPoint] | None = None
        self._loaded: dict[str, Any] = {}

    def _entry_points(self) -> dict[str, metadata.EntryPoint]:
        if self._points is None:
            found: dict[str, metadata.EntryPoint] = {}
            for ep in metadata.entry_points(group=self.group):
                # the first one on the path wins, as imports do (a copy later on the path
                # of the same distribution names the same thing)
                found.setdefault(ep.name, ep)
            if not found:
                raise DriverUnavailable(
                    f"no {self.what} is registered (entry points {self.group!r}): tablectl's "
                    f"own metadata is missing; install it (pip install -e . in a checkout)")
            self._points = dict(sorted(found.items()))
        return self._points

    def __getitem__(self, name: str) -> Any:
        if name in self._loaded:
            return self._loaded[name]
        ep = self._entry_points().get(name)
        if ep is None:
            raise KeyError(name)
        try:
            obj = ep.load()
        except Exception as err:       # a plugin's own bug must be named, not swallowed
            dist = ep.dist.name if ep.dist is not None else "?"
            raise DriverUnavailable(f"{self.what} {name!r} (from {dist}: {ep.value}) failed to "
                                    f"load: {type(err).__name__}: {err}") from err
        self._loaded[name] = obj
        return obj

    def __iter__(self) -> Iterator[str]:
        return iter(self._entry_points())

    def __len__(self) -> int:
        return len(self._entry_points())

    def __contains__(self, name: object) -> bool:
        return name in self._entry_points()

    def origin(self, name: str) -> str:
        """Which distribution (and version) registered `name`."""
        ep = self._entry_points()[name]
        return f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "?"

    def unknown(self, name: str) -> str:
        return f"unknown {self.what} {name!r} (known: {', '.join(self)})"

    def refresh(self) -> None:
        """Read the installed metadata again (after a distribution was installed)."""
        self._points, self._loaded = None, {}


def plugin_distributions() -> list[metadata.Distribution]:
    """The installed distributions that register a driver, other than tablectl itself: code
    the table runs, so part of the software's identity."""
    seen: dict[str, metadata.Distribution] = {}
    for group in (SHOE_PROTOCOLS, SHUFFLERS):
        for ep in metadata.entry_points(group=group):
            dist = ep.dist
            if dist is not None and dist.name.lower() != "tablectl":
                seen.setdefault(dist.name.lower(), dist)
    return [seen[k] for k in sorted(seen)]
