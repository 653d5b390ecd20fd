"""gen_legal's shortcut legality test against the plain one.

``gen_legal`` plays a move on the board only where it can be illegal (king moves,
e.p., pinned pieces, everything while in check; :func:`engine.rules.movegen.pinned_pieces`).
The reference here plays every pseudo-legal move (``_legal_slow``): both must give the
same moves in the same order, in hand-made pin positions and along seeded random games
from every position of tests/data/*.epd. ``is_legal_move`` (one move, before any
generation) must agree with both on every move tried.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from engine.rules import movegen as G
from engine.rules.position import Position
from tests.conftest import read_epd

FILES = {"chess.epd": "chess", "grand.epd": "grand", "knightrelay.epd": "knightrelay",
         "capablanca.epd": "capablanca"}

# pins by every kind of slider, including the compound pieces' slider parts
PIN_POSITIONS = [
    # grand: a black marshal pins the bishop on f3 along the file, a black cardinal the knight on d4
    ("grand", "5k4/10/10/5c4/10/10/2a7/5B4/4N5/5K4 w - - 0 1"),
    # grand: the white rook on b2 pinned on the rank by a black queen, a pawn pinned on the diagonal
    ("grand", "5k4/10/10/10/10/10/10/7b2/6P3/qR3K4 w - - 0 1"),
    # grand: the marshal's knight leap pins nothing (the knight on h5 is free to move)
    ("grand", "5k4/10/10/10/6c3/7N2/10/10/10/5K4 w - - 0 1"),
    # grand: black to move, the rook on i9 pinned towards the king on j10 (a pinned square >= 128
    # in the last line direction, so the packed pins are negative) and a free pawn
    ("grand", "9k/8r1/10/6B3/10/10/p9/10/10/K9 b - - 0 1"),
    # chess: a pawn pinned on the file may still push, one pinned on a diagonal may take the pinner
    ("chess", "4r2k/8/8/8/1b6/2P5/4P3/4K3 w - - 0 1"),
    # chess: e.p. capture that would expose the king along the rank
    ("chess", "8/8/8/KPp4r/8/8/8/7k w - c6 0 1"),
    # knightrelay: a relayed bishop pinned by a rook (its knight jumps leave the line)
    ("knightrelay", "4r2k/8/8/8/4B3/2N5/8/4K3 w - - 0 1"),
    # capablanca: a chancellor (marshal) pins a rook on the rank
    ("capablanca", "5k4/10/10/10/10/10/10/c2R1K4 w - - 0 1"),
]


def _check_node(pos: Position, foreign=()) -> None:
    buf = pos.buf
    n = G.gen_pseudo(pos.board, pos.st, pos.vt, buf, 0, G.GEN_ALL)
    pseudo = [int(m) for m in buf[:n]]
    ref = [m for m in pseudo if G._legal_slow(pos.board, pos.st, pos.vt, m)]
    # is_legal_move (the search's test of a TT move before generation) is exact: every
    # pseudo-legal move, moves of other positions of the game, flag-mangled moves and junk
    check = G.in_check(pos.board, pos.st, pos.vt)
    scratch = np.zeros(G.MAX_MOVES, dtype=np.int32)
    legal = set(ref)
    for m in pseudo + list(foreign) + [m ^ (1 << 20) for m in pseudo[:5]] + [0, -1, 1 << 30]:
        got = G.is_legal_move(pos.board, pos.st, pos.vt, np.int64(m), check, scratch, 0)
        assert got == (m in legal), (pos.fen(), m)
    for mode in (G.GEN_ALL, G.GEN_NOISY):
        out = np.zeros(G.MAX_MOVES, dtype=np.int32)
        n = G.gen_legal(pos.board, pos.st, pos.vt, out, 0, mode)
        got = [int(m) for m in out[:n]]
        if mode == G.GEN_ALL:
            assert got == ref, pos.fen()
        else:
            assert set(got) <= set(ref), pos.fen()


@pytest.mark.parametrize("variant,fen", PIN_POSITIONS)
def test_pin_positions(variant, fen):
    pos = Position.from_fen(fen, variant)
    _check_node(pos)
    for m in pos.legal_moves():
        pos.push(m)
        _check_node(pos)
        pos.pop()


@pytest.mark.parametrize("fname", sorted(FILES))
def test_random_games(fname):
    variant = FILES[fname]
    rng = random.Random(7)
    for fen, _ in read_epd(fname):
        for _game in range(2):
            pos = Position.from_fen(fen, variant)
            seen = []
            for _ply in range(60):
                _check_node(pos, rng.sample(seen, min(len(seen), 8)))
                moves = pos.legal_moves()
                if not moves:
                    break
                seen.extend(moves)
                pos.push(rng.choice(moves))
