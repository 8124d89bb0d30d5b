"""CRC-16/CCITT-FALSE, the check of the framed shoe protocol and of the shuffler's frames.

Poly 0x1021, init 0xFFFF, unreflected, no final xor; crc16_ccitt_false(b"123456789") == 0x29B1.
binascii.crc_hqx is exactly this CRC from a given initial value, and runs in C.
"""
from __future__ import annotations

import binascii


def crc16_ccitt_false(data: bytes, crc: int = 0xFFFF) -> int:
    """The CRC of `data`; pass a previous result as `crc` to continue over more bytes."""
    return binascii.crc_hqx(data, crc)
