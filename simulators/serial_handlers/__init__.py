"""pyserial URL handlers (protocol_<scheme>.py) exposing the simulators' device models.

simulators.install registers this package with drivers.transport (pyserial's
protocol_handler_packages), so
`serial.serial_for_url("shoesim://NAME")` reaches the shoe model registered as NAME.
"""
