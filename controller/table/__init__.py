"""The table: its state as typed data, the machine generated from the game's procedure, and the
model that applies one input at a time (`Table.apply`)."""
from controller.table.core import Corrected, Outcome, Table
from controller.table.inputs import Command, command, parse_input
from controller.table.states import HOLD, IDLE, SHOE_ENDED, dealing, step_in

__all__ = ["Table", "Outcome", "Corrected", "Command", "command", "parse_input", "HOLD",
           "IDLE", "SHOE_ENDED", "dealing", "step_in"]
