"""Knight Relay: the numba generator (engine.Position) against the plain
pure-Python reference (tests/kr_reference.py, written from the rules and
sharing no code with the engine), plus one test per rule of Knight Relay
Chess against the numba Position.

Differential sample: 30 seeded games from the start position (up to 150
plies, capture-biased) and 100 games from random endgames (up to 60 plies,
biased to mate/stalemate): several thousand positions (at least 2,000 asserted).
Compared at each position: legal move set, in-check flag, game-end status and
the FEN after the move played; at every 8th position the FEN after every legal
move.

Status: the reference judges a single FEN (no game history), so our status is
taken from ``Position.from_fen(fen)`` (no repetition possible). The reference
ranks the 50-move rule before insufficient material and we rank insufficient
material first; both are draws, and a position where both hold is accepted
either way (checked explicitly).
"""
from __future__ import annotations

from collections import Counter

import pytest

from engine.rules.position import Position
from tests import kr_reference as kr
from tests.conftest import playouts

V = "knightrelay"
MIN_POSITIONS = 2000


def _games():
    return (playouts(V, 30, 150, 7, capture_bias=0.6, mate_bias=0.8)
            + playouts(V, 100, 60, 8, capture_bias=0.5, mate_bias=1.0, end_material=32,
                       stalemate_bias=1.0, start_fen="endgame"))


def _pos(fen):
    return Position.from_fen(fen, V)


def _moves_from(pos, square):
    return {u for u in pos.legal_uci() if u.startswith(square)}


# --------------------------------------------------------------------------- differential

def test_sample_size_and_outcomes():
    gs = _games()
    n = sum(len(g.fens) for g in gs)
    assert n >= MIN_POSITIONS, n
    finals = Counter(g.final_status for g in gs)
    for cat in ("checkmate", "stalemate", "insufficient"):
        assert finals[cat] >= 3, finals
    # relayed moves really occur in the sample (non-knight pieces making knight jumps)
    jumps = 0
    for g in gs:
        for fen, mv in zip(g.fens, g.moves):
            df = abs(ord(mv[0]) - ord(mv[2]))
            dr = abs(int(mv[1]) - int(mv[3]))
            if {df, dr} == {1, 2}:
                pos = _pos(fen)
                if pos.piece_at(pos.parse_uci(mv) & 0xFF).upper() != "N":
                    jumps += 1
    assert jumps >= 50, jumps


def test_legal_moves_check_status_vs_reference():
    gs = _games()
    bad = []
    n = 0
    for g in gs:
        for fen, legal, check in zip(g.fens, g.legal, g.checks):
            n += 1
            ref = kr.legal_moves(fen)
            if ref != legal:
                bad.append(f"{fen}: ours-only {sorted(set(legal) - set(ref))}, "
                           f"reference-only {sorted(set(ref) - set(legal))}")
            if kr.in_check(fen) != check:
                bad.append(f"{fen}: in check ours {check}, reference {not check}")
            ours = _pos(fen).status()
            theirs = kr.status(fen)
            if ours != theirs and not (ours == "insufficient" and theirs == "fifty"
                                       and kr._insufficient(kr._parse_fen(fen).board)):
                bad.append(f"{fen}: status ours {ours}, reference {theirs}")
    assert n >= MIN_POSITIONS
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:8])


def test_fen_after_make_vs_reference():
    gs = _games()
    bad = []
    k = 0
    for g in gs:
        for i, mv in enumerate(g.moves):
            ref = kr.make(g.fens[i], mv)
            if ref != g.fens[i + 1]:
                bad.append(f"{g.fens[i]} + {mv}: ours {g.fens[i + 1]}, reference {ref}")
            k += 1
            if k % 8:
                continue
            pos = _pos(g.fens[i])
            for m in pos.legal_moves():
                u = pos.uci(m)
                pos.push(m)
                ours = pos.fen()
                pos.pop()
                ref = kr.make(g.fens[i], u)
                if ours != ref:
                    bad.append(f"{g.fens[i]} + {u}: ours {ours}, reference {ref}")
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:8])


# --------------------------------------------------------------------------- worked example (variants/rules/knightrelay.md)

def test_example_relayed_pawn_jumps():
    """Nd4 relays Pe6: besides its pawn moves it goes or captures like a knight to
    c7, c5, f4, g5, g7 -- but not to d8 or f8 on the last rank."""
    pos = _pos("3r1b2/2p5/4P3/6p1/3N4/8/8/K6k w - - 0 1")  # c7 and g5 hold black pawns
    assert _moves_from(pos, "e6") == {"e6e7", "e6c7", "e6c5", "e6f4", "e6g5", "e6g7"}
    empty = _pos("8/8/4P3/8/3N4/8/8/K6k w - - 0 1")
    assert _moves_from(empty, "e6") == {"e6e7", "e6c7", "e6c5", "e6f4", "e6g5", "e6g7"}


def test_example_relayed_pawn_does_not_check_last_rank():
    """...so it does not check a black king on d8 (nor f8)."""
    for fen in ("3k4/8/4P3/8/3N4/8/8/K7 b - - 0 1", "5k2/8/4P3/8/3N4/8/8/K7 b - - 0 1"):
        pos = _pos(fen)
        assert not pos.is_check(), fen
    # the king may step onto d8/f8
    pos = _pos("4k3/8/4P3/8/3N4/8/8/K7 b - - 0 1")
    assert {"e8d8", "e8f8"} <= set(pos.legal_uci())
    # but a relayed pawn on a middle rank does give check by knight power
    assert _pos("8/8/3k4/8/4P3/8/3N4/K7 b - - 0 1").is_check()


def test_example_knight_b7_no_check_no_capture():
    """Nb7 does not check the king on d8 and cannot take a black pawn on a5."""
    pos = _pos("3k4/1N6/8/p7/8/8/8/K7 b - - 0 1")
    assert not pos.is_check()
    pos = _pos("3k4/1N6/8/p7/8/8/8/K7 w - - 0 1")
    assert _moves_from(pos, "b7") == {"b7c5", "b7d6"}  # not a5 (pawn), not d8 (king)


def test_example_queen_cannot_capture_knight():
    """A white queen cannot capture a black knight on c3 (the knight still blocks her)."""
    pos = _pos("4k3/8/8/8/8/2n5/8/Q3K3 w - - 0 1")
    q = _moves_from(pos, "a1")
    assert "a1b2" in q and "a1c3" not in q and "a1d4" not in q


def test_example_knight_c2_gives_no_check():
    """A black knight on c2 does not check a white king a knight's move away (e1 or a1)."""
    assert not _pos("4k3/8/8/8/8/8/2n5/4K3 w - - 0 1").is_check()
    assert not _pos("4k3/8/8/8/8/8/2n5/K7 w - - 0 1").is_check()
    # the king may stand a knight's move from it, but may not capture it
    assert "e1e2" in _pos("4k3/8/8/8/8/8/2n5/4K3 w - - 0 1").legal_uci()
    assert "d1c2" not in _pos("4k3/8/8/8/8/8/2n5/3K4 w - - 0 1").legal_uci()


def test_example_qd6_relayed_mate():
    """A white queen arriving on d6 is relayed by Nb7, attacks c8 and e8 by knight
    power: with the king on d8 boxed in, Qd6 is mate."""
    pos = _pos("3k4/1N6/8/8/8/8/8/K2Q4 w - - 0 1")
    mv = pos.parse_uci("d1d6")
    assert pos.san(mv) == "Qd6#"
    pos.push(mv)
    assert pos.fen() == "3k4/1N6/3Q4/8/8/8/8/K7 b - - 1 1"
    assert pos.is_check() and pos.legal_moves() == [] and pos.status() == "checkmate"
    assert pos.result() == "1-0"
    for k in ("2k5", "4k3"):
        assert _pos(f"{k}/1N6/3Q4/8/8/8/8/K7 b - - 0 1").is_check()
    # without the relaying knight, no knight power: the king escapes to c8/e8
    assert set(_pos("3k4/8/3Q4/8/8/8/8/KN6 b - - 0 1").legal_uci()) == {"d8c8", "d8e8"}


# --------------------------------------------------------------------------- the rule bullets

def test_relay_judged_before_the_move_and_only_for_non_king_non_knight():
    # Ra1 relayed by Nc2: knight jump a1b3, but not onto its own knight
    pos = _pos("4k3/8/8/8/8/8/2N5/R3K3 w - - 0 1")
    assert "a1b3" in pos.legal_uci() and "a1c2" not in pos.legal_uci()
    # not relayed with the knight elsewhere
    assert "a1b3" not in _pos("4k3/8/8/8/8/8/8/R3K2N w - - 0 1").legal_uci()
    # the king gets no knight power from Nc2
    assert _moves_from(_pos("4k3/8/8/8/8/8/2N5/4K3 w - - 0 1"), "e1") == {"e1d1", "e1d2", "e1e2", "e1f1", "e1f2"}
    # knights defending each other gain nothing (they cannot capture either)
    assert _moves_from(_pos("4k3/8/8/8/8/1N1p4/8/2N1K3 w - - 0 1"), "c1") == {"c1a2", "c1e2"}
    # relayed bishop: jump and capture like a knight (not a knight)
    pos = _pos("4k3/8/8/3p4/2n5/4B3/8/3NK3 w - - 0 1")  # Be3 relayed by Nd1 (d1-e3)
    b = _moves_from(pos, "e3")
    assert {"e3d5", "e3c2", "e3g2", "e3g4", "e3f5", "e3f1", "e3c4"} & b == {"e3d5", "e3c2", "e3g2", "e3g4", "e3f5", "e3f1"}
    # the power lasts only while the knight defends the piece
    pos = _pos("4k3/8/8/8/8/8/2N5/R3K3 w - - 0 1")
    pos.push_uci("c2e3")
    pos.push_uci("e8d8")
    assert "a1b3" not in pos.legal_uci()
    # judged before the move: a relayed piece may jump away from its knight (and lose the power)
    pos = _pos("4k3/8/8/8/8/8/2N5/R3K3 w - - 0 1")
    pos.push_uci("a1b3")
    pos.push_uci("e8d8")
    assert "b3d4" not in pos.legal_uci() and "b3b8" in pos.legal_uci()


def test_relayed_pawn_never_jumps_to_first_or_last_rank():
    # white pawn c2 relayed by Nb4: a3, e3, d4 yes; a1, e1 (first rank) no
    assert _moves_from(_pos("4k3/8/8/8/1N6/8/2P5/7K w - - 0 1"), "c2") == {"c2c3", "c2c4", "c2a3", "c2e3", "c2d4"}
    # black pawn d2 relayed by nc4: no jump to b1/f1 (its last rank), no check on b1
    pos = _pos("4k3/8/8/8/2n5/8/3p4/1K6 b - - 0 1")
    assert _moves_from(pos, "d2") == {"d2d1q", "d2d1r", "d2d1b", "d2d1n", "d2b3", "d2f3", "d2e4"}
    assert not _pos("4k3/8/8/8/2n5/8/3p4/1K6 w - - 0 1").is_check()
    # white pawn b7 relayed by Nd6 never jumps to d8 nor checks a king there
    pos = _pos("3k4/1P6/3N4/8/8/8/8/K7 b - - 0 1")
    assert not pos.is_check()
    assert "b7d8" not in _pos("3r4/1P4k1/3N4/8/8/8/8/K7 w - - 0 1").legal_uci()


def test_pawn_back_on_second_rank_double_steps():
    pos = _pos("4k3/8/8/8/4P3/2N5/8/4K3 w - - 7 5")
    pos.push_uci("e4d2")  # relayed jump back to its second rank
    assert pos.fen() == "4k3/8/8/8/8/2N5/3P4/4K3 b - - 0 5"  # pawn move: 50-move counter reset
    pos.push_uci("e8e7")
    assert {"d2d3", "d2d4"} <= set(pos.legal_uci())
    mv = pos.parse_uci("d2d4")
    pos.push(mv)
    assert pos.fen() == "8/4k3/8/8/3P4/2N5/8/4K3 b - - 0 6"  # no e.p. square


def test_knights_neither_capture_nor_are_captured():
    pos = _pos("4k3/8/8/2p5/1n6/3N4/8/4K3 w - - 0 1")
    # Nd3: not b4 (enemy knight), not c5 (enemy pawn: knights cannot capture), not e1 (own king)
    assert _moves_from(pos, "d3") == {"d3b2", "d3c1", "d3e5", "d3f4", "d3f2"}
    # no piece, king included, may take a knight
    pos = _pos("4k3/8/8/8/8/8/3n4/R3K3 w - - 0 1")
    assert "e1d2" not in pos.legal_uci()
    assert "b2c3" in _pos("4k3/8/8/8/8/2p5/1P6/4K3 w - - 0 1").legal_uci()  # a pawn takes a pawn on c3
    pos = _pos("4k3/8/8/8/8/2n5/1P6/4K3 w - - 0 1")  # ... but not a knight
    assert "b2c3" not in pos.legal_uci()
    # a knight still blocks sliders and pawn steps
    pos = _pos("4k3/8/8/8/8/1n6/1P6/R3K3 w - - 0 1")
    assert "b2b3" not in pos.legal_uci() and "b2b4" not in pos.legal_uci()


def test_knights_give_no_check_and_do_not_stop_castling():
    # black knight e3 covers f1, d1, c2, g2: castling both ways is legal
    pos = _pos("4k3/8/8/8/8/4n3/8/R3K2R w KQ - 0 1")
    assert {"e1g1", "e1c1"} <= set(pos.legal_uci())
    pos.push_uci("e1g1")
    assert pos.fen() == "4k3/8/8/8/8/4n3/8/R4RK1 b - - 1 1"
    # a knight on a square next to the castling path blocks nothing; on the path it blocks
    assert "e1g1" not in _pos("4k3/8/8/8/8/8/8/R3KN1R w KQ - 0 1").legal_uci()
    # kings may stand a knight's move from enemy knights; a promoted knight gives no check either
    assert not _pos("3N4/5k2/8/8/8/8/8/K7 b - - 0 1").is_check()


def test_promotion_to_knight_gives_a_passive_knight():
    pos = _pos("8/4P3/8/8/8/8/8/K6k w - - 3 10")
    assert _moves_from(pos, "e7") == {"e7e8q", "e7e8r", "e7e8b", "e7e8n"}
    pos.push_uci("e7e8n")
    assert pos.fen() == "4N3/8/8/8/8/8/8/K6k b - - 0 10"
    pos = _pos("4N3/6k1/8/8/8/8/8/K7 b - - 0 1")
    assert not pos.is_check()  # e8-g7 is a knight move


def test_relayed_checks_count_for_castling():
    # Rh3 relayed by ng5 attacks g1 by knight power only: no O-O (not in check now)
    pos = _pos("4k3/8/8/6n1/8/7r/8/4K2R w K - 0 1")
    assert not pos.is_check() and "e1g1" not in pos.legal_uci()
    # the attacked square is f1 (passed over): Rh2 relayed by ng4 (g4-h2) attacks f1
    pos = _pos("4k3/8/8/8/6n1/8/7r/4K2R w K - 0 1")
    assert "e1g1" not in pos.legal_uci()
    # relay gone: castling legal again
    assert "e1g1" in _pos("n3k3/8/8/8/8/7r/8/4K2R w K - 0 1").legal_uci()
    # Bd3 relayed by ne5 checks e1 by knight power: no castling out of check, no king step onto f2
    pos = _pos("4k3/8/8/4n3/8/3b4/8/4K2R w K - 0 1")
    assert pos.is_check()
    assert "e1g1" not in pos.legal_uci() and "e1f2" not in pos.legal_uci()


def test_no_en_passant_and_incoming_ep_square_ignored():
    pos = _pos("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1")
    assert "e5d6" not in pos.legal_uci()
    assert pos.fen() == "4k3/8/8/3pP3/8/8/8/4K3 w - - 0 1"
    assert pos.key == _pos("4k3/8/8/3pP3/8/8/8/4K3 w - - 0 1").key
    pos = _pos("4k3/3p4/8/4P3/8/8/8/4K3 b - - 0 1")
    pos.push_uci("d7d5")
    assert pos.fen() == "4k3/8/8/3pP3/8/8/8/4K3 w - - 0 2"
    assert "e5d6" not in pos.legal_uci()


@pytest.mark.parametrize("fen,status", [
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", "insufficient"),           # K v K
    ("4k3/8/2n5/8/8/3NN3/8/4K3 w - - 0 1", "insufficient"),      # kings and knights only
    ("4k3/8/8/8/8/8/8/4K1N1 w - - 0 1", "insufficient"),         # K+N v K
    ("4k3/8/8/8/8/3B4/8/4K3 b - - 0 1", "insufficient"),         # K+B v K, no knight
    ("4k3/8/8/8/8/3b4/8/4K3 w - - 0 1", "insufficient"),
    ("4k3/8/8/8/8/3B4/8/N3K3 b - - 0 1", "ongoing"),             # K+B+N: a relayed bishop can mate
    ("4k3/8/8/8/8/3B4/8/4K3 b - - 0 1".replace("4k3", "4kn2"), "ongoing"),  # K+B v K+N
    ("4k3/5b2/8/8/8/3B4/8/4K3 w - - 0 1", "ongoing"),            # K+B v K+B: not listed
    ("4k3/8/8/8/8/8/4P3/4K1N1 w - - 0 1", "ongoing"),            # a pawn
    ("4k3/8/8/8/8/8/8/R3K3 w - - 99 80", "ongoing"),
    ("4k3/8/8/8/8/8/8/R3K3 w - - 100 80", "fifty"),
    ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "stalemate"),
    ("3k4/1N6/3Q4/8/8/8/8/K7 b - - 100 60", "checkmate"),       # mate beats the 50-move rule
])
def test_status_rules(fen, status):
    assert _pos(fen).status() == status


def test_relayed_pawn_jump_resets_fifty_counter_and_san():
    pos = _pos("4k3/8/8/8/5N2/8/4P3/6K1 w - - 37 40")  # Nf4 relays e2 (f4-e2)
    mv = pos.parse_uci("e2g3")
    assert pos.san(mv) == "e2g3"
    assert pos.parse_san("e2g3") == mv
    pos.push(mv)
    assert pos.fen().endswith(" b - - 0 40")
    cap = _pos("4k3/8/8/8/5N2/6p1/4P3/6K1 w - - 37 40")
    mv = cap.parse_uci("e2g3")
    assert cap.san(mv) == "e2xg3"
    assert cap.parse_san("e2xg3") == mv
    cap.push(mv)
    assert cap.fen() == "4k3/8/8/8/5N2/6P1/8/6K1 b - - 0 40"
    # a relayed piece other than a pawn uses ordinary SAN and does not reset the counter
    pos = _pos("4k3/8/8/8/5N2/8/4B3/6K1 w - - 37 40")
    mv = pos.parse_uci("e2g3")
    assert pos.san(mv) == "Bg3"
    pos.push(mv)
    assert pos.fen().endswith(" b - - 38 40")
