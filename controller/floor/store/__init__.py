"""The floor store: every table's journal records, from the floor feed's broker into one
PostgreSQL database (`service` subscribes and writes, `ingest` is what one transaction does,
`schema` creates and migrates the tables, `db` reaches the server and words its refusals,
`reader` answers recall, audit, report and verify-journal from it, `figures` what the pit view
counts). Needs psycopg 3 (`pip install 'tablectl[floor]'`); a table PC does not."""
