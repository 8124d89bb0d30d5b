"""A stand-in for Windows' msvcrt, only for building PyBaccarat 0.18 on Linux (bench/engine.py).

PyBaccarat's setup.py imports pybaccarat.baccarat, which imports `getch` from msvcrt. Any other
importer (subprocess probes for msvcrt to tell whether it runs on Windows) still finds none.
"""
import sys

_frame = sys._getframe(1)
while _frame is not None and _frame.f_code.co_filename.startswith("<frozen"):
    _frame = _frame.f_back
if _frame is None or "pybaccarat" not in _frame.f_code.co_filename:
    raise ModuleNotFoundError("No module named 'msvcrt'", name="msvcrt")


def getch() -> bytes:
    raise RuntimeError("no Windows console here")
