"""FEN parsing and output (engine/rules/fen.py, Position.from_fen/fen) and the grand
rules that show in a FEN: round-trips on random playouts, tolerated input
forms, bad input (ValueError naming the field), warnings, and grand
promotion/check/double-step rules of Grand Chess (README.md)."""
from __future__ import annotations

import pytest

from engine.rules.position import Position
from tests.conftest import VARIANTS, playouts

GRAND_START = "r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R w - - 0 1"
CHESS_START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
GRAND_BOARD = GRAND_START.split()[0]
CHESS_BOARD = CHESS_START.split()[0]


# --------------------------------------------------------------------------- round-trips

@pytest.mark.parametrize("variant", VARIANTS)
def test_round_trip_on_random_playouts(variant):
    games = playouts(variant, 20, 120, 3) + playouts(variant, 30, 40, 4, start_fen="endgame",
                                                     end_material=32, mate_bias=1.0, stalemate_bias=1.0)
    n = 0
    for g in games:
        live = Position.from_fen(g.start_fen, variant)
        for i, fen in enumerate(g.fens):
            assert live.fen() == fen
            again = Position.from_fen(fen, variant)
            assert again.fen() == fen
            assert again.key == live.key, fen
            assert sorted(again.legal_uci()) == g.legal[i]
            n += 1
            if i < len(g.moves):
                live.push_uci(g.moves[i])
    assert n >= 2000


def test_start_positions_and_digit_ten():
    for variant, fen in (("chess", CHESS_START), ("grand", GRAND_START)):
        assert Position.from_fen(None, variant).fen() == fen
    pos = Position.from_fen(GRAND_START, "grand")
    assert "/10/10/10/10/" in pos.fen()
    pos = Position.from_fen("10/4k5/10/10/10/10/10/10/4K5/10 w - - 0 1", "grand")
    assert pos.fen() == "10/4k5/10/10/10/10/10/10/4K5/10 w - - 0 1"
    # mixed runs: 9 + 1 and 1 + 9 etc.
    fen = "9r/r9/4k5/10/1P8/10/10/10/4K5/5Q4 b - - 3 40"
    assert Position.from_fen(fen, "grand").fen() == fen
    assert Position.from_fen(None, "knightrelay").fen() == CHESS_START


# --------------------------------------------------------------------------- tolerated forms

@pytest.mark.parametrize("text,expected", [
    (GRAND_BOARD + " w - - 0 1", GRAND_START),
    (GRAND_BOARD + " w - -", GRAND_START),                       # counters missing
    (GRAND_BOARD + " w - - 5", GRAND_BOARD + " w - - 5 1"),      # fullmove missing
    (GRAND_BOARD + "[] w - - 0 1", GRAND_START),                 # XBoard holdings block
    (GRAND_BOARD + "[Qq] w - - 0 1", GRAND_START),
    (GRAND_BOARD + " [] w - - 0 1", GRAND_START),
    (GRAND_BOARD + " w - 0 1", GRAND_START),                     # Sjaak short form (no e.p. field)
    (GRAND_BOARD + " w 0 1", GRAND_START),                       # no castling or e.p. field
    (GRAND_BOARD + " w", GRAND_START),
    ("  " + GRAND_START + "  \n", GRAND_START),
])
def test_grand_tolerated_forms(text, expected):
    assert Position.from_fen(text, "grand").fen() == expected


@pytest.mark.parametrize("text,expected", [
    (CHESS_BOARD + " w KQkq -", CHESS_START),
    (CHESS_BOARD + " w KQkq - 0", CHESS_START),
    (CHESS_BOARD + "[] w KQkq - 0 1", CHESS_START),
    (CHESS_BOARD + " b KQkq - 0 1", CHESS_BOARD + " b KQkq - 0 1"),
    (CHESS_BOARD + " w kqQK - 0 1", CHESS_START),                 # any order of castling letters
    ("4k3/8/8/8/8/8/8/4K2R w KQkq - 0 1", "4k3/8/8/8/8/8/8/4K2R w K - 0 1"),  # rights without rook dropped
])
def test_chess_tolerated_forms(text, expected):
    assert Position.from_fen(text, "chess").fen() == expected


def _grand_after(moves):
    pos = Position.from_fen(None, "grand")
    for m in moves:
        pos.push_uci(m)
    return pos


def test_grand_ep_square_zero_or_one_based():
    """After e3e5 next to a black pawn on d5 the e.p. square is e4 (1-based);
    CECP engines count ranks from 0 and write e3. Either is accepted; the one
    that fits the position is kept, and output is 1-based."""
    pos = _grand_after("a3a4 d8d6 a4a5 d6d5 e3e5".split())
    fen = pos.fen()
    assert fen.split()[3] == "e4"
    assert "d5e4" in pos.legal_uci()
    for ep in ("e4", "e3"):
        other = Position.from_fen(fen.replace(" e4 ", f" {ep} "), "grand")
        assert other.fen() == fen
        assert other.key == pos.key
        assert "d5e4" in other.legal_uci()
    # the zero-based uci form of the capture
    assert pos.uci(pos.parse_uci("d5e4"), zero_based=True) == "d4e3"


def test_well_formed_inapplicable_ep_square_ignored():
    # no pawn could have just double-stepped over e3 / e6 here
    for fen in ("4k3/8/8/8/8/8/8/4K3 w - e6 0 1", "4k3/8/8/8/8/8/8/4K3 w - e3 0 1",
                "4k3/8/8/3pP3/8/8/8/4K3 b - d6 0 1"):
        assert Position.from_fen(fen, "chess").fen().split()[3] == "-"
    # a pawn that could have double-stepped, but no capture is possible
    fen = "4k3/8/8/4P3/8/8/8/4K3 w - e6 0 1"
    assert Position.from_fen(fen, "chess").fen().split()[3] == "-"
    # e.p. capture possible but illegal (pinned along the rank): not kept
    pos = Position.from_fen("8/8/8/KPp4r/8/8/8/7k w - c6 0 2", "chess")
    assert pos.fen().split()[3] == "-" and "b5c6" not in pos.legal_uci()
    # a legal one is kept
    pos = Position.from_fen("8/8/8/1Pp5/8/8/8/K6k w - c6 0 2", "chess")
    assert pos.fen().split()[3] == "c6" and "b5c6" in pos.legal_uci()
    # knightrelay: always ignored
    pos = Position.from_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "knightrelay")
    assert pos.fen() == "4k3/8/8/3pP3/8/8/8/4K3 w - - 0 1"
    assert "e5d6" not in pos.legal_uci()
    # grand: a well-formed square on the wrong rank
    assert Position.from_fen(GRAND_BOARD + " w - e5 0 1", "grand").fen() == GRAND_START


# --------------------------------------------------------------------------- bad input

BAD = [
    # (variant, fen, words that must appear in the message)
    ("chess", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", ["board", "ranks"]),
    ("chess", "rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", ["board", "ranks"]),
    ("chess", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1", ["board", "files"]),
    ("chess", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNRR w KQkq - 0 1", ["board", "files"]),
    ("chess", "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", ["board", "files"]),
    ("grand", "r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1 w - - 0 1", ["board", "ranks"]),
    ("grand", "r8r/1nbqkcabn1/pppppppppp/11/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R w - - 0 1", ["board", "files"]),
    ("grand", "r8r/1nbqkcabn1/pppppppppp/9/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R w - - 0 1", ["board", "files"]),
    ("grand", CHESS_START, ["board", "ranks"]),
    ("chess", GRAND_START, ["board", "ranks"]),
    ("chess", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKCNR w KQkq - 0 1", ["board", "letter", "C"]),
    ("knightrelay", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKANR w KQkq - 0 1", ["board", "letter", "A"]),
    ("grand", GRAND_BOARD.replace("c", "x") + " w - - 0 1", ["board", "letter", "x"]),
    ("chess", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKB*R w KQkq - 0 1", ["board", "letter"]),
    ("chess", CHESS_BOARD + " x KQkq - 0 1", ["side"]),
    ("chess", CHESS_BOARD + " W KQkq - 0 1", ["side"]),
    ("grand", GRAND_BOARD + " white - - 0 1", ["side"]),
    ("chess", CHESS_BOARD, ["side"]),
    ("chess", CHESS_BOARD + " w KQxq - 0 1", ["castling"]),
    ("chess", CHESS_BOARD + " w KK - 0 1", ["castling"]),
    ("chess", CHESS_BOARD + " w Kk-q - 0 1", ["castling"]),
    ("chess", CHESS_BOARD + " w KQkq e9 0 1", ["en-passant"]),
    ("chess", CHESS_BOARD + " w KQkq z3 0 1", ["en-passant"]),
    ("chess", CHESS_BOARD + " w KQkq e33 0 1", ["en-passant"]),
    ("grand", GRAND_BOARD + " w - k4 0 1", ["en-passant"]),
    ("grand", GRAND_BOARD + " w - e11 0 1", ["en-passant"]),
    ("chess", "rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1", ["board", "black", "king"]),
    ("chess", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR b kq - 0 1", ["board", "white", "king"]),
    ("grand", "r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQ1CABN1/R8R w - - 0 1", ["board", "white", "king"]),
    ("chess", "4k3/8/8/8/8/8/8/3KK3 w - - 0 1", ["board", "white", "king"]),
    ("chess", "4k3/8/8/8/8/8/8/4K2P w - - 0 1", ["board", "pawn", "h1"]),
    ("chess", "p3k3/8/8/8/8/8/8/4K3 w - - 0 1", ["board", "pawn", "a8"]),
    ("grand", "p3k5/10/10/10/10/10/10/10/10/4K5 w - - 0 1", ["board", "pawn", "a10"]),
    ("grand", "4k5/10/10/10/10/10/10/10/10/4K4P w - - 0 1", ["board", "pawn", "j1"]),
    ("knightrelay", "4k3/8/8/8/8/8/8/4K1p1 b - - 0 1", ["board", "pawn", "g1"]),
    ("chess", "", ["empty"]),
    ("chess", CHESS_BOARD + " w KQkq - x 1", ["counters"]),
    ("chess", CHESS_BOARD + " w KQkq - 0 y", ["counters"]),
    ("chess", CHESS_BOARD + " w KQkq - 0 1 5", ["too many fields"]),
    ("chess", CHESS_BOARD + " w KQkq - 99999999999999999999 1", ["counters", "range"]),
]


@pytest.mark.parametrize("variant,fen,words", BAD, ids=[f"{i}-{b[0]}" for i, b in enumerate(BAD)])
def test_bad_fen_raises_value_error_naming_the_field(variant, fen, words):
    with pytest.raises(ValueError) as ei:
        Position.from_fen(fen, variant)
    msg = str(ei.value).lower()
    for w in words:
        assert w.lower() in msg, (msg, w)


def test_failed_set_fen_leaves_position_unchanged():
    pos = Position.from_fen(None, "grand")
    pos.push_uci("e3e4")
    before = pos.fen(), pos.key
    with pytest.raises(ValueError):
        pos.set_fen("garbage w - - 0 1")
    assert (pos.fen(), pos.key) == before


def test_unknown_variant_is_key_error():
    with pytest.raises(KeyError):
        Position.from_fen(None, "shogi")


def test_side_not_to_move_in_check_accepted_with_warning():
    pos = Position.from_fen("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", "chess")
    assert pos.warnings and "check" in pos.warnings[0] and "black" in pos.warnings[0]
    assert pos.opponent_in_check() and not pos.is_check()
    assert "e7e8" in pos.legal_uci()  # the king capture is a pseudo-legal move, kept
    assert Position.from_fen(CHESS_START, "chess").warnings == []
    # grand: the rank-9 pawn's attack on rank 10 counts here too
    pos = Position.from_fen("4k5/3P6/10/10/10/10/10/10/10/RNBQKCABNR w - - 0 1", "grand")
    assert pos.warnings
    # knightrelay: a knight gives no check, so no warning
    assert Position.from_fen("4k3/8/3N4/8/8/8/8/4K3 w - - 0 1", "knightrelay").warnings == []
    assert Position.from_fen("4k3/8/3N4/8/8/8/8/4K3 w - - 0 1", "chess").warnings


# --------------------------------------------------------------------------- grand rules (variants/rules/grand.md)

FULL_WHITE = "RNBQKACBNR"  # all of White's pieces: 2R 2N 2B Q C A K (marshal on g1: covers the g-file)


def test_grand_rank9_pawn_checks_rank10_without_promotion_piece():
    fen = f"4k5/3P6/10/10/10/10/10/10/10/{FULL_WHITE} b - - 0 1"
    pos = Position.from_fen(fen, "grand")
    assert pos.is_check()
    # a king may not step onto a rank-10 square the pawn attacks (g10: marshal's file)
    pos2 = Position.from_fen(f"5k4/3P6/10/10/10/10/10/10/10/{FULL_WHITE} b - - 0 1", "grand")
    assert not pos2.is_check()
    assert sorted(pos2.legal_uci()) == ["f10e9", "f10f9"]


def test_grand_no_move_to_rank10_when_nothing_available():
    pos = Position.from_fen(f"2r7/3P3k2/10/10/10/10/10/10/10/{FULL_WHITE} w - - 0 1", "grand")
    assert [u for u in pos.legal_uci() if u.startswith("d9")] == []
    # rank 8 -> 9 stays legal as a plain pawn move (no promotion piece available)
    pos = Position.from_fen(f"6k3/10/3P6/10/10/10/10/10/10/{FULL_WHITE} w - - 0 1", "grand")
    assert [u for u in pos.legal_uci() if u.startswith("d8")] == ["d8d9"]


@pytest.mark.parametrize("missing,choices", [
    ("Q", "q"), ("C", "c"), ("A", "a"),
    ("R", "r"), ("B", "b"), ("N", "n"),
])
def test_grand_promotion_only_below_the_limit(missing, choices):
    """At most 1 Q/C/A and 2 R/B/N: remove one piece of a type, that type (only) is available."""
    rank1 = FULL_WHITE.replace(missing, "1", 1)
    fen = f"2r7/3P3k2/10/10/10/10/10/10/10/{rank1} w - - 0 1"
    pos = Position.from_fen(fen, "grand")
    d9 = sorted(u for u in pos.legal_uci() if u.startswith("d9"))
    assert d9 == sorted(["d9d10" + choices, "d9c10" + choices])


def test_grand_promotion_all_types_and_optional_on_8_and_9():
    # white has only K: every type available on ranks 8, 9 (optional) and 10 (mandatory)
    pos = Position.from_fen("9k/10/3P6/10/10/10/10/10/10/4K5 w - - 0 1", "grand")
    assert sorted(u for u in pos.legal_uci() if u.startswith("d8")) == \
        sorted(["d8d9"] + ["d8d9" + c for c in "qcarbn"])
    pos = Position.from_fen("9k/10/10/3P6/10/10/10/10/10/4K5 w - - 0 1", "grand")
    assert sorted(u for u in pos.legal_uci() if u.startswith("d7")) == \
        sorted(["d7d8"] + ["d7d8" + c for c in "qcarbn"])
    pos = Position.from_fen("9k/3P6/10/10/10/10/10/10/10/4K5 w - - 0 1", "grand")
    assert sorted(u for u in pos.legal_uci() if u.startswith("d9")) == sorted("d9d10" + c for c in "qcarbn")
    # rank 7 -> no promotion
    pos = Position.from_fen("9k/10/10/10/3P6/10/10/10/10/4K5 w - - 0 1", "grand")
    assert [u for u in pos.legal_uci() if u.startswith("d6")] == ["d6d7"]
    # black mirrors: ranks 3 and 2 optional, 1 mandatory
    pos = Position.from_fen("9k/10/10/10/10/10/10/3p6/10/K9 b - - 0 1", "grand")
    assert sorted(u for u in pos.legal_uci() if u.startswith("d3")) == \
        sorted(["d3d2"] + ["d3d2" + c for c in "qcarbn"])
    pos = Position.from_fen("9k/10/10/10/10/10/10/10/3p6/K9 b - - 0 1", "grand")
    assert sorted(u for u in pos.legal_uci() if u.startswith("d2")) == sorted("d2d1" + c for c in "qcarbn")


def test_grand_promotion_counts_after_promoting():
    pos = Position.from_fen("10/3P1P4/10/10/k9/10/10/10/10/4K5 w - - 0 1", "grand")
    assert sorted(u for u in pos.legal_uci() if u.startswith("f9")) == sorted("f9f10" + c for c in "qcarbn")
    pos.push_uci("d9d10q")
    assert pos.fen() == "3Q6/5P4/10/10/k9/10/10/10/10/4K5 b - - 0 1"
    pos.push_uci("a6a5")
    # a second queen is not available any more
    assert sorted(u for u in pos.legal_uci() if u.startswith("f9")) == sorted("f9f10" + c for c in "carbn")
    pos.pop()
    pos.pop()
    assert sorted(u for u in pos.legal_uci() if u.startswith("f9")) == sorted("f9f10" + c for c in "qcarbn")


def test_grand_double_step_from_rank_3_only():
    pos = Position.from_fen(None, "grand")
    assert {"e3e4", "e3e5"} <= set(pos.legal_uci())
    pos = Position.from_fen("4k5/10/10/10/10/10/4P5/10/10/4K5 w - - 0 1", "grand")
    assert [u for u in pos.legal_uci() if u.startswith("e4")] == ["e4e5"]
    pos = Position.from_fen("4k5/10/10/10/10/10/10/4P5/10/4K5 w - - 0 1", "grand")
    assert [u for u in pos.legal_uci() if u.startswith("e3")] in (["e3e4", "e3e5"], ["e3e5", "e3e4"])
    pos = Position.from_fen("4k5/10/4p5/10/10/10/10/10/10/4K5 b - - 0 1", "grand")
    assert sorted(u for u in pos.legal_uci() if u.startswith("e8")) == ["e8e6", "e8e7"]
    # a pawn on rank 2 (possible only in a set-up position) does not double-step
    pos = Position.from_fen("4k5/10/10/10/10/10/10/10/4P5/5K4 w - - 0 1", "grand")
    assert [u for u in pos.legal_uci() if u.startswith("e2")] == ["e2e3"]
