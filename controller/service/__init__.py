"""The table service: the one loop that drains the table's input queue, journal first, and the
sources around it (devices by URL, the control socket, timers)."""
