"""The table: its state as typed data, the machine generated from the game's procedure and its
command table, and the model that applies one input at a time (`Table.apply`).

The names are loaded on first use, so that a part that needs only the command table
(`controller.table.legal`: the roles, a console client) does not load the whole model."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.table.core import Corrected, Outcome, Table
    from controller.table.inputs import Command, command, parse_input
    from controller.table.states import HOLD, IDLE, SHOE_ENDED, dealing, step_in

_WHERE = {"Table": "core", "Outcome": "core", "Corrected": "core", "Command": "inputs",
          "command": "inputs", "parse_input": "inputs", "HOLD": "states", "IDLE": "states",
          "SHOE_ENDED": "states", "dealing": "states", "step_in": "states"}

__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
