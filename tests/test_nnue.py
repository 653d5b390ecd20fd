"""The NNUE network (search.nnue): input layout per variant, the accumulator kept move by move
(per-ply stack and in place) equal to a full recomputation along random games in every variant
(captures, en passant, castling, promotions, relayed knight jumps), the integer forward pass
against the float model, the network file round trip and its one-line errors."""
import os
import random

import numpy as np
import pytest

from engine.rules import layout as L
from engine.rules.position import Position
from search import nnue as N
from tests.conftest import VARIANTS


def test_input_layout_from_the_variant_record():
    assert N.input_layout("chess").nin == 768 == 2 * 6 * 64
    assert N.input_layout("knightrelay").nin == 768
    g = N.input_layout("grand")
    assert (g.letters, g.width, g.height, g.nin, g.max_pieces) == ("PNBRQKCA", 10, 10, 1600, 40)
    assert N.input_layout("capablanca").nin == 2 * 8 * 80
    assert N.input_layout("standard").variant == "chess"


def test_feature_index_mirrors_the_board_for_black():
    pos = Position.from_fen(None, "chess")
    meta = N.make_meta(N.input_layout("chess"), 8)
    w, b, stm = N.position_features(meta, pos)
    # the start position is colour-symmetric: both perspectives see the same inputs
    assert stm == 0 and sorted(w) == sorted(b) and len(w) == 32
    e1 = L.square(4, 0)
    # the white king on e1: White's own king plane (5), square e1; for Black an enemy king on e8
    assert N.feature_index(meta, pos.vt, 0, L.KING, e1) == 5 * 64 + 4
    assert N.feature_index(meta, pos.vt, 1, L.KING, e1) == (6 + 5) * 64 + 7 * 8 + 4
    # a black pawn on d7 is Black's own pawn on d2 from Black's side
    d7 = L.square(3, 6)
    assert N.feature_index(meta, pos.vt, 1, L.PAWN | 16, d7) == 1 * 8 + 3


def _kind(pos, m, variant):
    f = L.move_flags(m)
    if f & L.F_EP:
        return "ep"
    if f & L.F_CASTLE:
        return "castle"
    if L.move_promo(m):
        return "promo"
    frm, to = L.move_from(m), L.move_to(m)
    ty = int(pos.board[frm]) & 15
    df, dr = abs(L.file_of(to) - L.file_of(frm)), abs(L.rank_of(to) - L.rank_of(frm))
    if variant == "knightrelay" and ty != L.KNIGHT and {df, dr} == {1, 2}:
        return "relay"
    return "capture" if pos.board[to] != L.EMPTY else "quiet"


def _pick(rng, pos, legal):
    for want in (L.F_CASTLE, L.F_EP):
        special = [m for m in legal if L.move_flags(m) & want]
        if special and rng.random() < 0.7:
            return rng.choice(special)
    doubles = [m for m in legal if L.move_flags(m) & L.F_DOUBLE]
    if doubles and rng.random() < 0.3:        # double steps give en-passant chances
        return rng.choice(doubles)
    promos = [m for m in legal if L.move_promo(m)]
    if promos and rng.random() < 0.7:
        return rng.choice(promos)
    caps = [m for m in legal if pos.board[L.move_to(m)] != L.EMPTY]
    if caps and rng.random() < 0.4:
        return rng.choice(caps)
    return rng.choice(legal)


def _int_net(variant, hidden, seed):
    """Random integer weights over the whole int16 accumulator range the checks allow."""
    lay = N.input_layout(variant)
    rng = np.random.default_rng(seed)
    lim = 32767 // (lay.max_pieces + 1)
    ftw = np.zeros((lay.nin + 1, hidden), np.int16)
    ftw[:lay.nin] = rng.integers(-lim, lim + 1, (lay.nin, hidden))
    ftb = rng.integers(-lim, lim + 1, hidden).astype(np.int16)
    ow = rng.integers(-3000, 3001, 2 * hidden).astype(np.int16)
    return N.NnueNet(N.make_meta(lay, hidden, N.ACT_CRELU, ob=12345), ftw, ftb, ow)


@pytest.mark.parametrize("variant", VARIANTS)
def test_incremental_accumulator_equals_a_refresh_after_every_make_and_unmake(variant):
    rng = random.Random(f"nnue-{variant}")
    net = _int_net(variant, 32, 7)
    plies = 150
    stack = N.acc_alloc(net, plies + 2)     # the search's per-ply rows
    inplace = N.acc_alloc(net, 1)           # one row updated in place
    fresh = N.acc_alloc(net, 1)
    kinds = set()

    def check(row):
        N.acc_refresh(net, pos.vt, pos.board, pos.st, fresh, 0)
        assert np.array_equal(stack[row], fresh[0]), pos.fen()
        assert np.array_equal(inplace[0], fresh[0]), pos.fen()
        stm = int(pos.st[L.S_SIDE])
        assert N.nnue_evaluate(net, stack, row, stm) == N.nnue_evaluate(net, fresh, 0, stm)

    for game in range(12):
        pos = Position.from_fen(None, variant)
        N.acc_refresh(net, pos.vt, pos.board, pos.st, stack, 0)
        N.acc_refresh(net, pos.vt, pos.board, pos.st, inplace, 0)
        for step in range(plies + 40):
            ply = pos.ply          # the stack row of the current position
            legal = pos.legal_moves()
            if not legal or ply >= plies:
                break
            if ply >= 2 and rng.random() < 0.15:       # take back a move or two, then play on
                for _ in range(rng.randint(1, 2)):
                    m = pos.pop()
                    N.acc_move(net, pos.vt, pos.board, pos.st, inplace, 0, m, True)
                    check(pos.ply)
                continue
            m = _pick(rng, pos, legal)
            kinds.add(_kind(pos, m, variant))
            N.acc_push(net, pos.vt, pos.board, pos.st, stack, ply, m)
            N.acc_move(net, pos.vt, pos.board, pos.st, inplace, 0, m, False)
            pos.push(m)
            check(ply + 1)
        N.acc_copy(net, stack, pos.ply, pos.ply + 1)     # a null move: the row carries over
        assert np.array_equal(stack[pos.ply + 1], stack[pos.ply])
    assert {"capture", "quiet", "promo"} <= kinds, kinds
    if variant != "knightrelay":
        assert "ep" in kinds, kinds
    if variant != "grand":
        assert "castle" in kinds, kinds
    if variant == "knightrelay":
        assert "relay" in kinds, kinds


def _positions(variant, n, seed):
    """``n`` positions from seeded random games (each game's positions from ply 4 on)."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        pos = Position.from_fen(None, variant)
        for ply in range(120):
            legal = pos.legal_moves()
            if not legal:
                break
            pos.push(_pick(rng, pos, legal))
            if ply >= 4:
                out.append(pos.copy())
    return out[:n]


@pytest.mark.parametrize("act", [N.ACT_CRELU, N.ACT_SCRELU])
def test_integer_forward_pass_matches_the_float_model(act):
    """Tolerance: against the float model of the dequantized weights, the final rounding only
    (<= 0.5 cp); against the original float weights, the propagated quantization error
    (bound below), and on average under 3 cp."""
    errs = []
    for variant, n in (("chess", 1000), ("grand", 1000), ("knightrelay", 500), ("capablanca", 500)):
        fnet = N.FloatNet.random(variant, 64, act, seed=3, ft_std=0.08)
        net = N.quantize(fnet)
        deq = N.dequantize(net, variant)
        lay = N.input_layout(variant)
        poss = _positions(variant, n, f"fwd-{variant}")
        feats = [N.position_features(net.meta, p) for p in poss]
        W = N.pad_features([f[0] for f in feats], lay.nin)
        B = N.pad_features([f[1] for f in feats], lay.nin)
        stm = np.array([f[2] for f in feats])
        ints = np.array([N.evaluate_position(net, p) for p in poss], dtype=np.float64)
        assert np.all(np.abs(ints - deq.forward(W, B, stm)) <= 0.5 + 1e-6)
        ref = fnet.forward(W, B, stm)
        # accumulator error: half a quantization step per active input and the bias; the
        # activation is 1-Lipschitz (SCReLU 2-Lipschitz on [0, 1]); output weights and bias
        # add half a step each
        k = (W < lay.nin).sum(axis=1)
        e_acc = 0.5 / N.QA * (k + 1)
        e_h = e_acc * (2 if act == N.ACT_SCRELU else 1)
        bound = fnet.scale * (np.abs(fnet.ow).sum() * e_h + 2 * 64 * 0.5 / N.QB + 0.5 / net.meta[N.M_DIV]) + 0.5
        err = np.abs(ints - ref)
        assert np.all(err <= bound), (err.max(), bound.min())
        errs.append(err)
    assert np.mean(np.concatenate(errs)) < 3.0
    assert len(np.concatenate(errs)) >= 3000


def test_network_file_round_trip_is_bit_exact(tmp_path):
    for variant, act in (("grand", N.ACT_CRELU), ("chess", N.ACT_SCRELU), ("knightrelay", N.ACT_CRELU)):
        net = N.quantize(N.FloatNet.random(variant, 48, act, seed=5))
        p = str(tmp_path / f"{variant}.nnue")
        N.write_net(p, net, variant)
        back = N.read_net(p, variant)
        for a, b in zip(net, back):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        assert N.net_bytes(back, variant) == open(p, "rb").read()
        pos = Position.from_fen(None, variant)
        assert N.evaluate_position(back, pos) == N.evaluate_position(net, pos)
        assert not os.path.exists(p + ".tmp")


def _error(path, variant):
    with pytest.raises(N.NnueError) as e:
        N.read_net(path, variant)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(path)), msg
    return msg


def test_bad_network_files_give_one_line_errors(tmp_path):
    net = N.quantize(N.FloatNet.random("chess", 16, seed=1))
    good = N.net_bytes(net, "chess")
    p = tmp_path / "net.nnue"
    assert "no such network file" in _error(str(tmp_path / "missing.nnue"), "chess")
    for cut in (0, 5, 12, 40, len(good) // 2, len(good) - 1):
        p.write_bytes(good[:cut])
        assert "truncated" in _error(str(p), "chess"), cut
    p.write_bytes(good + b"\0")
    assert "trailing data" in _error(str(p), "chess")
    bad = bytearray(good)
    bad[len(good) // 2] ^= 0x40
    p.write_bytes(bytes(bad))
    assert "checksum" in _error(str(p), "chess")
    p.write_bytes(b"PK\3\4" + good[4:])
    assert "not a Cardinal NNUE" in _error(str(p), "chess")
    bad = bytearray(good)
    bad[8] = 9
    p.write_bytes(bytes(bad))
    assert "version 9" in _error(str(p), "chess")
    p.write_bytes(good)
    assert "a network for chess, not grand" in _error(str(p), "grand")
    assert "a network for chess, not knightrelay" in _error(str(p), "knightrelay")
    assert N.read_net(str(p), "standard").meta[N.M_NIN] == 768
    assert N.read_net(str(p)).meta[N.M_NIN] == 768


def test_weights_that_could_overflow_the_accumulator_are_refused(tmp_path):
    fnet = N.FloatNet.random("chess", 8, seed=2)
    fnet.ftw[:, 3] = 4.0          # 32 pieces x 4.0 x 255 > 32767
    with pytest.raises(ValueError, match="overflow"):
        N.quantize(fnet)
    net = _int_net("chess", 8, 1)
    net.ftw[:768, 0] = 2000
    p = tmp_path / "big.nnue"
    N.write_net(str(p), net, "chess")
    assert "overflow" in _error(str(p), "chess")
