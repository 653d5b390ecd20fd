"""Evaluation: symmetry under colour flip, sanity of the tables."""

import numpy as np
import pytest

from engine.rules import layout as L
from engine.rules.position import Position
from search import eval as E
from search.eval import build_eval, evaluate, load_weights, F_TEMPO
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
    return int(evaluate(pos.board, pos.st, pos.vt, build_eval(pos.variant.name), np.zeros(E.WS_SIZE, np.int32)))




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
    tempo = int(load_weights(variant)[0][F_TEMPO])
    assert ev_of(pos) == tempo  # symmetric start: only the side-to-move tempo (mg: full phase) remains


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


# ---- linear form: features x weights == evaluate(), exactly ----

def _tapered(f, phase, total, w_mg, w_eg, black_to_move):
    """The documented linear form in Python integers: trunc((w_mg.f*phase + w_eg.f*(total-phase))/total)."""
    mg = sum(int(a) * int(b) for a, b in zip(f, w_mg))
    eg = sum(int(a) * int(b) for a, b in zip(f, w_eg))
    s = mg * phase + eg * (total - phase)
    if black_to_move:
        s = -s
    return s // total if s >= 0 else -((-s) // total)


def _random_weights(variant, seed):
    rng = np.random.default_rng(seed)
    mg, eg = load_weights(variant)
    used = E.feature_used(variant)
    mg = np.where(used, mg + rng.integers(-40, 41, E.NF), 0).astype(np.int32)
    eg = np.where(used, eg + rng.integers(-40, 41, E.NF), 0).astype(np.int32)
    return mg, eg


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("weights", ["shipped", "random"])
def test_features_times_weights_equal_evaluate(variant, weights):
    """For random positions the tapered dot products of eval_features() with the weights equal
    evaluate() exactly, with the shipped weights and with random ones (every term is covered)."""
    if weights == "shipped":
        w_mg, w_eg = load_weights(variant)
        ev = build_eval(variant)
    else:
        w_mg, w_eg = _random_weights(variant, 5)
        ev = E.make_eval(variant, w_mg, w_eg)
    total = E.phase_total(variant)
    ws = np.zeros(E.WS_SIZE, np.int32)
    f = np.zeros(E.NF, np.int32)
    seen = np.zeros(E.NF, bool)
    for pos in random_positions(variant, 80, seed=11):
        phase = int(E.eval_features(pos.board, pos.st, pos.vt, ev, ws, f))
        assert 0 <= phase <= total
        want = _tapered(f, phase, total, w_mg, w_eg, pos.st[L.S_SIDE] == 1)
        assert int(evaluate(pos.board, pos.st, pos.vt, ev, ws)) == want, pos.fen()
        seen |= f != 0
    # features that can never be nonzero in this variant stay zero
    assert not (seen & ~E.feature_used(variant)).any(), [E.FEATURES[i] for i in np.flatnonzero(seen & ~E.feature_used(variant))]


@pytest.mark.parametrize("variant", VARIANTS)
def test_eval_symmetry_random_weights(variant):
    """Colour symmetry holds for any weights, the new terms included."""
    ev = E.make_eval(variant, *_random_weights(variant, 9))
    ws = np.zeros(E.WS_SIZE, np.int32)
    for pos in random_positions(variant, 40, seed=17):
        flipped = Position.from_fen(flip_fen(pos.fen()), variant)
        a = int(evaluate(pos.board, pos.st, pos.vt, ev, ws))
        b = int(evaluate(flipped.board, flipped.st, flipped.vt, ev, ws))
        assert a == b, pos.fen()


def _feature(fen, variant, name):
    pos = Position.from_fen(fen, variant)
    f = np.zeros(E.NF, np.int32)
    E.eval_features(pos.board, pos.st, pos.vt, build_eval(variant), np.zeros(E.WS_SIZE, np.int32), f)
    return int(f[E.FEATURE_INDEX[name]])


def test_feature_values_on_known_positions():
    """Hand-checked counts for the newer terms."""
    # white rook on an open file (no pawns on e), black rook on a half-open one (white pawn on d only)
    fen = "3rk3/8/8/8/8/8/3P4/4RK2 w - - 0 1"
    assert _feature(fen, "chess", "open_file_R") == 1
    assert _feature(fen, "chess", "half_open_file_R") == -1
    assert _feature(fen, "chess", "bishop_pair") == 0
    assert _feature("4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1", "chess", "bishop_pair") == 1
    # zone of the black king on e8: d8 e8 f8 d7 e7 f7; the queen on d6 attacks d7 d8 (file), e7 f8 (diagonal)
    assert _feature("4k3/8/3Q4/8/8/8/8/4K3 w - - 0 1", "chess", "king_zone_Q") == 4
    # ... and a queen further than 3 files/ranks from the king is not counted (see search/eval.py)
    assert _feature("4k3/8/8/8/Q7/8/8/4K3 w - - 0 1", "chess", "king_zone_Q") == 0
    # tempo is +1 for White to move, -1 for Black
    assert _feature("4k3/8/8/8/8/8/8/4K3 w - - 0 1", "chess", "tempo") == 1
    assert _feature("4k3/8/8/8/8/8/8/4K3 b - - 0 1", "chess", "tempo") == -1
    # White: king on e1, pawns on d2 and f2 only, so of d, e, f only e lacks a white pawn (1);
    # Black: king on e8 with pawns on every file (0)
    assert _feature("4k3/pppppppp/8/8/8/8/3P1P2/4K3 w - - 0 1", "chess", "king_open_file") == 1
    # knightrelay: the rook on d4 is relayed by the knight on c2
    assert _feature("4k3/8/8/8/3R4/8/2N5/4K3 w - - 0 1", "knightrelay", "relayed") == 1
    # the rook on d6, relayed by the knight on e4, leaps to e8 (the king's square) and f7: two zone squares
    assert _feature("4k3/8/3R4/8/4N3/8/8/4K3 w - - 0 1", "knightrelay", "relay_king_zone") == 2
    assert _feature("4k3/8/3R4/8/8/8/4N3/4K3 w - - 0 1", "knightrelay", "relay_king_zone") == 0
    # relay mobility: the relayed rook on d4 has 8 knight-leap squares, minus c2 (its own knight)
    assert _feature("4k3/8/8/8/3R4/8/2N5/4K3 w - - 0 1", "knightrelay", "relay_mobility") == 7
    # pawn storm: white pawns on f5 and d6 are 1-3 ranks in front of the black king on e8; g6 is off its files;
    # the black pawn on e4 is 3 ranks in front of the white king on e1... (e2, e3, e4): one
    assert _feature("4k3/8/3P2P1/5P2/4p3/8/8/4K3 w - - 0 1", "chess", "pawn_storm") == 2 - 1


def test_grand_unpromotable_pawn_is_worth_less():
    """Grand: a pawn may only promote to a type its side has lost. The marginal value of a rank-9
    pawn (evaluation with it minus without it) is smaller when White has lost nothing it could
    promote to than when a captured queen is available."""
    # full white army minus nothing but pawns: no promotion possible
    none_lost = "r8r/1nbqkcabn1/pppppppp2/10/10/10/10/10/1NBQKCABN1/R8R w - - 0 1"
    queen_lost = "r8r/1nbqkcabn1/pppppppp2/10/10/10/10/10/1NB1KCABN1/R8R w - - 0 1"

    def with_pawn(fen):
        rows = fen.split()[0].split("/")
        rows[1] = "1nbqkcabnP"        # white pawn on j9
        return "/".join(rows) + " " + " ".join(fen.split()[1:])

    def marginal(fen):
        a = Position.from_fen(with_pawn(fen), "grand")
        b = Position.from_fen(fen, "grand")
        return ev_of(a) - ev_of(b)

    assert _feature(with_pawn(none_lost), "grand", "unpromotable_0") == 1
    assert _feature(with_pawn(queen_lost), "grand", "unpromotable_0") == 0
    assert marginal(none_lost) < marginal(queen_lost)


def test_weights_file_round_trip_and_errors(tmp_path):
    """write_weights/load_weights: a written file reads back exactly; a file of another version,
    variant or with an unknown feature is refused with a ValueError naming the file."""
    w_mg, w_eg = _random_weights("grand", 3)
    path = str(tmp_path / "grand.json")
    E.write_weights("grand", w_mg, w_eg, {"note": "test"}, path=path)
    mg, eg = load_weights("grand", path=path)
    used = E.feature_used("grand")
    assert (mg[used] == w_mg[used]).all() and (eg[used] == w_eg[used]).all()
    import json
    data = json.load(open(path))
    assert data["version"] == E.WEIGHTS_VERSION and data["variant"] == "grand" and data["meta"] == {"note": "test"}
    for bad in ({"version": 99}, {"variant": "chess"}, {"mg": {"no_such_feature": 1}}):
        d = dict(data, **bad)
        open(path, "w").write(json.dumps(d))
        with pytest.raises(ValueError, match="grand.json"):
            load_weights("grand", path=path)


def test_shipped_weights_files_load():
    """Every committed weights file matches the code (version, variant, feature names)."""
    import os
    for name in os.listdir(E.WEIGHTS_DIR) if os.path.isdir(E.WEIGHTS_DIR) else []:
        if name.endswith(".json"):
            load_weights(name[:-5])


def test_connected_pawns_and_threat_features():
    """Hand-checked counts of the connected-pawn and threat terms."""
    # white pawns d4 e4 (a phalanx: 2) and c3 (it defends d4: 1 supported); black pawns a7 b6 (a7 defends
    # b6: 1 supported)
    fen = "4k3/p7/1p6/8/3PP3/2P5/8/4K3 w - - 0 1"
    assert _feature(fen, "chess", "pawn_phalanx") == 2
    assert _feature(fen, "chess", "pawn_supported") == 1 - 1
    # a white pawn on e5 attacks the black knight on d6 and rook on f6; the black pawn on b5 attacks the
    # white bishop on a4
    fen = "4k3/8/3n1r2/1p2P3/B7/8/8/4K3 w - - 0 1"
    assert _feature(fen, "chess", "pawn_threat_N") == 1
    assert _feature(fen, "chess", "pawn_threat_R") == 1
    assert _feature(fen, "chess", "pawn_threat_B") == -1
    # the white knight on c3 attacks the black queen on d5 (a lesser piece on a greater one); the black
    # rook on d8 attacks nothing of more value (the queen on d5 is its own)
    fen = "3rk3/8/8/3q4/8/2N5/8/4K3 w - - 0 1"
    assert _feature(fen, "chess", "threat_by_lesser_Q") == 1
    # the black rook on a1 attacks the white queen on a5 along the file: -1; the king attacks nothing
    assert _feature("4k3/8/8/Q7/8/8/8/r3K3 w - - 0 1", "chess", "threat_by_lesser_Q") == -1
    # the knight on c3 attacks the bishop on d5: undefended, then defended by the pawn on e6
    assert _feature("4k3/8/8/3b4/8/2N5/8/4K3 w - - 0 1", "chess", "attack_on_weak") == 1
    assert _feature("4k3/8/4p3/3b4/8/2N5/8/4K3 w - - 0 1", "chess", "attack_on_weak") == 0
    # a rook on d5 defended by the pawn: no weak attack, but still a lesser piece's threat
    assert _feature("4k3/8/4p3/3r4/8/2N5/8/4K3 w - - 0 1", "chess", "attack_on_weak") == 0
    assert _feature("4k3/8/4p3/3r4/8/2N5/8/4K3 w - - 0 1", "chess", "threat_by_lesser_R") == 1
    # knightrelay: knights are never captured, so a pawn's attack on one is no threat
    assert _feature("4k3/8/3n4/4P3/8/8/8/4K3 w - - 0 1", "knightrelay", "pawn_threat_N") == 0
    # grand (10 ranks, zone at ranks 8-10): connected white pawns on e6 f6 are 2 ranks from the zone
    # (4 - 2 each); on e7 f7, 1 rank (3 each); unconnected, nothing
    fen = "r8r/1nbqkcabn1/10/10/4PP4/10/10/10/1NBQKCABN1/R8R w - - 0 1"
    assert _feature(fen, "grand", "pawn_connected_near") == 4
    fen = "r8r/1nbqkcabn1/10/4PP4/10/10/10/10/1NBQKCABN1/R8R w - - 0 1"
    assert _feature(fen, "grand", "pawn_connected_near") == 6
    fen = "r8r/1nbqkcabn1/10/4P1P3/10/10/10/10/1NBQKCABN1/R8R w - - 0 1"
    assert _feature(fen, "grand", "pawn_connected_near") == 0


def test_mobility_area_and_king_danger_features():
    """Mobility squares an enemy pawn attacks, and king danger = attackers x attacked zone squares."""
    # the knight on b1 reaches a3, c3, d2: the black pawn on b4 attacks a3 and c3
    assert _feature("4k3/8/8/8/1p6/8/8/1N2K3 w - - 0 1", "chess", "mobility_pawn_attacked") == 2
    # the rook on a1 slides to a2 (attacked by the pawn on b3), a3..a8, b1..d1: one; mirrored for black
    assert _feature("4k3/8/8/8/8/1p6/8/R3K3 w - - 0 1", "chess", "mobility_pawn_attacked") == 1
    assert _feature("r3k3/8/1P6/8/8/8/8/4K3 w - - 0 1", "chess", "mobility_pawn_attacked") == -1
    assert _feature("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "chess", "mobility_pawn_attacked") == 0
    # one attacker (the queen on e6): danger = 1 x its zone squares; a second (knight g5 -> f7):
    # 2 x the sum of both
    fen = "4k3/8/4Q3/8/8/8/8/4K3 w - - 0 1"
    zq = _feature(fen, "chess", "king_zone_Q")
    assert zq > 0
    assert _feature(fen, "chess", "king_danger") == zq
    fen = "4k3/8/4Q3/6N1/8/8/8/4K3 w - - 0 1"
    zq, zn = _feature(fen, "chess", "king_zone_Q"), _feature(fen, "chess", "king_zone_N")
    assert zn == 1
    assert _feature(fen, "chess", "king_danger") == 2 * (zq + zn)
    # black's attack on the white king counts negative
    fen = "4k3/8/8/8/8/4q3/8/4K3 w - - 0 1"
    assert _feature(fen, "chess", "king_danger") == _feature(fen, "chess", "king_zone_Q") < 0


def test_check_square_features():
    """Moves to squares from which the piece would check the enemy king, unless an enemy pawn attacks them."""
    # the knight on g4 reaches f6, a knight's leap from the king on e8: one; the pawn on g7 guards f6
    assert _feature("4k3/8/8/8/6N1/8/8/4K3 w - - 0 1", "chess", "check_N") == 1
    assert _feature("4k3/6p1/8/8/6N1/8/8/4K3 w - - 0 1", "chess", "check_N") == 0
    # the rook on a1 checks from e1 (the e-file is open to e8) and from a8 (the 8th rank)
    assert _feature("4k3/8/8/8/8/8/7K/R7 w - - 0 1", "chess", "check_R") == 2
    # a black pawn on e2 blocks the file: e1 no longer checks (a8 still does)
    assert _feature("4k3/8/8/8/8/8/4p2K/R7 w - - 0 1", "chess", "check_R") == 1
    # the bishop on c2 checks from g6 and a4; mirrored for black (the bishop on c7 from g3 and a5)
    assert _feature("4k3/8/8/8/8/8/2B4K/8 w - - 0 1", "chess", "check_B") == 2
    assert _feature("8/2b4k/8/8/8/8/8/4K3 w - - 0 1", "chess", "check_B") == -2
    # knightrelay: knights give no check
    assert _feature("4k3/8/8/8/6N1/8/8/4K3 w - - 0 1", "knightrelay", "check_N") == 0
    # the marks are cleared again: the scratch is all zero from WS_CHK on after an evaluation
    pos = Position.from_fen("4k3/8/8/8/8/8/2B4K/R7 w - - 0 1", "chess")
    ws = np.zeros(E.WS_SIZE, np.int32)
    f = np.zeros(E.NF, np.int32)
    E.eval_features(pos.board, pos.st, pos.vt, build_eval("chess"), ws, f)
    assert not ws[E.WS_CHK:E.WS_LIST].any()


def test_low_mobility_hinge_feature():
    """mobility_low_<type> = MOB_LOW - mobility when positive: a knight boxed in by its own pawns
    counts the whole hinge, one with three squares counts one, a free one nothing; black negative."""
    assert E.MOB_LOW == 4
    assert _feature("4k3/8/8/8/8/1P6/2P5/N3K3 w - - 0 1", "chess", "mobility_low_N") == 4
    assert _feature("4k3/8/8/8/8/8/8/1N2K3 w - - 0 1", "chess", "mobility_low_N") == 1     # a3, c3, d2
    assert _feature("4k3/8/8/8/3N4/8/8/4K3 w - - 0 1", "chess", "mobility_low_N") == 0
    assert _feature("n3k3/2p5/1p6/8/8/8/8/4K3 w - - 0 1", "chess", "mobility_low_N") == -4
    # and in grand, where the weights use it
    assert E.feature_used("grand")[E.FEATURE_INDEX["mobility_low_N"]]


@pytest.mark.parametrize("variant", VARIANTS)
def test_shared_scratch_gives_the_fresh_scratch_score(variant):
    """The search evaluates every node with one scratch array: the check-square marks an
    evaluation leaves behind must not reach the next one. Evaluating a sequence of positions
    with one shared ``ws`` gives each the score a fresh array gives, and leaves the cells zero."""
    ev = build_eval(variant)
    shared = np.zeros(E.WS_SIZE, np.int32)
    for pos in random_positions(variant, 150, seed=23):
        assert int(evaluate(pos.board, pos.st, pos.vt, ev, shared)) == ev_of(pos)
        assert not shared[E.WS_CHK:E.WS_LIST].any()


def test_check_square_kinds_per_type():
    """The per-type check-square kinds in the evaluation table follow the pieces' moves: a knight
    leap (1), file/rank slides (2), diagonal slides (4); pawns and kings have none. Grand's
    marshal (c: rook + knight) and cardinal (a: bishop + knight) combine them; knightrelay's
    knights too (the evaluation skips them there, as they give no check)."""
    ev = build_eval("grand")
    kinds = {L.TYPE_LETTERS[t]: int(ev[E.EV_CHKM + t]) for t in range(1, L.NTYPES)}
    assert kinds == {"P": 0, "N": 1, "B": 4, "R": 2, "Q": 6, "K": 0, "C": 3, "A": 5}
    assert int(ev[E.EV_W + E.W_CHK_ON]) == int(any(ev[E.EV_WMG + E.F_CHECK + t] or ev[E.EV_WEG + E.F_CHECK + t]
                                                   for t in range(16)))


def test_quadratic_king_danger_feature():
    """king_danger_quadratic = kd^2 >> KD_SHIFT per attacking side (kd > KD_MIN), white's minus
    black's, kd = zone-attacker weight + KD_ZONE per king-zone square attacked + safe-check weight."""
    assert E.KD_SHIFT == 17 and E.KD_ZONE == 69
    # a far queen: only its safe checks count (780) -> 780^2 >> 17 = 4
    assert _feature("4k3/8/8/8/8/8/8/Q3K3 w - - 0 1", "chess", "king_danger_quadratic") == 4
    # near the king: + 10 (attacker) + 69 x 4 zone squares (d7, d8, e7, f8) -> 1066^2 >> 17 = 8
    assert _feature("4k3/8/3Q4/8/8/8/8/4K3 w - - 0 1", "chess", "king_danger_quadratic") == 8
    assert _feature("4k3/8/8/8/8/8/8/4K3 w - - 0 1", "chess", "king_danger_quadratic") == 0
    assert _feature("q3k3/8/8/8/8/8/8/4K3 w - - 0 1", "chess", "king_danger_quadratic") == -4
    assert E.feature_used("grand")[E.FEATURE_INDEX["king_danger_quadratic"]]


@pytest.mark.parametrize("variant", VARIANTS)
def test_eval_terms_add_up_to_the_evaluation(variant):
    """The per-term breakdown (the UCI ``eval`` table) covers every feature the variant uses with
    a named term, and its rows add up to the evaluation: tapered, White's view, exactly."""
    used = E.feature_used(variant)
    assert all(E.TERMS[E.TERM_OF[i]][0] != "Other" for i in np.flatnonzero(used))
    assert E.TERMS[E.TERM_OF[E.FEATURE_INDEX["pawn_threat_N"]]][0] == "Threats"
    assert E.TERMS[E.TERM_OF[E.FEATURE_INDEX["pawn_storm"]]][0] == "King safety"
    names = set()
    for pos in random_positions(variant, 40, seed=12):
        rows, phase, total = E.eval_terms(variant, pos.board, pos.st, pos.vt)
        names |= {r[0] for r in rows}
        mg, eg = sum(r[1] for r in rows), sum(r[2] for r in rows)
        white = ev_of(pos) * (1 if pos.turn == 0 else -1)
        assert E.taper(mg, eg, phase, total) == white, pos.fen()
    assert {"Material", "Placement", "Mobility", "King safety", "Pawns", "Tempo"} <= names


def test_free_piece_square_features_fold_files_and_mirror_ranks():
    """``pst_<type>_<folded file><rank>``: a piece on a white-relative square, files folded to
    the nearer edge (so the table is left-right symmetric), Black's ranks mirrored; a weight
    on one moves the evaluation by that weight for that piece there, and by nothing elsewhere."""
    # grand (10 files): a white knight on j4 is on folded file a (edge), rank 4; a black one on
    # b7 is on folded file b, white-relative rank 10 - 7 + 1 = 4
    fen = "k9/10/10/1n8/10/10/9N/10/10/K9 w - - 0 1"
    assert _feature(fen, "grand", "pst_N_a4") == 1
    assert _feature(fen, "grand", "pst_N_b4") == -1
    assert _feature(fen, "grand", "pst_N_a7") == 0
    assert E.feature_used("grand")[E.FEATURE_INDEX["pst_N_e10"]]
    assert not E.feature_used("grand")[E.FEATURE_INDEX["pst_N_f1"]]   # only five folded files
    assert E.TERMS[E.TERM_OF[E.FEATURE_INDEX["pst_K_a1"]]][0] == "Placement"
    pos = Position.from_fen(fen, "grand")
    ws = np.zeros(E.WS_SIZE, np.int32)
    mg, eg = (np.array(w) for w in load_weights("grand"))
    base = int(evaluate(pos.board, pos.st, pos.vt, E.make_eval("grand", mg, eg), ws))
    mg[E.FEATURE_INDEX["pst_N_a4"]] += 50
    eg[E.FEATURE_INDEX["pst_N_a4"]] += 50
    assert int(evaluate(pos.board, pos.st, pos.vt, E.make_eval("grand", mg, eg), ws)) == base + 50
    mg[E.FEATURE_INDEX["pst_N_b4"]] += 30
    eg[E.FEATURE_INDEX["pst_N_b4"]] += 30
    assert int(evaluate(pos.board, pos.st, pos.vt, E.make_eval("grand", mg, eg), ws)) == base + 50 - 30
    mg[E.FEATURE_INDEX["pst_N_c5"]] += 70    # no knight there: no change
    assert int(evaluate(pos.board, pos.st, pos.vt, E.make_eval("grand", mg, eg), ws)) == base + 50 - 30
