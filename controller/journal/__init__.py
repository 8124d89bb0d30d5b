"""The journal: an append-only durable store (SQLite, WAL) with a SHA-256 hash chain,
snapshots of the table, and cursors recording how far each publisher has delivered."""
from controller.journal.store import (PAGE, SCHEMA_VERSION, Journal, JournalError, Record,
                                      device_data, system_clock, utc_now)

__all__ = ["Journal", "JournalError", "Record", "SCHEMA_VERSION", "PAGE", "device_data",
           "system_clock", "utc_now"]
