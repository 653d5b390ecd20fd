"""gives_check (engine/rules/checks.py) answers exactly what make + in_check + unmake
would, for every legal move of random positions in every variant (direct, discovered,
relayed, promotion, en-passant and castling checks), and leaves the arrays untouched."""
import numpy as np
import pytest

from engine.rules import layout as L
from engine.rules.checks import gives_check
from tests.conftest import VARIANTS, playouts


def _check_position(pos, seen):
    board0, st0 = pos.board.copy(), pos.st.copy()
    for m in pos.legal_moves():
        got = bool(gives_check(pos.board, pos.st, pos.stack, pos.hist, pos.vt, pos.zob, m))
        assert np.array_equal(pos.board, board0) and np.array_equal(pos.st, st0), pos.uci(m)
        pos.push(m)
        want = pos.is_check()
        pos.pop()
        assert got == want, (pos.fen(), pos.uci(m), got, want)
        if want:
            flags = L.move_flags(m)
            kind = ("castle" if flags & L.F_CASTLE else "ep" if flags & L.F_EP
                    else "promo" if L.move_promo(m) else "other")
            seen[kind] = seen.get(kind, 0) + 1
            seen["total"] = seen.get("total", 0) + 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_gives_check_matches_make_and_in_check(variant):
    from engine.rules.position import Position
    seen = {}
    for start in (None, "endgame"):
        for g in playouts(variant, n_games=12, max_plies=120, seed=7, start_fen=start):
            for fen in g.fens[::3]:
                _check_position(Position.from_fen(fen, variant), seen)
    assert seen.get("total", 0) >= 200, seen     # the sample really contains checking moves


@pytest.mark.parametrize("fen, variant, move, check", [
    # relayed check: the rook on d6 is relayed by the knight on b5 and attacks f7 / e8 by a knight jump
    ("4k3/8/8/1N6/8/3R4/8/4K3 w - - 0 1", "knightrelay", "d3d6", True),
    # a knight move that relays a friend into check (the knight itself attacks nothing)
    ("4k3/8/8/8/2R5/8/8/4K1N1 w - - 0 1", "knightrelay", "g1e2", False),
    ("8/8/8/3k4/8/2R5/8/4K1N1 w - - 0 1", "knightrelay", "g1e2", True),
    # en passant: the captured pawn uncovers the bishop's diagonal; the capturing pawn uncovers another
    ("k7/8/8/3pP3/8/8/8/K6B w - d6 0 1", "chess", "e5d6", True),
    ("7k/8/8/3pP3/8/8/8/B6K w - d6 0 1", "chess", "e5d6", True),
    ("7k/8/8/3pP3/8/8/8/B6K w - d6 0 1", "chess", "e5e6", True),
    ("7k/8/8/3pP3/8/8/8/1B5K w - d6 0 1", "chess", "e5d6", False),
    # promotion: the new piece gives the check (a knight on e8 attacks d6 and f6, not h6)
    ("8/4P3/7k/8/8/8/8/K7 w - - 0 1", "chess", "e7e8n", False),
    ("8/4P3/3k4/8/8/8/8/K7 w - - 0 1", "chess", "e7e8n", True),
    ("8/4P3/7k/8/8/8/8/K7 w - - 0 1", "chess", "e7e8q", False),
    ("8/4P3/8/7k/8/8/8/K7 w - - 0 1", "chess", "e7e8q", True),
    # castling gives check with the rook
    ("5k2/8/8/8/8/8/8/4K2R w K - 0 1", "chess", "e1g1", True),
])
def test_gives_check_cases(fen, variant, move, check):
    from engine.rules.position import Position
    pos = Position.from_fen(fen, variant)
    m = next(x for x in pos.legal_moves() if pos.uci(x) == move)
    assert bool(gives_check(pos.board, pos.st, pos.stack, pos.hist, pos.vt, pos.zob, m)) is check
    pos.push(m)
    assert pos.is_check() is check
