"""The occupancy bitsets in the state vector (``S_OCC``, read by move generation and
the evaluation instead of scanning every square) always match the board: after
set-up from FEN, after every ``make_move`` of random games (captures, en passant,
castling, promotions) and after every ``unmake_move`` back to the start."""
import random

import numpy as np
import pytest

from engine.rules import layout as L
from engine.rules.position import Position
from tests.conftest import VARIANTS


def _occ_from_board(pos):
    want = np.zeros(4, dtype=np.int64)
    vt = pos.vt
    for i in range(int(vt[L.V_NSQUARES])):
        p = int(pos.board[int(vt[L.V_SQUARES + i])])
        if p != L.EMPTY:
            want[2 * (p >> 4) + (i >> 6)] |= L.occ_bit(i)
    return want


def _assert_occ(pos, where):
    got = pos.st[L.S_OCC:L.S_OCC + 4]
    assert np.array_equal(got, _occ_from_board(pos)), (where, pos.fen())


@pytest.mark.parametrize("variant", VARIANTS)
def test_occupancy_follows_make_and_unmake(variant):
    rng = random.Random(f"occ-{variant}")
    kinds = set()
    for game in range(30):
        pos = Position.from_fen(None, variant)
        _assert_occ(pos, "start")
        made = 0
        for ply in range(160):
            legal = pos.legal_moves()
            if not legal:
                break
            caps = [m for m in legal if pos.board[L.move_to(m)] != L.EMPTY or L.move_flags(m) & L.F_EP]
            castles = [m for m in legal if L.move_flags(m) & L.F_CASTLE]
            if castles:
                m = rng.choice(castles)       # random games rarely castle by chance
            else:
                m = rng.choice(caps) if caps and rng.random() < 0.5 else rng.choice(legal)
            f = L.move_flags(m)
            kinds.add("ep" if f & L.F_EP else "castle" if f & L.F_CASTLE else "promo" if L.move_promo(m) else
                      "capture" if pos.board[L.move_to(m)] != L.EMPTY else "quiet")
            pos.push(m)
            made += 1
            _assert_occ(pos, f"after {pos.uci(m)}")
        for _ in range(made):
            pos.pop()
            _assert_occ(pos, "after pop")
    assert {"capture", "quiet", "promo"} <= kinds, kinds
    if variant in ("chess", "capablanca"):
        assert {"ep", "castle"} <= kinds, kinds


@pytest.mark.parametrize("fen, variant", [
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "chess"),
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "chess"),
    ("r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R w - - 0 1", "grand"),
])
def test_occupancy_from_fen(fen, variant):
    _assert_occ(Position.from_fen(fen, variant), "from_fen")
