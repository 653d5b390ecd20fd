"""Validation of the pure-Python Knight Relay reference generator (tests/kr_reference.py).

The reference is checked against the shared perft data (tests/data/knightrelay.epd and
tests/data/knightrelay_divide.txt) and against hand-worked positions taken from the
rules file variants/rules/knightrelay.md (section "Worked example" and the rule lists).
Nothing here imports the engine.
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import kr_reference as kr  # noqa: E402

EPD = os.path.join(HERE, "data", "knightrelay.epd")
DIVIDE = os.path.join(HERE, "data", "knightrelay_divide.txt")


# ---------------------------------------------------------------------------
# data loading
# ---------------------------------------------------------------------------

def _load_epd():
    cases = []
    with open(EPD) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fen, *groups = line.split(";")
            fen = fen.strip()
            for g in groups:
                d, n = g.split()
                cases.append((fen, int(d[1:]), int(n)))
    return cases


def _load_divide():
    blocks = {}
    fen = None
    with open(DIVIDE) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if ":" in line:
                move, count = line.split(":")
                blocks[fen][move.strip()] = int(count)
            else:
                fen = line
                blocks[fen] = {}
    return blocks


EPD_CASES = _load_epd()
DIVIDE_BLOCKS = _load_divide()


def test_data_files_parsed():
    assert len({fen for fen, _, _ in EPD_CASES}) == 23
    assert len(DIVIDE_BLOCKS) == 11


# ---------------------------------------------------------------------------
# perft against the shared counts
# ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    "fen,depth,expected",
    [c for c in EPD_CASES if c[1] <= 3],
    ids=[f"{c[0].split()[0]}-D{c[1]}" for c in EPD_CASES if c[1] <= 3],
)
def test_perft_epd_up_to_depth3(fen, depth, expected):
    assert kr.perft(fen, depth) == expected


# small trees only (every depth-4 count below 200k nodes, three small depth-5 counts),
# so the whole file stays well under a minute
DEEP = [(f, d) for f, d, n in EPD_CASES if d == 4 and n < 200_000] + [
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", 5),
    ("4k3/8/8/8/8/8/3n4/4K3 w - - 0 1", 5),
    ("4k3/8/3R4/8/4N3/8/8/4K3 b - - 0 1", 5),
]


@pytest.mark.parametrize("fen,depth", DEEP, ids=[f"{f.split()[0]}-D{d}" for f, d in DEEP])
def test_perft_epd_deep_small(fen, depth):
    expected = {(f, d): n for f, d, n in EPD_CASES}[(fen, depth)]
    assert kr.perft(fen, depth) == expected


SLOW_DEEP = [(f, d, n) for f, d, n in EPD_CASES if d == 4 and n >= 200_000]


@pytest.mark.slow
@pytest.mark.parametrize("fen,depth,expected", SLOW_DEEP, ids=[f"{c[0].split()[0]}-D4" for c in SLOW_DEEP])
def test_perft_epd_depth4_slow(fen, depth, expected):
    """Remaining depth-4 counts (~5-7 s each); run with ``-m slow``."""
    assert kr.perft(fen, depth) == expected


@pytest.mark.parametrize("fen", list(DIVIDE_BLOCKS), ids=[f.split()[0] for f in DIVIDE_BLOCKS])
def test_divide_depth2(fen):
    expected = DIVIDE_BLOCKS[fen]
    got = {m: kr.perft(kr.make(fen, m), 1) for m in kr.legal_moves(fen)}
    assert got == expected


# ---------------------------------------------------------------------------
# Worked example (variants/rules/knightrelay.md), statement by statement
# ---------------------------------------------------------------------------

def _from(fen, sq):
    return {m for m in kr.legal_moves(fen) if m.startswith(sq)}


def test_worked_example_pawn_relay_targets():
    """N d4 relays to P e6: knight jumps to c7, c5, f4, g5, g7, not d8/f8."""
    fen = "8/8/4P3/8/3N4/8/8/K6k w - - 0 1"
    assert _from(fen, "e6") == {"e6e7", "e6c7", "e6c5", "e6f4", "e6g5", "e6g7"}
    # captures like a knight too (on the allowed ranks)
    fen = "8/2r3b1/4P3/2p3q1/3N1p2/8/8/K6k w - - 0 1"
    assert _from(fen, "e6") == {"e6e7", "e6c7", "e6c5", "e6f4", "e6g5", "e6g7"}
    # d8 and f8 (last rank) are never reachable, empty or occupied
    fen = "3r1b2/8/4P3/8/3N4/8/8/K6k w - - 0 1"
    assert "e6d8" not in kr.legal_moves(fen)
    assert "e6f8" not in kr.legal_moves(fen)


def test_worked_example_pawn_relay_does_not_check_last_rank():
    """...so the relayed pawn on e6 does not check a black king on d8."""
    fen = "3k4/8/4P3/8/3N4/8/8/K7 b - - 0 1"
    assert not kr.in_check(fen)
    assert "d8e8" in kr.legal_moves(fen)
    # a king on e8 may step to d8 or f8, both a knight's move from the relayed pawn
    fen2 = "4k3/8/4P3/8/3N4/8/8/K7 b - - 0 1"
    assert "e8f8" in kr.legal_moves(fen2)
    assert "e8d8" in kr.legal_moves(fen2)


def test_worked_example_knight_on_b7_does_not_check_d8():
    fen = "3k4/1N6/8/8/8/8/8/K7 b - - 0 1"
    assert not kr.in_check(fen)


def test_worked_example_knight_cannot_take_pawn_a5():
    fen = "3k4/1N6/8/p7/8/8/8/K7 w - - 0 1"
    moves = _from(fen, "b7")
    assert "b7a5" not in moves
    assert moves == {"b7c5", "b7d6"}  # d8 holds the king: also not capturable


def test_worked_example_queen_cannot_capture_knight_c3():
    fen = "4k3/8/8/8/8/2n5/8/Q3K3 w - - 0 1"
    moves = _from(fen, "a1")
    assert "a1c3" not in moves
    assert "a1b2" in moves  # the knight blocks the diagonal beyond b2
    assert "a1d4" not in moves


def test_worked_example_knight_c2_does_not_check_king():
    # c2 -> e1 and c2 -> a1 are knight moves
    assert not kr.in_check("4k3/8/8/8/8/8/2n5/4K3 w - - 0 1")
    assert not kr.in_check("4k3/8/8/8/8/8/2n5/K7 w - - 0 1")
    # the king may stand a knight's move from the enemy knight, but not take it
    moves = kr.legal_moves("4k3/8/8/8/8/8/2n5/4K3 w - - 0 1")
    assert "e1e2" in moves  # e2 is not attacked (knights attack nothing)
    king = "4k3/8/8/8/8/8/2n5/3K4 w - - 0 1"
    assert "d1c2" not in kr.legal_moves(king)


def test_worked_example_queen_d6_relayed_attacks_c8_e8():
    """A queen on d6 is relayed by Nb7 (b7-d6): it moves to and attacks c8/e8."""
    fen = "8/1N6/3Q4/8/8/8/8/K6k w - - 0 1"
    assert {"d6c8", "d6e8", "d6b5", "d6f5", "d6c4", "d6e4", "d6f7"} <= _from(fen, "d6")
    assert kr.in_check("2k5/1N6/3Q4/8/8/8/8/K7 b - - 0 1")
    assert kr.in_check("4k3/1N6/3Q4/8/8/8/8/K7 b - - 0 1")
    # with the knight elsewhere there is no knight power, so no check
    assert not kr.in_check("2k5/8/3Q4/8/8/8/8/KN6 b - - 0 1")


def test_worked_example_qd6_mate():
    fen = "3k4/1N6/8/8/8/8/8/K2Q4 w - - 0 1"
    assert "d1d6" in kr.legal_moves(fen)
    after = kr.make(fen, "d1d6")
    assert after == "3k4/1N6/3Q4/8/8/8/8/K7 b - - 1 1"
    assert kr.in_check(after)
    assert kr.legal_moves(after) == []
    assert kr.status(after) == "checkmate"
    # without the relaying knight the king escapes to c8/e8
    no_relay = "3k4/8/3Q4/8/8/8/8/KN6 b - - 0 1"
    assert set(kr.legal_moves(no_relay)) == {"d8c8", "d8e8"}


# ---------------------------------------------------------------------------
# further rule checks (variants/rules/knightrelay.md rule lists)
# ---------------------------------------------------------------------------

def test_relayed_rook_gains_knight_moves():
    # the rook on a1 is relayed by Nc2 (a1-c2 is a knight move)
    fen = "4k3/8/8/8/8/8/2N5/R3K3 w - - 0 1"
    assert "a1b3" in kr.legal_moves(fen)
    assert "a1c2" not in kr.legal_moves(fen)
    # not relayed once the knight stands elsewhere
    assert "a1b3" not in kr.legal_moves("4k3/8/8/8/8/8/8/R3K2N w - - 0 1")


def test_king_and_knight_get_no_relay():
    # Nc2 is a knight's move from the king on e1: the king still only steps
    fen = "4k3/8/8/8/8/8/2N5/4K3 w - - 0 1"
    assert _from(fen, "e1") == {"e1d1", "e1d2", "e1e2", "e1f1", "e1f2"}
    # Nb3 and Nc1 defend each other, but a knight never gains capturing power
    fen = "4k3/8/8/8/8/1N1p4/8/2N1K3 w - - 0 1"
    assert _from(fen, "c1") == {"c1a2", "c1e2"}


def test_relayed_pawn_may_not_reach_first_rank():
    # white pawn c2 relayed by Nb4 (b4-c2): may jump to a3, e3, d4 but not to a1/e1
    fen = "4k3/8/8/8/1N6/8/2P5/7K w - - 0 1"
    moves = _from(fen, "c2")
    assert moves == {"c2c3", "c2c4", "c2a3", "c2e3", "c2d4"}
    assert "c2a1" not in moves and "c2e1" not in moves


def test_relayed_pawn_no_attack_on_first_rank_and_no_promotion_jump():
    # black pawn d2 relayed by nc4 (c4-d2); b1 and f1 are knight moves from d2 on rank 1
    fen = "4k3/8/8/8/2n5/8/3p4/1K6 w - - 0 1"
    assert not kr.in_check(fen)
    fen_b = "4k3/8/8/8/2n5/8/3p4/1K6 b - - 0 1"
    moves = _from(fen_b, "d2")
    assert moves == {"d2d1q", "d2d1r", "d2d1b", "d2d1n", "d2b3", "d2f3", "d2e4"}


def test_relayed_pawn_attacks_middle_ranks_and_gives_check():
    # white pawn e4 relayed by Nd2 (d2-e4): attacks d6, f6, c5, g5, c3, g3
    fen = "8/8/3k4/8/4P3/8/3N4/K7 b - - 0 1"
    assert kr.in_check(fen)
    assert "d6c5" not in kr.legal_moves(fen)


def test_pawn_back_on_second_rank_double_steps():
    # Pe4 relayed by Nc3 (c3-e4) jumps back to d2, then may double-step again
    fen = "4k3/8/8/8/4P3/2N5/8/4K3 w - - 7 5"
    assert "e4d2" in kr.legal_moves(fen)
    after = kr.make(fen, "e4d2")
    assert after == "4k3/8/8/8/8/2N5/3P4/4K3 b - - 0 5"  # relayed pawn jump resets the clock
    after = kr.make(after, "e8e7")
    assert after == "8/4k3/8/8/8/2N5/3P4/4K3 w - - 1 6"
    assert {"d2d3", "d2d4"} <= set(kr.legal_moves(after))


def test_relayed_check_and_castling_through_relayed_attack():
    # Rh3 relayed by ng5 (g5-h3) attacks g1 by knight power only: no O-O
    fen = "4k3/8/8/6n1/8/7r/8/4K2R w K - 0 1"
    assert not kr.in_check(fen)
    assert "e1g1" not in kr.legal_moves(fen)
    # knight moved away from the rook: castling is legal again
    assert "e1g1" in kr.legal_moves("n3k3/8/8/8/8/7r/8/4K2R w K - 0 1")
    # Bd3 relayed by ne5 (e5-d3) checks e1 by knight power
    fen = "4k3/8/8/4n3/8/3b4/8/4K2R w K - 0 1"
    assert kr.in_check(fen)
    assert "e1g1" not in kr.legal_moves(fen)
    # the king may not walk onto a relayed-attacked square either
    assert "e1f2" not in kr.legal_moves(fen)


def test_castling_across_knight_covered_square_allowed():
    # black knight on e3 covers f1 and g2 (and c2, d1) but attacks nothing
    fen = "4k3/8/8/8/8/4n3/8/R3K2R w KQ - 0 1"
    moves = kr.legal_moves(fen)
    assert "e1g1" in moves and "e1c1" in moves
    after = kr.make(fen, "e1g1")
    assert after == "4k3/8/8/8/8/4n3/8/R4RK1 b - - 1 1"


def test_castling_needs_empty_squares_knight_blocks():
    fen = "4k3/8/8/8/8/8/8/R3KN1R w KQ - 0 1"
    moves = kr.legal_moves(fen)
    assert "e1g1" not in moves and "e1c1" in moves


def test_no_en_passant_and_ep_field_ignored():
    fen = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1"
    assert "e5d6" not in kr.legal_moves(fen)
    after = kr.make("4k3/3p4/8/4P3/8/8/8/4K3 b - - 0 1", "d7d5")
    assert after == "4k3/8/8/3pP3/8/8/8/4K3 w - - 0 2"


def test_promotion_including_knight():
    fen = "8/4P3/8/8/8/8/8/K6k w - - 3 10"
    moves = _from(fen, "e7")
    assert moves == {"e7e8q", "e7e8r", "e7e8b", "e7e8n"}
    assert kr.make(fen, "e7e8n") == "4N3/8/8/8/8/8/8/K6k b - - 0 10"
    # promoted knight neither checks nor can be captured
    fen = "3N4/5k2/8/8/8/8/8/K7 b - - 0 1"
    assert not kr.in_check(fen)


def test_capture_of_rook_home_square_clears_right():
    fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
    assert kr.make(fen, "a1a8") == "R3k2r/8/8/8/8/8/8/4K2R b Kk - 0 1"
    assert kr.make(fen, "e1f1") == "r3k2r/8/8/8/8/8/8/R4K1R b kq - 1 1"


def test_status_values():
    assert kr.status("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1") == "ongoing"
    assert kr.status("4k3/8/8/8/8/8/8/4K3 w - - 0 1") == "insufficient"
    assert kr.status("4k3/8/2n5/8/8/3NN3/8/4K3 w - - 0 1") == "insufficient"
    assert kr.status("4k3/8/8/8/8/3B4/8/4K3 b - - 0 1") == "insufficient"
    assert kr.status("4k3/8/8/8/8/3B4/8/N3K3 b - - 0 1") == "ongoing"  # K+B+N: not listed
    assert kr.status("4k3/8/8/8/8/3b4/8/4K3 w - - 0 1") == "insufficient"
    assert kr.status("4k3/8/8/8/8/8/8/R3K3 w - - 99 80") == "ongoing"
    assert kr.status("4k3/8/8/8/8/8/8/R3K3 w - - 100 80") == "fifty"
    assert kr.status("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1") == "stalemate"
    # checkmate wins over the 50-move rule
    mate = "3k4/1N6/3Q4/8/8/8/8/K7 b - - 100 60"
    assert kr.status(mate) == "checkmate"


def test_make_rejects_illegal_move():
    with pytest.raises(ValueError):
        kr.make("4k3/8/8/8/8/2n5/8/Q3K3 w - - 0 1", "a1c3")
