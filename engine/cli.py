"""The `cardinal` command (also `python -m engine`).

Sub-commands:

    cardinal                      protocol loop on stdin/stdout (UCI or XBoard, chosen by the first command)
    cardinal perft DEPTH [--variant V] [--fen FEN] [--divide]
    cardinal bench [--variant V] [--depth D]     search node-count signature
    cardinal bench perft|epd|startup|smp|eval ...   benchmark suites (see bench/; smp: 1 vs N threads,
                                                   time to depth; eval: nanoseconds per static evaluation)
    cardinal match ...                           engine-vs-engine matches (bench/match.py)
    cardinal tune --variant V                    Texel tuning: self-play data, then fit variants/weights/V.json
    cardinal tune datagen|fit ...                the two steps alone (bench/tune/)
    cardinal tune teacher --variant V --data IN --out OUT   re-score a data file with Fairy-Stockfish
    cardinal tune pgn --variant V --pgn FILE... --out OUT   a data file from the games of PGN files
    cardinal tune nnue-data [verify] --variant V ...       network training data in chunks, with a manifest
    cardinal tune nnue-train --variant V --data FILE...     train an NNUE network (bench/tune/nnue.py)
    cardinal tune spsa --variant V ...           SPSA tuning of the search constants (bench/tune/spsa.py)
    cardinal warmup                              compile and cache every numba function
    cardinal serve [--host H] [--port P] [--open] [--max-engines N]   browser board (engine/web/)

Heavy imports (numpy, numba) happen inside the sub-commands, so the protocol
loop can answer `uci` before numba is loaded. Errors in user input print one
line to stderr and exit with status 2 (no traceback).
"""
from __future__ import annotations

import argparse
import os
import sys
import threading

import variants   # plain data, cheap to import
from bench.args import OneLineParser as _OneLineParser, check_scheduler   # plain argparse, cheap to import


MAX_PERFT_DEPTH = 20   # deeper runs never finish from any real position


def _perft(argv) -> int:
    ap = argparse.ArgumentParser(prog="cardinal perft", description="Count leaf nodes of the legal move tree "
                                 "(bulk counting: the last ply counts legal moves without playing them).")
    ap.add_argument("depth", type=int)
    ap.add_argument("--variant", default="chess", help=f"{', '.join(variants.all_names())} (default chess)")
    ap.add_argument("--fen", default=None, help="start FEN (default: the variant's start position)")
    ap.add_argument("--divide", action="store_true", help="print the count below each root move first")
    a = ap.parse_args(argv)
    import time
    from engine.rules.position import Position
    try:
        pos = Position.from_fen(a.fen, a.variant)
    except (ValueError, KeyError) as e:
        print(f"error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    for w in pos.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not 1 <= a.depth <= MAX_PERFT_DEPTH:
        print(f"error: depth must be 1..{MAX_PERFT_DEPTH}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    if a.divide:
        total = 0
        for mv, n in pos.divide(a.depth):
            print(f"{mv}: {n}")
            total += n
        print()
    else:
        total = pos.perft(a.depth)
    dt = time.perf_counter() - t0
    print(f"Nodes searched: {total}")
    print(f"Time: {dt * 1000:.0f} ms, {total / max(dt, 1e-9):.0f} nodes/second")
    return 0


# cardinal bench NAME: the module whose main() runs it, and its line in `cardinal bench --help`
BENCHES = {
    "perft": ("bench.perft", "perft speed, ours and Fairy-Stockfish's on the same positions"),
    "epd": ("bench.epd", "solve rate on an EPD test suite (shipped: chess, grand, knightrelay)"),
    "startup": ("bench.startup", "time to uciok, readyok and the first bestmove, warm and cold"),
    "smp": ("bench.smp", "time to depth of the Lazy SMP search, 1 thread against N"),
    "eval": ("bench.eval_bench", "nanoseconds per static evaluation"),
}


def _bench_epilog() -> str:
    w = max(map(len, BENCHES))
    return ("other benchmarks (cardinal bench NAME --help: their options):\n"
            + "".join(f"  {name:<{w}}  {what}\n" for name, (_, what) in BENCHES.items()))


def _bench(argv) -> int:
    if argv and argv[0] in BENCHES:
        import importlib
        return importlib.import_module(BENCHES[argv[0]][0]).main(argv[1:])
    from bench.search_bench import main
    return main(argv, epilog=_bench_epilog())


def _match(argv) -> int:
    from bench.match import main
    return main(argv)


def _tune_args(ap, step: str, T) -> None:
    ap.add_argument("--variant", required=True, help=f"{', '.join(variants.all_names())}")
    if step == "pgn":
        ap.add_argument("--pgn", required=True, nargs="+", metavar="FILE",
                        help="PGN files (cardinal match, Cute Chess; .xz read compressed); games of other variants are skipped")
        ap.add_argument("--out", required=True, metavar="OUT", help="data file to write (overwritten)")
        return
    if step == "teacher":
        ap.add_argument("--data", required=True, metavar="IN", help="data file written by cardinal tune datagen")
        ap.add_argument("--out", required=True, metavar="OUT", help="data file with the teacher's scores "
                        "(continued if it exists)")
        ap.add_argument("--depth", type=int, default=T.DEFAULT_TEACHER_DEPTH,
                        help=f"search depth per position; 0: the engine's static evaluation (Stockfish's "
                        f"eval command) (default {T.DEFAULT_TEACHER_DEPTH})")
        ap.add_argument("--engine", default=None, metavar="PATH",
                        help="UCI engine executable (default: fairy-stockfish on PATH or in /usr/games)")
        ap.add_argument("--concurrency", type=int, default=1, help="engine processes (default 1)")
        ap.add_argument("--hash", type=int, default=T.HASH_MB, help=f"engine hash in MB (default {T.HASH_MB})")
        ap.add_argument("--no-progress", action="store_true", help="no progress bar (there is none off a terminal)")
        return
    ap.add_argument("--seed", type=int, default=1, help="random seed: opening order and node jitter "
                    "(datagen), train/validation split (fit) (default 1)")
    if step in ("datagen", "all"):
        ap.add_argument("--games", type=int, default=None, help=f"games in the data file (default {T.DEFAULT_GAMES}); "
                        "an existing file is continued up to this many")
        ap.add_argument("--nodes", type=int, default=None, help=f"node limit per move (default {T.DEFAULT_NODES})")
        ap.add_argument("--concurrency", type=int, default=None, help="worker processes (default: 2, or 1 on one core)")
        ap.add_argument("--openings", default=None, metavar="EPD",
                        help="start positions (default: bench/suites/openings-<variant>.epd)")
    if step == "datagen":
        ap.add_argument("--out", default=None, metavar="FILE", help="data file (default tune-data/<variant>.txt)")
    if step == "fit":
        ap.add_argument("--data", required=True, nargs="+", metavar="FILE",
                        help="data file(s) written by cardinal tune datagen; several are fitted as one data set")
    if step in ("fit", "all"):
        if step == "all":
            ap.add_argument("--data", default=None, metavar="FILE", help="data file (default tune-data/<variant>.txt)")
        ap.add_argument("--out", default=None, metavar="FILE", help="weights file (default variants/weights/<variant>.json)")
        ap.add_argument("--val", type=float, default=None, help=f"validation fraction of the games (default {T.DEFAULT_VAL})")
        ap.add_argument("--val-data", nargs="+", default=None, metavar="FILE",
                        help="data file(s) held out as the validation set instead of a --val fraction "
                        "(their positions are dropped from training); best: fresh games no fit has seen")
        ap.add_argument("--max-iter", type=int, default=None, help=f"L-BFGS-B iterations (default {T.DEFAULT_MAX_ITER})")
        ap.add_argument("--lambda", dest="lam", type=float, default=None,
                        help=f"target = lambda * result + (1 - lambda) * sigmoid(search score) (default {T.DEFAULT_LAMBDA})")
        ap.add_argument("--l2", type=float, default=None, help="L2 penalty towards the starting weights, "
                        f"per pawn squared (default {T.DEFAULT_L2:g})")
        ap.add_argument("--free", nargs="+", default=None, metavar="PREFIX",
                        help="fit only the features whose names start with one of these prefixes "
                        "(e.g. hanging_ check_); the others keep their weights (default: all)")
        ap.add_argument("--score-k", choices=("same", "fit"), default=None,
                        help="scale of the score column in the target: K (same) or its own K_s fitted to "
                        "the results (fit) (default: fit if the data header records a teacher, else same)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (there is none off a terminal)")


def _tune_check(a) -> str | None:
    """The first problem with the options, as an error line (None: fine)."""
    for name, lo, hi in (("games", 1, 10_000_000), ("nodes", 1, 100_000_000), ("concurrency", 1, 64),
                         ("max_iter", 1, 1_000_000), ("depth", 0, 99), ("hash", 1, 65536)):
        v = getattr(a, name, None)
        if v is not None and not lo <= v <= hi:
            return f"--{name.replace('_', '-')} must be {lo}..{hi}, not {v}"
    for name, lo, hi in (("val", 0.0, 0.9), ("lam", 0.0, 1.0), ("l2", 0.0, 1e6)):
        v = getattr(a, name, None)
        if v is not None and not (lo <= v <= hi):
            flag = "lambda" if name == "lam" else name
            return f"--{flag} must be in {lo:g}..{hi:g}, not {v}"
    return None


def _variant_name(name: str) -> str | None:
    """The variant's own name for ``--variant name``; None after an ``error:`` line on stderr
    for a variant there is not (the caller exits with status 2)."""
    try:
        return variants.get(name).name
    except KeyError as e:
        print(f"error: {e.args[0] if e.args else e}", file=sys.stderr)
        return None


def _tune(argv) -> int:
    """``cardinal tune``; SIGTERM stops it as Ctrl-C does (finished games kept, exit 130)."""
    from bench.engines import sigterm_as_interrupt
    with sigterm_as_interrupt():
        if argv and argv[0] == "nnue-train":
            return _tune_nnue(argv[1:])
        if argv and argv[0] == "nnue-data":
            return _tune_nnue_data(argv[1:])
        return _tune_steps(argv)


def _tune_nnue(argv) -> int:
    """``cardinal tune nnue-train``: train a network on data files and write it."""
    from bench.tune import nnue as TN
    from search.nnue import ACT_NAMES
    ap = _OneLineParser(prog="cardinal tune nnue-train",
                        description="Train an NNUE network (numba kernels, Adam) on tuning data files; writes the "
                                    "validation-best epoch as a network file.")
    ap.add_argument("--variant", required=True, help=f"{', '.join(variants.all_names())}")
    ap.add_argument("--data", required=True, nargs="+", metavar="FILE", help="data file(s) written by cardinal tune datagen")
    ap.add_argument("--out", default=None, metavar="FILE", help="network file (default tune-data/nnue/<variant>.nnue)")
    ap.add_argument("--checkpoint", default=None, metavar="FILE",
                    help="checkpoint written every epoch (default tune-data/nnue/<variant>.npz)")
    ap.add_argument("--resume", action="store_true", help="continue from the checkpoint (same settings)")
    ap.add_argument("--hidden", type=int, default=TN.DEFAULT_HIDDEN, help=f"hidden width H (default {TN.DEFAULT_HIDDEN})")
    ap.add_argument("--act", choices=ACT_NAMES, default=ACT_NAMES[0], help="activation (default crelu)")
    ap.add_argument("--epochs", type=int, default=TN.DEFAULT_EPOCHS, help=f"epochs (default {TN.DEFAULT_EPOCHS})")
    ap.add_argument("--batch", type=int, default=TN.DEFAULT_BATCH, help=f"positions per step (default {TN.DEFAULT_BATCH})")
    ap.add_argument("--lr", type=float, default=TN.DEFAULT_LR, help=f"Adam learning rate (default {TN.DEFAULT_LR:g})")
    ap.add_argument("--lambda", dest="lam", type=float, default=TN.DEFAULT_LAMBDA,
                    help=f"target = lambda * result + (1 - lambda) * sigmoid(search score), as for fit (default {TN.DEFAULT_LAMBDA})")
    ap.add_argument("--k", type=float, default=None, help="Texel's K (default: fitted to the scores and results)")
    ap.add_argument("--val", type=float, default=TN.DEFAULT_VAL, help=f"validation fraction of the games (default {TN.DEFAULT_VAL})")
    ap.add_argument("--seed", type=int, default=1, help="random seed: start weights, split, shuffles (default 1)")
    ap.add_argument("--float64", action="store_true",
                    help="feature weights in float64 in the kernels too (slower; default float32 copies, float64 Adam)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (there is none off a terminal)")
    a = ap.parse_args(argv)
    variant = _variant_name(a.variant)
    if variant is None:
        return 2
    for flag, v, ok in (("--hidden", a.hidden, 1 <= a.hidden <= 4096), ("--epochs", a.epochs, 0 <= a.epochs <= 100000),
                        ("--batch", a.batch, 1 <= a.batch <= 10_000_000), ("--lr", a.lr, 0 < a.lr <= 1),
                        ("--lambda", a.lam, 0 <= a.lam <= 1), ("--val", a.val, 0 <= a.val <= 0.9),
                        ("--k", a.k, a.k is None or 0 < a.k <= 100)):
        if not ok:
            print(f"error: {flag} out of range: {v}", file=sys.stderr)
            return 2
    out = a.out or os.path.join("tune-data", "nnue", f"{variant}.nnue")
    ck = a.checkpoint or os.path.join("tune-data", "nnue", f"{variant}.npz")
    from bench.outputs import check_output_path
    for path, option in ((out, "--out"), (ck, "--checkpoint")):
        why = check_output_path(path, option, replace=True, mkdir=True)
        if why:
            print(f"error: {why}", file=sys.stderr)
            return 2

    def log(h):
        print(f"epoch {int(h[0])}: train {h[1]:.5f} validation {h[2]:.5f}", flush=True)

    try:
        r = TN.train(variant, a.data, out, hidden=a.hidden, act=ACT_NAMES.index(a.act), epochs=a.epochs,
                     batch=a.batch, lr=a.lr, lam=a.lam, K=a.k, val=a.val, seed=a.seed, checkpoint=ck,
                     resume=a.resume, progress=not a.no_progress, log=log, float64=a.float64)
    except (ValueError, OSError, KeyboardInterrupt) as e:
        return _tune_failed(e)
    print(f"nnue-train: {r.n_train} training and {r.n_val} validation positions, K {r.K:.3f}, "
          f"validation loss {r.history[0][2]:.5f} -> {r.best_val:.5f} (epoch {r.best_epoch}); wrote {out} "
          f"in {r.seconds:.0f} s")
    return 130 if r.interrupted else 0


def _tune_nnue_data(argv) -> int:
    """``cardinal tune nnue-data [generate|verify]``: chunked self-play data and its manifest."""
    from bench.tune import nnue_data as ND
    ap = _OneLineParser(prog="cardinal tune nnue-data",
                        description="Self-play training data for the network, in chunks of games written to "
                                    "--dir, with a manifest (bench/runs/nnue-data-<variant>.json) to commit: "
                                    "settings, engine, and each chunk's seed, counts and sha256. The same "
                                    "command again continues (unfinished and missing chunks first); settings "
                                    "left out come from the manifest. verify: check the chunk files against it.")
    ap.add_argument("action", nargs="?", choices=("generate", "verify"), default="generate",
                    help="generate (default) or verify")
    ap.add_argument("--variant", required=True, help=f"{', '.join(variants.all_names())}")
    ap.add_argument("--positions", type=int, default=None,
                    help=f"stop starting chunks once this many positions are recorded (default: the manifest's, "
                    f"else {ND.DEFAULT_POSITIONS})")
    ap.add_argument("--chunks", type=int, default=None, metavar="N",
                    help="a shorter run: start no chunk from index N on (chunks 0..N-1 at most)")
    ap.add_argument("--nodes", type=int, default=None, help=f"node limit per move (default {ND.DEFAULT_NODES})")
    ap.add_argument("--seed", type=int, default=None, help=f"base seed; chunk C plays with a seed made from it "
                    f"and C (default {ND.DEFAULT_SEED})")
    ap.add_argument("--chunk-games", type=int, default=None,
                    help=f"games per chunk file (default {ND.DEFAULT_CHUNK_GAMES})")
    ap.add_argument("--random-plies", default=None, metavar="LO-HI",
                    help="random legal moves at the start of each game, a number drawn from LO..HI by the game's "
                    "seed (not recorded) (default %d-%d)" % ND.DEFAULT_RANDOM_PLIES)
    ap.add_argument("--keep-winning-captures", action="store_true", default=None,
                    help="do not skip positions where a capture wins material by static exchange")
    ap.add_argument("--openings", default=None, metavar="EPD",
                    help="start positions (default: bench/suites/openings-<variant>.epd)")
    ap.add_argument("--concurrency", type=int, default=None,
                    help="worker processes (default: 2, or 1 on one core); with --scheduler local:N, threads per worker")
    ap.add_argument("--scheduler", default=None, metavar="ADDR",
                    help="play on a Dask cluster: tcp://HOST:PORT (dask scheduler) or local:N (N local workers)")
    ap.add_argument("--dir", default=None, metavar="DIR", help="chunk files (default tune-data/nnue/<variant>)")
    ap.add_argument("--manifest", default=None, metavar="FILE",
                    help="manifest (default bench/runs/nnue-data-<variant>.json of this checkout)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (there is none off a terminal)")
    a = ap.parse_args(argv)
    variant = _variant_name(a.variant)
    if variant is None:
        return 2
    directory = a.dir or ND.default_dir(variant)
    manifest = a.manifest or ND.default_manifest(variant)
    if a.action == "verify":
        try:
            checks = ND.verify(manifest, directory, variant)
        except (ValueError, OSError) as e:
            return _tune_failed(e)
        bad = [c for c in checks if c.status in ("missing", "changed")]
        for c in checks:
            if c.status != "ok":
                print(f"chunk {c.index}: {c.status}" + (f" ({c.games} games)" if c.status in ("unfinished", "unlisted")
                                                         else "") + f": {c.path}"
                      + (" (its game records are kept: the manifest's command rebuilds it without playing)"
                         if c.records else ""))
        ok = sum(c.status == "ok" for c in checks)
        listed = sum(c.status in ("ok", "missing", "changed") for c in checks)
        rebuild = [c.index for c in bad if c.records]
        play = [c.index for c in bad if not c.records]
        print(f"verify: {manifest}: {ok} of {listed} chunks ok in {directory}"
              + (f"; to rebuild from game records: {', '.join(map(str, rebuild))}" if rebuild else "")
              + (f"; to play again: {', '.join(map(str, play))}" if play else "")
              + ("; run the manifest's command again" if bad else ""))
        return 1 if bad else 0
    for flag, v, lo, hi in (("--positions", a.positions, 1, 10**10), ("--nodes", a.nodes, 1, 100_000_000),
                            ("--chunk-games", a.chunk_games, 1, 1_000_000), ("--concurrency", a.concurrency, 1, 256),
                            ("--chunks", a.chunks, 1, 10**7)):
        if v is not None and not lo <= v <= hi:
            print(f"error: {flag} must be {lo}..{hi}, not {v}", file=sys.stderr)
            return 2
    try:
        plies = ND.parse_random_plies(a.random_plies) if a.random_plies is not None else None
        if a.scheduler is not None:
            check_scheduler(a.scheduler)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from bench.outputs import check_output_path
    why = check_output_path(manifest, "--manifest", replace=True, mkdir=True) or \
        check_output_path(os.path.join(directory, "chunk-00000.part"), "--dir", mkdir=True)
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    conc = a.concurrency or max(1, min(2, os.cpu_count() or 1))

    def log(e):
        print(f"chunk {e['index']}: {e['games']} games, {e['positions']} positions, sha256 {e['sha256'][:16]}",
              flush=True)

    def warn(text):
        print(f"warning: {text}", file=sys.stderr, flush=True)

    try:
        r = ND.generate(variant, a.positions, directory, manifest, nodes=a.nodes, seed=a.seed,
                        chunk_games=a.chunk_games, random_plies=plies, openings=a.openings,
                        skip_winning_captures=None if a.keep_winning_captures is None else False,
                        concurrency=conc, scheduler=a.scheduler, max_chunks=a.chunks, progress=not a.no_progress, log=log, warn=warn)
    except (ValueError, OSError, RuntimeError, ConnectionError, KeyboardInterrupt) as e:
        return _tune_failed(e)
    rate = r.positions_new / max(r.seconds, 1e-9) * 3600
    print(f"nnue-data: {r.directory}: {r.positions_total} positions in finished games ({r.games_new} games and "
          f"{r.positions_new} positions new, {len(r.chunks_new)} chunks finished) in {r.seconds:.0f} s "
          f"({rate:.0f} positions/hour); manifest {r.manifest}")
    if r.interrupted:
        print(f"interrupted: finished games kept in {r.directory}; the same command continues", file=sys.stderr)
        return 130
    return 1 if r.mismatched else 0


def _tune_steps(argv) -> int:
    import os
    if argv and argv[0] == "spsa":
        from bench.tune.spsa import main
        return main(argv[1:])
    step = argv[0] if argv and argv[0] in ("datagen", "fit", "teacher", "pgn") else "all"
    rest = argv[1:] if step != "all" else argv
    prog = "cardinal tune" + ("" if step == "all" else " " + step)
    desc = {"all": "Texel tuning: self-play data (datagen) then the fit, writing variants/weights/<variant>.json.",
            "datagen": "Self-play games with a node limit; appends whole games of quiet positions to the data file.",
            "fit": "Fit K, then the mg/eg weights (L-BFGS-B) on one or more data files; writes the weights file.",
            "teacher": "Re-score every position of a data file with an outside UCI engine (default "
                       "Fairy-Stockfish) at a fixed depth; writes the same games with the teacher's scores.",
            "pgn": "Turn the finished games of PGN files into a data file: the quiet positions of the moves "
                   "played, the game results, the movers' comment scores (White's view)."}[step]
    from bench import tune as T
    ap = _OneLineParser(prog=prog, description=desc)
    _tune_args(ap, step, T)
    a = ap.parse_args(rest)
    if not a.variant.strip():
        print("error: --variant is empty", file=sys.stderr)
        return 2
    variant = _variant_name(a.variant)
    if variant is None:
        return 2
    err = _tune_check(a) or _tune_outputs(a, step, variant, T)
    if err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if step == "pgn":
        try:
            r = T.pgn_data(variant, a.pgn, a.out)
        except (ValueError, OSError, KeyboardInterrupt) as e:
            return _tune_failed(e)
        why = "".join(f", {n} {k}" for k, n in sorted(r.skipped.items()))
        print(f"pgn: {r.path}: {r.games_written} of {r.games_read} games ({r.positions} positions"
              f"{', skipped:' if why else ''}{why[1:] if why else ''})")
        return 0
    progress = not a.no_progress
    rc = 0
    if step == "teacher":
        return _tune_teacher(a, variant, T, progress)
    try:
        if step in ("datagen", "all"):
            out = (a.out if step == "datagen" else a.data) or T.default_data_path(variant)
            games = a.games or T.DEFAULT_GAMES
            conc = a.concurrency or max(1, min(2, os.cpu_count() or 1))
            r = T.datagen(variant, games, out, nodes=a.nodes or T.DEFAULT_NODES, concurrency=conc, seed=a.seed,
                          openings=a.openings, progress=progress)
            rate = r.games_new / max(r.seconds, 1e-9) * 60
            print(f"datagen: {r.path}: {r.games_done}/{games} games ({r.games_new} new, {r.positions_new} positions) "
                  f"in {r.seconds:.0f} s ({rate:.1f} games/min)")
            if r.interrupted:
                print(f"interrupted: {r.games_done} finished games kept in {r.path}", file=sys.stderr)
                return 130
        if step in ("fit", "all"):
            data = a.data or T.default_data_path(variant)
            rep = T.fit(variant, data, out=a.out, seed=a.seed,
                        val=T.DEFAULT_VAL if a.val is None else a.val,
                        max_iter=a.max_iter or T.DEFAULT_MAX_ITER,
                        lam=T.DEFAULT_LAMBDA if a.lam is None else a.lam,
                        l2=T.DEFAULT_L2 if a.l2 is None else a.l2, progress=progress, score_k=a.score_k,
                        free=a.free, val_data=a.val_data)
            T.print_report(rep)
    except (ValueError, OSError, KeyboardInterrupt) as e:
        return _tune_failed(e)
    return rc


def _tune_outputs(a, step: str, variant: str, T) -> str | None:
    """The first output file of the step that cannot be written, as an error line (None:
    all can), found before any game is played or any weight fitted."""
    from bench.outputs import check_output_path
    checks = []         # (path, option, written to a new file and renamed over it)
    if step in ("pgn", "teacher"):
        checks.append((a.out, "--out", step == "pgn"))
    if step == "datagen":
        checks.append((a.out or T.default_data_path(variant), "--out" if a.out else "data file", False))
    if step == "all":
        checks.append((a.data or T.default_data_path(variant), "--data" if a.data else "data file", False))
    if step in ("fit", "all"):
        checks.append((a.out or T.default_weights_path(variant), "--out" if a.out else "weights file", True))
    for path, option, replace in checks:
        why = check_output_path(path, option, replace=replace, mkdir=True)
        if why:
            return why
    return None


def _tune_failed(e: BaseException) -> int:
    """One line on stderr for a failed ``cardinal tune`` step; returns its exit status
    (130 after Ctrl-C, else 2: bad data, a bad path, an engine that failed)."""
    if isinstance(e, KeyboardInterrupt):
        print("interrupted", file=sys.stderr)
        return 130
    if isinstance(e, OSError):
        from bench.outputs import error_line
        print(f"error: {error_line(e)}", file=sys.stderr)
    else:
        print(f"error: {e}", file=sys.stderr)
    return 2


def _tune_teacher(a, variant: str, T, progress: bool) -> int:
    from bench.engines import EngineError, kill_all
    try:
        r = T.teacher(variant, a.data, a.out, depth=a.depth, engine=a.engine, concurrency=a.concurrency,
                      hash_mb=a.hash, progress=progress, warn=lambda s: print(f"warning: {s}", file=sys.stderr))
    except (ValueError, EngineError, OSError, KeyboardInterrupt) as e:
        return _tune_failed(e)
    finally:
        kill_all()
    rate = r.searches / max(r.seconds, 1e-9)
    print(f"teacher: {r.path}: {r.games_done}/{r.games_total} games ({r.games_new} new, {r.positions_new} positions, "
          f"{r.searches} searches, {r.mates_dropped} mate scores dropped) in {r.seconds:.0f} s "
          f"({rate:.1f} searches/s)")
    if r.interrupted:
        print(f"interrupted: {r.games_done} finished games kept in {r.path}", file=sys.stderr)
        return 130
    return 0


def _warmup(argv) -> int:
    from engine.warmup import main
    return main(argv)


def _serve(argv) -> int:
    from engine.web.server import main
    return main(argv)


def background_work() -> list[str]:
    """Names of the engine's threads still working (compile, search, waits), other than
    the main thread and the stdin reader (which only ever waits for input)."""
    from engine.protocol.loop import STDIN_THREAD
    return [t.name for t in threading.enumerate()
            if t is not threading.main_thread() and t.is_alive() and t.name != STDIN_THREAD]


def _exit_now_if_busy(status: int) -> int:
    """End the protocol process at once if a background thread still works, else return.

    A ``quit`` during a cold start comes while the warm-up thread is still inside numba's
    compiler (LLVM, C++). Normal interpreter shutdown ends such a daemon thread from under
    it when it next takes the GIL; taken down between C++ frames (LLVM calls back into
    Python while it compiles), the whole process can abort (SIGABRT: exit status -6 was
    seen when a scripted GUI quit two cold engines sharing one cache). Nothing is lost by
    skipping shutdown: output is flushed here, numba writes its cache files by atomic
    rename, and the compile locks are ``flock`` locks that the kernel releases with the
    process.
    """
    if not background_work():
        return status
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


COMMANDS = {"perft": _perft, "bench": _bench, "match": _match, "tune": _tune, "warmup": _warmup, "serve": _serve}


def main(argv=None) -> int:
    """Entry point of the ``cardinal`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        from engine.protocol.loop import run
        return _exit_now_if_busy(run())
    if argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if argv[0] in ("-V", "--version"):
        from engine import __version__
        print(f"Cardinal {__version__}")
        return 0
    cmd = COMMANDS.get(argv[0])
    if cmd is None:
        print(f"error: unknown command {argv[0]!r} (try: cardinal --help)", file=sys.stderr)
        return 2
    try:
        status = cmd(argv[1:]) or 0
        sys.stdout.flush()        # here, not at exit, so a closed pipe is caught below
        return status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader of our output left (``cardinal ... | head``): stop quietly, as a shell tool
        # killed by SIGPIPE does; stdout goes to /dev/null so the exit flush cannot fail again
        # (the Python docs' recipe, "Note on SIGPIPE")
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141


if __name__ == "__main__":
    sys.exit(main())
