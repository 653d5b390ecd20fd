"""Evaluation: symmetry under colour flip, sanity of the tables."""

import numpy as np
import pytest

from engine.rules.position import Position
from search.eval import build_eval, evaluate, EV_W, W_TEMPO
from tests.conftest import random_positions

from tests.conftest import VARIANTS


def flip_fen(fen: str) -> str:
    """Mirror the ranks, swap colours, side to move, castling rights and the e.p. square."""
    board, side, castle, ep, half, full = fen.split()
    rows = board.split("/")
    h = len(rows)
    nb = "/".join(r.swapcase() for r in reversed(rows))
    ns = "b" if side == "w" else "w"
    nc = "".join(sorted(castle.swapcase(), key="KQkq".index)) if castle != "-" else "-"
    if ep != "-":
        ep = ep[0] + str(h + 1 - int(ep[1:]))
    return f"{nb} {ns} {nc} {ep} {half} {full}"


def ev_of(pos):
    return int(evaluate(pos.board, pos.st, pos.vt, build_eval(pos.variant.name), np.zeros(64, np.int32)))




def test_colour_flip_mirrors_moves_and_eval():
    """The engine sees the colour-flipped position as the mirror image: the same number of
    legal moves (the e.p. capture and both castlings included, mirrored) and the same eval."""
    f = "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQq d6 0 1"
    pos = Position.from_fen(f, "chess")
    flipped = Position.from_fen(flip_fen(f), "chess")
    assert flipped.fen() == "r3k2r/8/8/8/3Pp3/8/8/R3K2R b Qkq d3 0 1"
    assert "e5d6" in pos.legal_uci() and "e4d3" in flipped.legal_uci()          # e.p. both ways
    assert {"e1g1", "e1c1"} <= set(pos.legal_uci()) and {"e8g8", "e8c8"} <= set(flipped.legal_uci())
    assert len(pos.legal_moves()) == len(flipped.legal_moves())
    assert ev_of(pos) == ev_of(flipped)


@pytest.mark.parametrize("variant", VARIANTS)
def test_eval_symmetry_random(variant):
    for pos in random_positions(variant, 60, seed=sum(map(ord, variant))):
        fen = pos.fen()
        flipped = Position.from_fen(flip_fen(fen), variant)
        assert ev_of(pos) == ev_of(flipped), fen


@pytest.mark.parametrize("variant", VARIANTS)
def test_start_position_balanced(variant):
    pos = Position.from_fen(None, variant)
    tempo = int(build_eval(variant)[EV_W + W_TEMPO])
    assert ev_of(pos) == tempo  # symmetric start: only the side-to-move tempo remains


def test_material_matters():
    base = Position.from_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1", "chess")
    up = Position.from_fen("4k3/8/8/8/8/8/8/3QK3 w - - 0 1", "chess")
    assert ev_of(up) - ev_of(base) > 700
    # side-to-move view: the same position with Black to move is bad for Black
    up_b = Position.from_fen("4k3/8/8/8/8/8/8/3QK3 b - - 0 1", "chess")
    assert ev_of(up_b) < -700


def test_grand_compound_values_and_passed_pawn():
    a = Position.from_fen("k9/10/10/10/10/10/10/10/10/C8K w - - 0 1", "grand")
    b = Position.from_fen("k9/10/10/10/10/10/10/10/10/R8K w - - 0 1", "grand")
    assert ev_of(a) > ev_of(b) + 200   # marshal > rook
    # and the same from the other side: Black to move, Black's marshal is worth more than its rook
    a_b = Position.from_fen("K9/10/10/10/10/10/10/10/10/c8k b - - 0 1", "grand")
    b_b = Position.from_fen("K9/10/10/10/10/10/10/10/10/r8k b - - 0 1", "grand")
    assert ev_of(a_b) > ev_of(b_b) + 200
    # a passed pawn on rank 7 (one rank before the grand promotion zone) beats one on rank 4
    far = Position.from_fen("k9/10/10/10/10/10/5P4/10/10/9K w - - 0 1", "grand")
    near = Position.from_fen("k9/10/10/10/5P4/10/10/10/10/9K w - - 0 1", "grand")
    assert ev_of(near) > ev_of(far) + 30


def test_knightrelay_relay_bonus():
    # rook relayed by the knight (knight's move away) vs the same rook not relayed
    relayed = Position.from_fen("4k3/8/8/8/3R4/8/2N5/4K3 w - - 0 1", "knightrelay")
    plain = Position.from_fen("4k3/8/8/8/3R4/8/N7/4K3 w - - 0 1", "knightrelay")
    assert ev_of(relayed) > ev_of(plain)
