"""Cardinal engine core: position state, FEN, numba move generator, perft, protocols.

Importing :mod:`engine` is cheap (no numba); :class:`Position` and the numba
core load on first use, so the protocol layer can answer ``uci`` at once.
"""
__version__ = "0.1.0"


def __getattr__(name):
    if name in ("Position", "FenError"):
        from .rules import position
        return getattr(position, name)
    raise AttributeError(name)
