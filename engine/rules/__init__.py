"""The rules core: board layout, variant tables, numba move generator, positions, FEN, SAN.

Imports only :mod:`variants` (data). Nothing here knows about search or protocols.
"""
