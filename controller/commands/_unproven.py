"""What the journal's readers (recall, audit, report, roads) say when it does not verify: one
line on stderr before they show it, and exit status 1 after, so neither a person nor a script
takes a broken journal for the record."""
from __future__ import annotations

import sys


def warn(path: str, command: str) -> int:
    """Check the journal at `path`; print why it does not verify, if it does not. The exit
    status to end with: 0 when it verifies, 1 when not."""
    from controller.journal.proof import reader_check
    why = reader_check(path)
    if why is None:
        return 0
    print(f"tablectl {command}: WARNING: {why}; what follows is what the file holds now, not "
          f"proven to be what was recorded (tablectl verify-journal --journal {path})",
          file=sys.stderr, flush=True)
    return 1
