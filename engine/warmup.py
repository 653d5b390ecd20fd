"""``cardinal warmup``: compile (or load from the numba cache) every numba function.

Runs perft, status and FEN set-up for all three variants (the rules core) and a
tiny search per variant (:meth:`search.driver.Searcher.warm_up`), then prints
how long it took and where the cache is. Run it once after installing, so the
first GUI start finds a warm cache (the directory is chosen by
:mod:`engine.rules.cache`: keyed by a hash of the sources, next to them when
writable, else per user; under ``NUMBA_CACHE_DIR`` if set).
"""
from __future__ import annotations

import argparse
import time


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="cardinal warmup", description=__doc__.split("\n\n")[0])
    ap.parse_args(argv)
    t0 = time.perf_counter()
    from engine.rules import cache
    with cache.compile_lock(cache.CORE_LOCK):   # the same two stages and locks as a GUI start
        from engine.rules.position import Position
        t_import = time.perf_counter() - t0
        import variants
        for v in variants.names():
            pos = Position.from_fen(None, v)
            pos.perft(2)
            pos.status()
            pos.is_check()
            pos.opponent_in_check()
            pos.push(pos.legal_moves()[0])
            pos.san(pos.legal_moves()[0])
            pos.pop()
    t_core = time.perf_counter() - t0
    with cache.compile_lock():
        from search.driver import Searcher
        Searcher(1).warm_up()
    cache.mark_warm()
    t_all = time.perf_counter() - t0
    print(f"warmup: imports {t_import:.2f} s, rules core {t_core - t_import:.2f} s, "
          f"search {t_all - t_core:.2f} s, total {t_all:.2f} s; cache {cache.cache_dir() or '(in memory)'}")
    return 0
