"""Cardinal leaves numba as it found it: other numba code in the same process keeps numba's
own semantics, Python's negative indexes included.

The kernels avoid numba's negative-index wraparound with ``engine.rules.jit.nowrap`` at
their own indexing sites, never by changing numba for everyone. Checked in a fresh
process: an ``@numba.njit`` function compiled before Cardinal is imported and one
compiled after Cardinal has run its kernels (perft, a short search) both read ``a[-1]``
as the last element, and numba's ``fix_integer_index`` is still its own function.
"""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = r"""
from engine.rules import cache
cache.configure()                       # what engine.rules.jit does before numba is imported

import numpy as np
import numba
import numba.np.arrayobj as arrayobj
numbas_own = arrayobj.fix_integer_index

@numba.njit
def before(a, i):
    return a[i]

assert before(np.arange(5), -1) == 4

from engine.rules.position import Position
from search.driver import Limits, Searcher

assert Position.from_fen(None, "chess").perft(1) == 20
s = Searcher(1)
best = []
s.start(Position.from_fen(None, "grand"), Limits(depth=3), lambda info: None, lambda b, p: best.append(b))
s.wait()
assert best and best[0], best

@numba.njit
def after(a, i):
    return a[i]

print("after", after(np.arange(5), -1), after(np.arange(5, dtype=np.int32), np.int32(-2)))
print("before", before(np.arange(5), -1))
print("own", arrayobj.fix_integer_index is numbas_own,
      arrayobj.fix_integer_index.__module__ == "numba.np.arrayobj")
"""


def test_numba_code_beside_cardinal_keeps_negative_indexes():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", PROBE], cwd=str(ROOT), env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "after 4 3" in lines, r.stdout        # a[-1] and a[-2] read from the end
    assert "before 4" in lines, r.stdout
    assert "own True True" in lines, r.stdout    # numba's module state is untouched
