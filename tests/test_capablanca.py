"""Capablanca Chess (10x8), added as one variant record: the record's data, its
castling geometry and promotions on hand-made positions (checked against
pyffish, variant ``capablanca``), and the variant over UCI and XBoard.

Perft (tests/data/capablanca.epd) runs in test_perft.py, the random-playout
differential test against pyffish in test_differential.py, and a match against
Fairy-Stockfish in test_real_opponents.py.
"""
from __future__ import annotations

import re

import pytest

import variants
from engine.rules.position import Position
from tests.engine_proc import EngineProcess

V = "capablanca"
START = "rnabqkbcnr/pppppppppp/10/10/10/10/PPPPPPPPPP/RNABQKBCNR w KQkq - 0 1"
OPEN = "r4k3r/10/10/10/10/10/10/R4K3R w KQkq - 0 1"
READY_TIMEOUT = 180.0


def _sf():
    return pytest.importorskip("pyffish")


# ---------------------------------------------------------------- the record
def test_registered_and_outside_the_bench_signature():
    assert V in variants.names() and variants.get(V).name == V
    assert variants.canonical("capablanca") == V
    assert V not in variants.BENCH_SIGNATURE
    rec = variants.get(V)
    assert rec.xboard == "capablanca" and not rec.xboard_pieces   # XBoard knows the variant itself
    assert (rec.width, rec.height, rec.start_fen) == (10, 8, START)
    assert Position.from_fen(None, V).fen() == START


def test_openings_and_bench_positions_are_legal():
    sf = _sf()
    rec = variants.get(V)
    assert len(rec.openings) >= 8 and len(set(rec.openings)) == len(rec.openings)
    for line in rec.openings:
        pos = Position.from_fen(None, V)
        for mv in line.split():
            assert mv in sf.legal_moves(V, pos.fen(), []), (line, mv)
            pos.push_uci(mv)
        assert pos.status() == "ongoing"
    assert rec.bench_positions[0] is None and len(rec.bench_positions) >= 6
    for fen in rec.bench_positions[1:]:
        pos = Position.from_fen(fen, V)
        assert pos.fen() == fen and not pos.warnings
        assert sf.validate_fen(fen, V) == 1, fen
        assert sorted(pos.legal_uci()) == sorted(sf.legal_moves(V, fen, [])), fen


# ---------------------------------------------------------------- castling, promotion, material
def test_castling_moves_king_f_to_i_and_c():
    sf = _sf()
    pos = Position.from_fen(OPEN, V)
    legal = pos.legal_uci()
    assert "f1i1" in legal and "f1c1" in legal
    assert sorted(legal) == sorted(sf.legal_moves(V, OPEN, []))
    for mv, san, rank1, rights in (("f1i1", "O-O", "R6RK1", "kq"), ("f1c1", "O-O-O", "2KR5R", "kq")):
        p = Position.from_fen(OPEN, V)
        m = p.parse_uci(mv)
        assert p.san(m) == san and p.parse_san(san) == m
        p.push(m)
        assert p.fen().split()[0].split("/")[-1] == rank1
        assert p.fen().split()[2] == rights
        assert p.fen() == sf.get_fen(V, OPEN, [mv])
        p.pop()
        assert p.fen() == OPEN
    # king-takes-own-rook input
    p = Position.from_fen(OPEN, V)
    assert p.parse_uci("f1j1") == p.parse_uci("f1i1")
    assert p.parse_uci("f1a1") == p.parse_uci("f1c1")


@pytest.mark.parametrize("fen,absent", [
    # the king crosses or stands on an attacked square: h1 (chancellor), e1 (archbishop), in check
    ("r4k3r/10/10/10/7c2/10/10/R4K3R w KQkq - 0 1", {"f1i1"}),
    ("r4k3r/10/10/10/1a8/10/10/R4K3R w KQkq - 0 1", {"f1c1"}),
    ("r4k3r/10/10/10/10/10/3n6/R4K3R w KQkq - 0 1", {"f1i1", "f1c1"}),
    # destination attacked (i1 by the knight on j3), a piece between king and rook (g1, b1)
    ("r4k3r/10/10/10/10/9n/10/R4K3R w KQkq - 0 1", {"f1i1"}),
    ("r4k3r/10/10/10/10/10/10/R4KN2R w KQkq - 0 1", {"f1i1"}),
    ("r4k3r/10/10/10/10/10/10/RN3K3R w KQkq - 0 1", {"f1c1"}),
    # no right
    ("r4k3r/10/10/10/10/10/10/R4K3R w Qkq - 0 1", {"f1i1"}),
])
def test_castling_refused(fen, absent):
    sf = _sf()
    pos = Position.from_fen(fen, V)
    legal = set(pos.legal_uci())
    assert not (legal & absent)
    assert legal == set(sf.legal_moves(V, fen, []))


def test_castling_allowed_when_only_the_rooks_path_is_attacked():
    sf = _sf()
    fen = "r4k3r/10/10/10/10/10/b9/R4K3R w KQkq - 0 1"     # b1 attacked: the rook crosses it, not the king
    pos = Position.from_fen(fen, V)
    assert "f1c1" in pos.legal_uci()
    assert sorted(pos.legal_uci()) == sorted(sf.legal_moves(V, fen, []))


def test_castling_rights_need_king_and_rook_on_their_squares():
    assert Position.from_fen("r4k3r/10/10/10/10/10/10/R4K4 w KQkq - 0 1", V).fen().split()[2] == "Qkq"
    assert Position.from_fen("r4k3r/10/10/10/10/10/10/R3K4R w KQkq - 0 1", V).fen().split()[2] == "kq"
    # the rook leaving or being captured drops the right
    pos = Position.from_fen(OPEN, V)
    pos.push_uci("j1j8")
    assert pos.fen().split()[2] == "Qq"


def test_promotions_to_six_pieces_without_limit():
    sf = _sf()
    fen = "r4k4/1P8/10/10/10/10/10/QQ3K4 w - - 0 1"    # two queens already: promotion is unlimited
    pos = Position.from_fen(fen, V)
    promos = sorted(m for m in pos.legal_uci() if m.startswith("b7"))
    assert promos == sorted(f"b7{t}{p}" for t in ("b8", "a8") for p in "qcarbn")
    assert sorted(pos.legal_uci()) == sorted(sf.legal_moves(V, fen, []))
    assert pos.san(pos.parse_uci("b7a8a")) == "bxa8=A"
    m = pos.parse_uci("b7a8c")
    assert pos.san(m) == "bxa8=C+"          # the chancellor checks along the rank
    pos.push(m)
    assert pos.is_check() and pos.fen() == sf.get_fen(V, fen, ["b7a8c"])


def test_en_passant():
    sf = _sf()
    pos = Position.from_fen(None, V)
    for mv in ("e2e4", "a7a6", "e4e5", "d7d5"):
        pos.push_uci(mv)
    assert pos.fen().split()[3] == "d6"
    assert "e5d6" in pos.legal_uci()
    pos.push_uci("e5d6")
    assert pos.fen() == sf.get_fen(V, START, ["e2e4", "a7a6", "e4e5", "d7d5", "e5d6"])


@pytest.mark.parametrize("fen,dead", [
    ("10/10/10/4k5/10/10/10/4K5 w - - 0 1", True),          # K v K
    ("10/10/10/4k5/10/10/10/4KN4 w - - 0 1", True),         # K+N v K
    ("10/10/10/4k5/10/10/10/4KB4 b - - 0 1", True),         # K+B v K
    ("10/10/10/4kb4/10/10/10/4KB4 w - - 0 1", True),        # bishops on one colour
    ("10/10/10/4kb4/10/10/10/4K1B3 w - - 0 1", False),      # bishops on both colours
    ("10/10/10/4kn4/10/10/10/4KN4 w - - 0 1", False),       # K+N v K+N
    ("10/10/10/4k5/10/10/10/4KNN3 w - - 0 1", False),       # K+2N v K
    ("10/10/10/4k5/10/10/10/4KA4 w - - 0 1", False),        # K+archbishop v K: mates alone
    ("10/10/10/4k5/10/10/10/4KC4 w - - 0 1", False),        # K+chancellor v K
    ("10/10/10/4k5/10/10/4P5/4K5 w - - 0 1", False),        # K+P v K
])
def test_insufficient_material(fen, dead):
    sf = _sf()
    assert (Position.from_fen(fen, V).status() == "insufficient") == dead
    assert all(sf.has_insufficient_material(V, fen, [])) == dead


# ---------------------------------------------------------------- protocols
def _legal_after(moves, fen=None):
    pos = Position.from_fen(fen, V)
    for m in moves:
        pos.push_uci(m)
    return pos.legal_uci()


def test_uci_variant_and_short_search():
    e = EngineProcess()
    try:
        e.send("uci")
        opts = e.expect("uciok", 30)
        combo = next(ln for ln in opts if "UCI_Variant" in ln)
        assert " var capablanca" in combo
        e.send("setoption name UCI_Variant value capablanca", "ucinewgame", "isready")
        e.expect("readyok", READY_TIMEOUT)
        e.send("position startpos moves e2e4 e7e5", "go movetime 300")
        best = e.expect(r"bestmove .*", 30)[-1].split()[1]
        assert best in _legal_after(["e2e4", "e7e5"])
        # castling written as the king's move, then a search from there
        moves = ["f1i1", "f8c8"]
        e.send(f"position fen {OPEN} moves {' '.join(moves)}", "go depth 4")
        lines = e.expect(r"bestmove .*", 60)
        assert not any("error" in ln.lower() for ln in lines), lines
        assert lines[-1].split()[1] in _legal_after(moves, OPEN)
        e.send("d")
        fen = e.expect(r"Fen: .*", 10)[-1]
        assert fen == "Fen: 2kr5r/10/10/10/10/10/10/R6RK1 w - - 2 2"
    finally:
        assert e.close() == 0


def test_xboard_variant_and_short_search():
    e = EngineProcess()
    try:
        e.send("xboard", "protover 2")
        lines = e.expect("feature done=1", READY_TIMEOUT)
        feat = next(ln for ln in lines if 'variants="' in ln)
        assert "capablanca" in re.search(r'variants="([^"]*)"', feat).group(1).split(",")
        e.send("new", "variant capablanca", "force", "ping 1")
        lines = e.expect("pong 1", 30)
        assert not any(ln.startswith("setup") or ln.startswith("piece") for ln in lines), lines
        # 8 ranks: CECP counts ranks from 1, as UCI does; white castles king side (f1i1)
        moves = "e2e4 e7e5 i1h3 i8h6 f2f3 f7f6 g1f2 g8f7 h1g3 h8g6 f1i1".split()
        for mv in moves:
            e.send(f"usermove {mv}")
        e.send("ping 2")
        lines = e.expect("pong 2", 10)
        assert not any("Illegal" in ln or "Error" in ln for ln in lines), lines
        e.send("level 0 0:05 0.05", "time 500", "otim 500", "go")     # the engine plays black
        mv = e.expect(r"move \S+", 30)[-1].split()[1]
        assert mv in _legal_after(moves)
        assert "f8i8" in _legal_after(moves)      # black may castle too (the engine's choice)
    finally:
        assert e.close() == 0
