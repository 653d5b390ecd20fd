"""Differential test of the move picker (search.movepick) against independent move generators:
pyffish (Fairy-Stockfish: chess, grand, capablanca) and the pure-Python Knight Relay reference
(tests/kr_reference.py), on seeded random playouts from the start and from random endgames
(captures, promotions, castling, e.p., relays, checks, mates).

At each sampled position the picker is started with a TT move, two killers and a counter move
drawn from the position's legal moves (quiet and noisy), from other positions' moves (stale
hints, as from a TT collision or another branch) and from junk values, and run to the end:

* it hands out exactly the oracle's legal moves, each once (the TT move and the refutations are
  tested legal without generation, ``is_legal_move``; the captures and quiets are generated
  separately, ``GEN_NOISY``/``GEN_QUIET``);
* the TT move comes first if and only if it is legal; a killer or the counter move is handed out
  in the refutation band if and only if it is a legal quiet move other than the TT move (once);
* quiescence's picker hands out exactly the oracle's captures and promotions (every legal move
  in check), each once.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from engine.rules import layout as L
from engine.rules.movegen import GEN_ALL, GEN_NOISY, GEN_QUIET, gen_legal
from engine.rules.position import Position
from search import movepick as P
from tests import kr_reference
from tests.conftest import playouts
from tests.test_movepick import Node, PLY

sf = pytest.importorskip("pyffish")

VARIANTS = ("chess", "grand", "knightrelay", "capablanca")


def _oracle(variant, fen):
    if variant == "knightrelay":
        return set(kr_reference.legal_moves(fen))
    return set(sf.legal_moves(variant, fen, []))


def _positions(variant):
    """About 150 positions: every third of seeded random games from the start and from endgames."""
    fens = []
    for g in playouts(variant, n_games=6, max_plies=120, seed=3) + \
            playouts(variant, n_games=10, max_plies=40, seed=4, start_fen="endgame"):
        fens += g.fens[::3]
    return fens


def _gen(pos, mode):
    moves = np.zeros(512, np.int32)
    n = int(gen_legal(pos.board, pos.st, pos.vt, moves, 0, np.int64(mode)))
    return [int(m) for m in moves[:n]]


@pytest.mark.parametrize("variant", VARIANTS)
def test_picker_hands_out_exactly_the_legal_moves(variant):
    rng = random.Random(f"picker-{variant}")
    stale = []                      # moves of earlier positions: hints that may not fit here
    npos = ncheck = ntt = nrefut = npromo = ncastle = nrelay = 0
    for k, fen in enumerate(_positions(variant)):
        pos = Position.from_fen(fen, variant)
        legal = [int(m) for m in pos.legal_moves()]
        oracle = _oracle(variant, fen)
        uci = {m: pos.uci(m) for m in legal}
        assert set(uci.values()) == oracle, fen
        node = Node(pos, seed=k)
        ncheck += node.check
        # the generator's two halves partition its legal moves
        noisy, quiet = _gen(pos, GEN_NOISY), _gen(pos, GEN_QUIET)
        assert sorted(noisy + quiet) == sorted(_gen(pos, GEN_ALL)) == sorted(legal), fen
        assert all(node.noisy(m) for m in noisy) and not any(node.noisy(m) for m in quiet), fen
        for m in legal:
            npromo += (m & L.MOVE_PROMO_BITS) != 0
            ncastle += (m & L.MOVE_CASTLE_BIT) != 0
        if variant == "knightrelay":
            # relayed moves: a piece other than a knight (or the king) making a knight's leap
            nrelay += sum(1 for m in legal if pos.board[m & L.SQ_MASK] & 15 not in (L.KNIGHT, L.KING)
                          and ((m >> L.MOVE_TO_SHIFT) & L.SQ_MASK) - (m & L.SQ_MASK) in L.KNIGHT_OFFSETS)
        hints = legal + stale[-40:] + [0, -3, 123456789, rng.getrandbits(24)]
        for _ in range(3):
            ttm, k1, k2, cm = (rng.choice(hints) for _ in range(4))
            node.ss[PLY]["killer1"], node.ss[PLY]["killer2"] = k1, k2
            node.counter[node.ss[PLY - 1]["cmh"]] = cm
            node.init(ttm)
            got = node.drain()
            moves = [m for m, _ in got]
            assert sorted(moves) == sorted(legal), (fen, ttm, k1, k2, cm)     # each legal move once
            assert {uci[m] for m in moves} == oracle
            if ttm in legal:
                ntt += 1
                assert got[0] == (ttm, P.ORD_TT), fen
            else:
                assert all(s != P.ORD_TT for _, s in got), fen
            if not node.check:
                refut = [m for m, s in got if P.ORD_COUNTER <= s < P.ORD_NOISY]
                want = []
                for m in (k1, k2, cm):
                    if m in legal and m != ttm and not node.noisy(m) and m not in want:
                        want.append(m)
                assert refut == want, (fen, ttm, k1, k2, cm)
                nrefut += len(refut)
        # quiescence: the captures and promotions, every legal move in check
        node.call(P.qpicker_init)
        qs = []
        while True:
            m, _ = (int(x) for x in node.call(P.next_qmove))
            if m == 0:
                break
            qs.append(m)
        assert sorted(qs) == sorted(legal if node.check else [m for m in legal if node.noisy(m)]), fen
        stale += legal
        npos += 1
    assert npos >= 100 and ncheck >= 5 and ntt >= 50 and nrefut >= 50
    assert npromo >= 1
    if variant == "knightrelay":
        assert nrelay >= 20
    if variant in ("chess", "capablanca", "knightrelay"):
        assert ncastle >= 1

