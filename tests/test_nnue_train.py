"""The numpy network trainer (bench.tune.nnue) on a toy data set in the tuning data format:
scores are the material balance, results follow it. A short run lowers the validation loss,
the exported integer net knows which side is a queen up, checkpoints resume, bad data fails."""
import random

import numpy as np
import pytest

from bench.tune import nnue as TN
from bench.tune.datafile import format_game, header_line, GameRecord
from engine.rules import layout as L
from engine.rules.position import Position
from search import nnue as N

VALUES = {L.PAWN: 100, L.KNIGHT: 300, L.BISHOP: 300, L.ROOK: 500, L.QUEEN: 900}


def _material(pos) -> int:
    s = 0
    for code in range(32):
        v = VALUES.get(code & 15, 0)
        s += v * int(pos.st[L.S_COUNT + code]) * (1 if code < 16 else -1)
    return s


def toy_data(path, games=160, seed=11):
    """Random chess games biased to captures; each game's positions from ply 6 on, scored by the
    material balance (+ noise), the result drawn from it."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(header_line({"variant": "chess", "nodes": 0, "seed": seed, "openings": "toy"}))
        for gid in range(games):
            pos = Position.from_fen(None, "chess")
            recs = []
            for ply in range(rng.randint(20, 50)):
                legal = pos.legal_moves()
                if not legal:
                    break
                caps = [m for m in legal if pos.board[L.move_to(m)] != L.EMPTY]
                pos.push(rng.choice(caps) if caps and rng.random() < 0.5 else rng.choice(legal))
                if ply >= 6 and not pos.is_check():
                    recs.append((pos.fen(), max(-1500, min(1500, _material(pos) + rng.randint(-30, 30))), ply))
            bal = _material(pos)
            result = 1.0 if bal >= 300 else 0.0 if bal <= -300 else 0.5
            fh.write(format_game(GameRecord(gid, result, len(pos.move_stack), "max-plies", "toy", recs)))
    return path


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return str(toy_data(tmp_path_factory.mktemp("nnue") / "toy.txt"))


def test_a_short_training_run_lowers_the_validation_loss_and_learns_material(toy, tmp_path):
    out = str(tmp_path / "toy.nnue")
    res = TN.train("chess", toy, out, hidden=16, epochs=12, batch=128, lr=3e-3, K=1.0, val=0.2, seed=3)
    assert res.n_val > 100 and res.n_train > 4 * res.n_val // 2
    first, best = res.history[0][2], res.best_val
    assert best < 0.75 * first and res.history[-1][2] < 0.8 * first, res.history
    net = N.read_net(out, "chess")
    no_black_queen = Position.from_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "chess")
    no_white_queen = Position.from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1", "chess")
    assert N.evaluate_position(net, no_black_queen) > 150
    assert N.evaluate_position(net, no_white_queen) < -150
    # the same from Black's side to move: the sign follows the side to move
    b = Position.from_fen(no_black_queen.fen().replace(" w ", " b "), "chess")
    assert N.evaluate_position(net, b) < -150
    # the exported integer net is the float net of the best epoch, quantized
    fl = res.net
    w, bl, stm = N.position_features(net.meta, no_white_queen)
    ref = fl.forward(N.pad_features([w], 768), N.pad_features([bl], 768), [stm])[0]
    assert abs(N.evaluate_position(net, no_white_queen) - ref) < 10


def test_checkpoints_resume_the_run(toy, tmp_path):
    ck = str(tmp_path / "ck.npz")
    kw = dict(hidden=8, batch=256, lr=3e-3, K=1.0, val=0.2, seed=5, checkpoint=ck)
    whole = TN.train("chess", toy, None, epochs=4, **kw)
    part = TN.train("chess", toy, None, epochs=2, **kw)
    assert part.history == whole.history[:3]
    rest = TN.train("chess", toy, None, epochs=4, resume=True, **kw)
    assert np.allclose(np.array(rest.history), np.array(whole.history))
    assert np.array_equal(rest.net.ftw, whole.net.ftw)
    with pytest.raises(ValueError, match="other settings"):
        TN.train("chess", toy, None, epochs=5, resume=True, **{**kw, "hidden": 12})


def test_encode_gives_both_perspectives_and_refuses_bad_fens():
    W, B, stm = TN.encode("grand", [Position.from_fen(None, "grand").fen()])
    assert W.shape == (1, 40) and stm[0] == 0 and (W < 1600).sum() == 40
    assert sorted(W[0]) == sorted(B[0])       # the start position is colour-symmetric
    with pytest.raises(ValueError, match="bad FEN"):
        TN.encode("chess", ["rnbqkbnr/pppppppp/8/8 w - - 0 1"])


@pytest.mark.parametrize("act", [N.ACT_CRELU, N.ACT_SCRELU])
def test_the_gradient_matches_finite_differences(toy, act):
    from bench.tune.datafile import read_data
    ds = read_data(toy, "chess")
    W, B, stm = TN.encode("chess", ds.fens[:64])
    T = TN.Trainer("chess", 6, act, 400, 1.0, 0.5, seed=2)
    T.p["ftw"][:768] *= 4          # spread the accumulators over the activation's range
    target = T.target(ds.score[:64], ds.result[:64])
    _, gr = T.loss_grad(W, B, stm, target)
    rng = np.random.default_rng(0)
    active = np.unique(np.concatenate([W.ravel(), B.ravel()]))
    picks = [("ftw", (int(rng.choice(active[active < 768])), int(rng.integers(6)))) for _ in range(8)]
    picks += [("ftb", (i,)) for i in range(6)] + [("ow", (i,)) for i in range(0, 12, 3)] + [("ob", (0,))]
    eps = 1e-6
    for name, ix in picks:
        old = T.p[name][ix]
        T.p[name][ix] = old + eps
        up = T.loss_grad(W, B, stm, target, grad=False)[0]
        T.p[name][ix] = old - eps
        down = T.loss_grad(W, B, stm, target, grad=False)[0]
        T.p[name][ix] = old
        num = (up - down) / (2 * eps)
        assert abs(num - gr[name][ix]) <= 1e-6 + 1e-3 * abs(num), (name, ix, num, gr[name][ix])


def test_cli_trains_writes_the_network_and_checks_its_options(toy, tmp_path, capsys):
    from engine.cli import main
    out, ck = tmp_path / "n.nnue", tmp_path / "n.npz"
    rc = main(["tune", "nnue-train", "--variant", "chess", "--data", toy, "--out", str(out), "--checkpoint", str(ck),
               "--hidden", "8", "--epochs", "2", "--batch", "512", "--k", "1", "--no-progress"])
    text = capsys.readouterr().out
    assert rc == 0 and "epoch 2: train" in text and f"wrote {out}" in text, text
    assert N.read_net(str(out), "chess").meta[N.M_H] == 8 and ck.exists()
    rc = main(["tune", "nnue-train", "--variant", "chess", "--data", toy, "--out", str(out), "--checkpoint", str(ck),
               "--hidden", "8", "--epochs", "1", "--batch", "512", "--k", "1", "--no-progress", "--float64"])
    assert rc == 0 and "epoch 1: train" in capsys.readouterr().out
    assert main(["tune", "nnue-train", "--variant", "chess", "--data", toy, "--hidden", "0"]) == 2
    assert "--hidden" in capsys.readouterr().err
    assert main(["tune", "nnue-train", "--variant", "shogi", "--data", toy]) == 2
    assert main(["tune", "nnue-train", "--variant", "grand", "--data", toy, "--out", str(tmp_path / "g.nnue"),
                 "--checkpoint", str(tmp_path / "g.npz"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error:") and "chess" in err[-1] and "grand" in err[-1], err


def _dense_loss_grad(T, W, B, stm, target):
    """The loss and gradient of the numpy trainer this one replaced: the inputs as a dense 0/1
    matrix, every product in numpy (the reference of the numba kernels)."""
    p, H, n = T.p, T.hidden, len(stm)
    rows = np.repeat(np.arange(n), W.shape[1])
    Aw, Ab = np.zeros((n, T.nin + 1)), np.zeros((n, T.nin + 1))
    np.add.at(Aw, (rows, W.ravel().astype(np.int64)), 1.0)
    np.add.at(Ab, (rows, B.ravel().astype(np.int64)), 1.0)
    Aw[:, T.nin] = Ab[:, T.nin] = 0.0
    aw, ab = Aw @ p["ftw"] + p["ftb"], Ab @ p["ftw"] + p["ftb"]
    black = (stm == 1)[:, None]
    a_s, a_o = np.where(black, ab, aw), np.where(black, aw, ab)
    out = T.scale * (N.activate(a_s, T.act) @ p["ow"][:H] + N.activate(a_o, T.act) @ p["ow"][H:] + p["ob"][0])
    sign = 1.0 - 2.0 * stm
    pred = TN.sigmoid(out * sign, T.K)
    d = pred - target
    g = (2.0 / n) * d * pred * (1.0 - pred) * (T.K * TN.LN10 / 400.0) * sign * T.scale

    def dact(a):
        inside = (a > 0.0) & (a < 1.0)
        return 2.0 * a * inside if T.act == N.ACT_SCRELU else inside.astype(np.float64)

    gr = {"ow": np.concatenate([N.activate(a_s, T.act).T @ g, N.activate(a_o, T.act).T @ g]), "ob": np.array([g.sum()])}
    da_s, da_o = g[:, None] * p["ow"][:H] * dact(a_s), g[:, None] * p["ow"][H:] * dact(a_o)
    da_w, da_b = np.where(black, da_o, da_s), np.where(black, da_s, da_o)
    gr["ftb"] = da_w.sum(axis=0) + da_b.sum(axis=0)
    gr["ftw"] = Aw.T @ da_w + Ab.T @ da_b
    return float(np.mean(d * d)), gr


@pytest.mark.parametrize("act", [N.ACT_CRELU, N.ACT_SCRELU])
def test_the_kernel_gradient_equals_the_dense_numpy_gradient(toy, act):
    """Every element of the gradient, in float64 (loss_grad) and on the float32 training path
    (the batch's gradient as train_batch sums it), against the dense numpy reference."""
    from bench.tune.datafile import read_data
    ds = read_data(toy, "chess")
    W, B, stm = TN.encode("chess", ds.fens[:200])
    T = TN.Trainer("chess", 5, act, 400, 1.0, 0.5, seed=4)
    T.p["ftw"][:768] *= 4
    T._sync()
    target = T.target(ds.score[:200], ds.result[:200])
    ref_loss, ref = _dense_loss_grad(T, W, B, stm, target)
    loss, gr = T.loss_grad(W, B, stm, target)
    assert abs(loss - ref_loss) <= 1e-12
    for k in T.NAMES:
        assert np.allclose(gr[k], ref[k], rtol=1e-9, atol=1e-13), k
    assert np.any(ref["ftw"] != 0) and not np.any(gr["ftw"][768])
    # the float32 path: what train_batch hands to Adam, before the step
    sse = T._run(np.arange(len(stm)), W, stm, target, True)
    assert abs(sse / len(stm) - ref_loss) <= 1e-6 * ref_loss
    scale = np.abs(ref["ftw"]).max()
    for k in T.NAMES:
        assert np.allclose(T.g[k], ref[k], rtol=1e-4, atol=1e-5 * scale), k
    # a wrong input row is caught: the reference moves with the inputs
    W2 = W.copy()
    W2[0, 0] = (W2[0, 0] + 1) % 768
    assert not np.allclose(_dense_loss_grad(T, W2, B, stm, target)[1]["ftw"], gr["ftw"], rtol=1e-9, atol=1e-13)


def test_a_training_step_equals_adam_on_the_reference_gradient(toy):
    """train_batch (float32 inputs' weights, fused Adam and clips) against loss_grad + step in
    float64: the same weights up to float32 rounding, the float32 copy kept in step."""
    from bench.tune.datafile import read_data
    ds = read_data(toy, "chess")
    W, B, stm = TN.encode("chess", ds.fens[:300])
    a = TN.Trainer("chess", 8, N.ACT_CRELU, 400, 1.0, 0.5, seed=6)
    b = TN.Trainer("chess", 8, N.ACT_CRELU, 400, 1.0, 0.5, seed=6, dtype=np.float64)
    target = a.target(ds.score[:300], ds.result[:300])
    for s in range(0, 300, 100):
        ix = np.arange(s, s + 100)
        la = a.train_batch(ix, W, stm, target, 1e-2)
        lb, gr = b.loss_grad(W[ix], B[ix], stm[ix], target[ix])
        b.step(gr, 1e-2)
        assert abs(la - lb) < 1e-6
    for k in a.NAMES:
        assert np.allclose(a.p[k], b.p[k], rtol=1e-4, atol=1e-6), k
        assert np.all(a.m[k] != 0) if k != "ftw" else np.any(a.m[k] != 0)
    assert np.array_equal(a.w, a.p["ftw"].astype(np.float32))
    assert not np.any(a.p["ftw"][768]) and not np.any(a.g["ftw"])


def test_encode_equals_the_positions_active_inputs(toy):
    """The FEN parser of encode against Position.set_fen + active_features (sorted: the order
    differs), chess and grand, and the FENs the parser must refuse."""
    from bench.tune.datafile import read_data
    fens = read_data(toy, "chess").fens[:300]
    rng = random.Random(3)
    pos = Position.from_fen(None, "grand")
    grand = []
    for _ in range(120):
        legal = pos.legal_moves()
        if not legal:
            break
        pos.push(rng.choice(legal))
        grand.append(pos.fen())
    for variant, fs in (("chess", fens), ("grand", grand)):
        W, B, stm = TN.encode(variant, fs)
        meta = N.make_meta(N.input_layout(variant), 1)
        nin = N.input_layout(variant).nin
        for i, fen in enumerate(fs):
            w, b, side = N.position_features(meta, Position.from_fen(fen, variant))
            assert sorted(W[i][W[i] < nin]) == sorted(w) and sorted(B[i][B[i] < nin]) == sorted(b), fen
            assert np.all(W[i, len(w):] == nin) and np.all(B[i, len(b):] == nin) and stm[i] == side
    start = Position.from_fen(None, "chess").fen()
    W, _, _ = TN.encode("chess", [start.replace(" w ", "[] w "), start.replace(" w ", " [] w "), "  " + start])
    assert (W == W[0]).all()
    for bad in [start.replace("8/8/8/8", "8/8/8/7"), start.replace("8/8/8/8", "8/8/8/9"), start.replace("8/8/8/8", "8/8/8/8/8"),
                start.replace("RNBQKBNR", "RNBQQBNR"), start.replace("8/8/8/8", "8/8/8/x7"), start.replace(" w ", " x "),
                "rnbqkbnP/pppppppp/8/8/8/8/PPPPPPP1/RNBQKBNR w KQkq - 0 1", start.split()[0]]:
        with pytest.raises(ValueError, match="bad FEN"):
            TN.encode("chess", [start, bad])
    with pytest.raises(ValueError, match="pieces, more than"):
        TN.encode("chess", ["rnbqkbnr/pppppppp/8/8/8/P7/PPPPPPPP/RNBQKBNR w KQkq - 0 1"])
