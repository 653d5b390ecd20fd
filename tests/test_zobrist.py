"""Zobrist keys: the incremental key kept by make/unmake equals the key computed
from scratch (movegen.compute_hash) and the key of the same position set up
from its FEN (same e.p. convention: an e.p. square is part of the key only when
an e.p. capture is legal); threefold repetition detection."""
from __future__ import annotations

import pytest

from engine.rules import movegen as G
from engine.rules import layout as L
from engine.rules.position import Position
from tests.conftest import VARIANTS, playouts


def _scratch(pos):
    return int(G.compute_hash(pos.board, pos.st, pos.vt, pos.zob))


def _check(pos, where):
    k = pos.key
    assert k == _scratch(pos), where
    assert k == Position.from_fen(pos.fen(), pos.variant.name).key, where
    assert int(pos.hist[pos.ply]) == k, where


@pytest.mark.parametrize("variant", VARIANTS)
def test_incremental_key_on_random_playouts(variant):
    """Along each game, and for every legal move at every 3rd position: after make
    and after unmake the key equals the from-scratch key and the FEN key, and
    unmake restores board, state and key exactly."""
    games = playouts(variant, 20, 120, 5) + playouts(variant, 30, 40, 6, start_fen="endgame",
                                                     end_material=32, mate_bias=1.0, stalemate_bias=1.0)
    checked = 0
    eps = 0
    for g in games:
        pos = Position.from_fen(g.start_fen, variant)
        _check(pos, g.start_fen)
        for i, mv in enumerate(g.moves):
            if i % 3 == 0:
                board0, st0 = pos.board.copy(), pos.st.copy()
                for m in pos.legal_moves():
                    pos.push(m)
                    _check(pos, f"{g.fens[i]} + {pos.uci(m)}")
                    eps += int(pos.st[L.S_EP] != 0)
                    pos.pop()
                    _check(pos, f"{g.fens[i]} + {pos.uci(m)} undone")
                    assert (pos.board == board0).all() and (pos.st == st0).all()
                    checked += 2
            pos.push_uci(mv)
            _check(pos, f"{g.fens[i]} + {mv}")
            checked += 1
        # unmake the whole game back to the start
        for i in range(len(g.moves) - 1, -1, -1):
            pos.pop()
            assert pos.fen() == g.fens[i]
            _check(pos, f"undo to {g.fens[i]}")
            checked += 1
    assert checked >= 10000
    if variant != "knightrelay":
        assert eps >= 5  # positions with a live e.p. square were exercised


def test_key_depends_on_side_castling_and_ep():
    a = Position.from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "chess")
    b = Position.from_fen("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "chess")
    c = Position.from_fen("r3k2r/8/8/8/8/8/8/R3K2R w Kkq - 0 1", "chess")
    d = Position.from_fen("r3k2r/8/8/8/8/8/8/R3K2R w - - 0 1", "chess")
    assert len({a.key, b.key, c.key, d.key}) == 4
    e1 = Position.from_fen("8/8/8/1Pp5/8/8/8/K6k w - c6 0 2", "chess")
    e2 = Position.from_fen("8/8/8/1Pp5/8/8/8/K6k w - - 0 2", "chess")
    assert e1.key != e2.key
    # an e.p. square with no legal capture is not part of the key
    f1 = Position.from_fen("8/8/8/KPp4r/8/8/8/7k w - c6 0 2", "chess")
    f2 = Position.from_fen("8/8/8/KPp4r/8/8/8/7k w - - 0 2", "chess")
    assert f1.key == f2.key
    # the move counters are not
    assert Position.from_fen("4k3/8/8/8/8/8/8/4K3 w - - 7 30").key == \
        Position.from_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1").key


SHUFFLE = {
    "chess": (None, ["g1f3", "g8f6", "f3g1", "f6g8"]),
    "knightrelay": (None, ["g1f3", "g8f6", "f3g1", "f6g8"]),
    "grand": (None, ["b2c4", "b9c7", "c4b2", "c7b9"]),
    "capablanca": (None, ["i1h3", "i8h6", "h3i1", "h6i8"]),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_threefold_repetition(variant):
    fen, cycle = SHUFFLE[variant]
    pos = Position.from_fen(fen, variant)
    start = pos.key
    statuses = []
    for m in cycle * 2:
        pos.push_uci(m)
        statuses.append(pos.status())
    # the start position occurs for the 2nd time after 4 plies, the 3rd after 8
    assert statuses == ["ongoing"] * 7 + ["repetition"]
    assert pos.key == start
    assert pos.result() == "1/2-1/2"
    pos.pop()
    assert pos.status() == "ongoing"


def test_repetition_needs_same_castling_rights():
    # the king goes out and back: same placement, but castling rights differ from the first occurrence
    pos = Position.from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "chess")
    for m in ["e1f1", "e8f8", "f1e1", "f8e8"] * 2:
        pos.push_uci(m)
    # positions with rights (ply 0) differ from those without (plies 4, 8): only 2 occurrences
    assert pos.status() == "ongoing"
    for m in ["e1f1", "e8f8", "f1e1", "f8e8"]:
        pos.push_uci(m)
    assert pos.status() == "repetition"


def test_repetition_window_stops_at_irreversible_move():
    pos = Position.from_fen(None, "chess")
    for m in ["g1f3", "g8f6", "f3g1", "f6g8"]:
        pos.push_uci(m)
    # a pawn move and back-and-forth: the earlier occurrences are before the pawn move
    pos.push_uci("e2e3")
    for m in ["g8f6", "g1f3", "f6g8", "f3g1"]:
        pos.push_uci(m)
    assert pos.status() == "ongoing"
    for m in ["g8f6", "g1f3", "f6g8", "f3g1"]:
        pos.push_uci(m)
    assert pos.status() == "repetition"


def test_repetition_after_fen_setup_counts_only_played_positions():
    pos = Position.from_fen("4k3/8/8/8/8/8/8/R3K3 w - - 40 60", "chess")
    for m in ["a1a2", "e8d8", "a2a1", "d8e8"]:
        pos.push_uci(m)
    assert pos.status() == "ongoing"
    for m in ["a1a2", "e8d8", "a2a1", "d8e8"]:
        pos.push_uci(m)
    assert pos.status() == "repetition"
