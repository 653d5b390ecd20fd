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
    assert main(["tune", "nnue-train", "--variant", "chess", "--data", toy, "--hidden", "0"]) == 2
    assert "--hidden" in capsys.readouterr().err
    assert main(["tune", "nnue-train", "--variant", "shogi", "--data", toy]) == 2
    assert main(["tune", "nnue-train", "--variant", "grand", "--data", toy, "--out", str(tmp_path / "g.nnue"),
                 "--checkpoint", str(tmp_path / "g.npz"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error:") and "chess" in err[-1] and "grand" in err[-1], err
