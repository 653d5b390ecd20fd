"""``cardinal bench eval``: nanoseconds per static evaluation over the bench and opening positions."""
import re

import numpy as np

from bench import eval_bench as EB
from search.eval import build_eval, evaluate, WS_SIZE


def test_eval_bench_evaluates_every_position(capsys):
    boards, sts, vt = EB.positions("chess")
    assert len(boards) > 500          # the bench set plus the opening suite
    ws = np.zeros(WS_SIZE, np.int32)
    ev = build_eval("chess")
    want = sum(int(evaluate(boards[i], sts[i], vt, ev, ws)) for i in range(len(boards)))
    ns, n, chk = EB.eval_cost("chess", repeat=3, rounds=1)
    assert n == len(boards) and chk == 3 * want and ns > 0
    assert EB.main(["--variant", "chess", "--repeat", "2", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(rf"chess\s+evaluations\s+{2 * n}\s+ns/eval\s+\d+\s+\({n} positions x 2, best of 1\)\n", out)


def test_eval_bench_bad_input(capsys):
    for argv in (["--variant", "nope"], ["--repeat", "0"], ["--rounds", "101"]):
        assert EB.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1
