"""Monitoring for a casino's tools (Prometheus, Zabbix, Nagios): `/metrics` in Prometheus'
text format, `/healthz` (the table's loop is alive) and `/readyz` (devices linked, journal
writable), without credentials, on the web display's server or a `[metrics] listen` of their
own (docs/monitoring.md).

Fed only from what the table publishes — its events, its status after every input, the
journal's write times the loop reports — and from the health view the loop builds on its own
thread when asked (the view `tablectl status` prints); never by reading the table.
`metrics` keeps the figures, `web` serves them.
"""
