"""The search keeps the material + piece-square sums incrementally (search.eval.psq_delta
before each move, from psq_sums at the root); along random games in every variant
(captures, en passant, castling, promotions) the kept sums equal psq_sums from scratch,
and evaluate_inc with them equals evaluate."""
import random

import numpy as np
import pytest

from engine.rules import layout as L
from engine.rules.position import Position
from search.eval import build_eval, evaluate, evaluate_inc, psq_delta, psq_sums, WS_SIZE
from tests.conftest import VARIANTS


@pytest.mark.parametrize("variant", VARIANTS)
def test_incremental_psq_sums_follow_the_game(variant):
    rng = random.Random(f"psq-{variant}")
    ev = build_eval(variant)
    ws = np.zeros(WS_SIZE, np.int32)
    kinds = set()
    for game in range(30):
        pos = Position.from_fen(None, variant)
        mg, eg = psq_sums(pos.board, pos.st, pos.vt, ev)
        kept = [(mg, eg)]
        for ply in range(160):
            legal = pos.legal_moves()
            if not legal:
                break
            castles = [m for m in legal if L.move_flags(m) & L.F_CASTLE]
            caps = [m for m in legal if pos.board[L.move_to(m)] != L.EMPTY or L.move_flags(m) & L.F_EP]
            m = rng.choice(castles) if castles else (rng.choice(caps) if caps and rng.random() < 0.5
                                                     else rng.choice(legal))
            f = L.move_flags(m)
            kinds.add("ep" if f & L.F_EP else "castle" if f & L.F_CASTLE else "promo" if L.move_promo(m) else
                      "capture" if pos.board[L.move_to(m)] != L.EMPTY else "quiet")
            dmg, deg = psq_delta(pos.board, pos.st, pos.vt, ev, m)
            mg, eg = mg + dmg, eg + deg
            pos.push(m)
            kept.append((mg, eg))
            assert (mg, eg) == tuple(psq_sums(pos.board, pos.st, pos.vt, ev)), (pos.fen(), pos.uci(m))
            assert evaluate_inc(pos.board, pos.st, pos.vt, ev, ws, mg, eg) == \
                evaluate(pos.board, pos.st, pos.vt, ev, ws), pos.fen()
    assert {"capture", "quiet", "promo"} <= kinds, kinds
    if variant in ("chess", "capablanca"):
        assert {"ep", "castle"} <= kinds, kinds
