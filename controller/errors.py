"""Errors of the controller that reach the command line as one line and exit status 2."""


class InputError(ValueError):
    """Bad input from a file or the command line: one line, names where and why."""


class ProfileError(ValueError):
    """A profile that cannot be used; str() is one line: file: key: problem; fix."""

    def __init__(self, where: str, key: str, problem: str, fix: str):
        super().__init__(f"{where}: {key}: {problem}; fix: {fix}")
        self.where, self.key, self.problem, self.fix = where, key, problem, fix


class IrregularityError(Exception):
    """A table irregularity the machine cannot accept in its current state (table goes on hold)."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class CommandRefused(Exception):
    """A dealer or supervisor command that does not apply in the current state or role."""

    def __init__(self, message: str, code: str = "wrong_state", words: object = None):
        super().__init__(message)
        self.code = code
        #: the refusal in plain words (controller.words.Words), for each reader's language
        self.words = words


class Corrected(CommandRefused):
    """A command refused with a correction that is itself recorded (a false coup put right at
    once): the table keeps the events it emitted."""


class TableStopped(Exception):
    """The table cannot go on (its journal cannot be written): one line says why; exit 3."""
