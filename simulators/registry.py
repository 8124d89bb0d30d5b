"""Named simulator models, so a URL (shoesim://NAME) can reach a model built elsewhere.

Registering a name again replaces the model: a new shoe on the same simulated table.
"""
from __future__ import annotations

import threading

_models: dict[str, object] = {}
_lock = threading.Lock()


def register(name: str, model: object) -> None:
    """Make `model` reachable as NAME (e.g. shoesim://NAME)."""
    if not name or any(c in name for c in "/?#@: "):
        raise ValueError(f"{name!r} cannot be a simulator name (no '/?#@:' or spaces)")
    with _lock:
        _models[name] = model


def get(name: str) -> object:
    """The model registered as NAME; KeyError naming the known ones otherwise."""
    with _lock:
        try:
            return _models[name]
        except KeyError:
            known = ", ".join(sorted(_models)) or "none"
            raise KeyError(f"no simulator registered as {name!r} (registered: {known})") from None


def unregister(name: str) -> None:
    """Forget NAME; unknown names are ignored (tests clean up unconditionally)."""
    with _lock:
        _models.pop(name, None)


def names() -> list[str]:
    with _lock:
        return sorted(_models)
