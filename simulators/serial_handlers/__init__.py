"""pyserial URL handlers (protocol_<scheme>.py) exposing the simulators' device models.

drivers.transport adds this package to serial.protocol_handler_packages, so
`serial.serial_for_url("shoesim://NAME")` reaches the shoe model registered as NAME.
"""
