"""Skill Level move choice (search/skill.py): weak levels vary among near-best moves,
strong ones keep the best, no level takes a clear blunder; seeded and reproducible."""
from collections import Counter

from search import skill


def _picks(scores, level, n=2000, seed=1):
    gen = skill.rng(seed)
    return Counter(skill.pick(scores, level, gen) for _ in range(n))


def test_full_strength_always_plays_the_best_line():
    assert _picks([30, 29, 28, 27], skill.FULL) == {0: 2000}
    assert skill.depth_cap(skill.FULL) is None and skill.multipv(skill.FULL, 1) == 1


def test_weak_levels_search_shallower_and_wider():
    assert [skill.depth_cap(lv) for lv in (0, 5, 10, 15, 19)] == [1, 6, 11, 16, 20]
    assert skill.multipv(0, 1) == skill.MULTIPV and skill.multipv(3, 5) == 5


def test_level_0_varies_among_near_best_moves():
    c = _picks([30, 20, 10, 0], 0)
    assert len(c) == 4 and min(c.values()) > 200


def test_stronger_levels_keep_the_best_move_more_often():
    share = [_picks([30, 20, 10, 0], lv)[0] for lv in (0, 5, 10, 15, 19)]
    assert share == sorted(share) and share[-1] > share[0]


def test_no_level_takes_a_clear_blunder_over_a_good_move():
    for lv in (10, 15, 19):
        assert _picks([100, 90, -300, -400], lv)[3] == 0


def test_seeded_and_reproducible():
    a = [skill.pick([30, 20, 10, 0], 3, g) for g in [skill.rng(5)] for _ in range(50)]
    b = [skill.pick([30, 20, 10, 0], 3, g) for g in [skill.rng(5)] for _ in range(50)]
    assert a == b and len(set(a)) > 1


def test_valid_levels():
    assert all(skill.valid(v) for v in (0, 10, 20))
    assert not any(skill.valid(v) for v in (-1, 21, 3.5, True, "5", None))


def _search(searcher, pos, limits):
    infos, result = [], []
    searcher.start(pos.copy(), limits, on_info=infos.append, on_done=lambda best, ponder: result.append(best))
    searcher.wait()
    return infos, result[0]


def test_searcher_at_level_0_stops_at_depth_1_and_varies_its_move():
    from engine.rules.position import Position
    from search.driver import Limits, Searcher
    pos = Position.from_fen(None, "knightrelay")
    s = Searcher(hash_mb=1)
    s.skill_level = 0
    moves = set()
    for _ in range(12):
        infos, best = _search(s, pos, Limits(depth=12))
        assert best in pos.legal_moves()
        assert max(i["depth"] for i in infos) == 1
        assert {i["multipv"] for i in infos} == {1}          # the extra lines are not reported
        moves.add(best)
    assert len(moves) > 1
    s.skill_level = skill.FULL
    infos, _ = _search(s, pos, Limits(depth=3))
    assert max(i["depth"] for i in infos) == 3


def test_uci_skill_level_option():
    import subprocess
    import sys
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = subprocess.Popen([sys.executable, "-m", "engine"], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    p.stdin.write("uci\nsetoption name Skill Level value 21\nsetoption name Skill Level value 3\n"
                  "isready\nposition startpos\ngo depth 9\n")
    p.stdin.flush()
    lines = []
    for line in p.stdout:                 # until the search ends (EOF would stop it early)
        lines.append(line)
        if line.startswith("bestmove"):
            break
    p.stdin.write("quit\n")
    p.stdin.close()
    p.wait(timeout=60)
    out = "".join(lines)
    assert "option name Skill Level type spin default 20 min 0 max 20" in out
    assert "setoption Skill Level: value 21 out of range 0..20" in out
    depths = [int(line.split()[2]) for line in out.splitlines() if line.startswith("info depth")]
    assert depths and max(depths) == 4 and "bestmove" in out       # level 3: depth 1 + 3
