"""Make an opening suite: balanced start positions for ``cardinal match``.

    python -m bench.suites.openings --variant grand [--count 520] [--seed 1] [--out FILE]
                                    [--depth D] [--max-cp 50] [--fsf PATH]

Each position is the end of a short random line from the variant's start
position (4 to 8 plies, so either side may be to move). The moves are random
legal moves biased away from obviously bad ones: a move is avoided when after
it the opponent can win material at once (capture a piece with a cheaper one,
or capture an undefended piece, for more than the move itself took), unless
every move is like that. A position is kept when it is new (compared by the
first four FEN fields), the side to move is not in check, the game is not over,
and a fixed-depth search scores it within ``--max-cp`` centipawns (default 50)
of equality:

* chess, grand and capablanca: Fairy-Stockfish (``--fsf``, default the one
  found on ``PATH`` or in /usr/games) at depth 12 (chess) or 10 (grand,
  capablanca);
* knightrelay: Fairy-Stockfish does not know the variant, so Cardinal itself
  (its UCI engine, from the same package as this script) at depth 12.

A shallow search first (depth 6, within 200 cp) weeds out the clearly lost
positions cheaply. The engine's hash is cleared before each position
(``ucinewgame``), so a position's score does not depend on the ones before it;
with the same seed, engine and depth the output is the same.

Output (stdout, or ``--out FILE``): a ``#`` comment header (variant, count,
scorer, the command that made it) and one EPD line per position::

    <4 FEN fields> id "grand.001"; ce 12; acd 10; c0 "grand random 6 plies, fsf d10 +12"; c1 "e3e4 ...";

``ce`` is the score in centipawns from the side to move (EPD convention), ``acd``
the depth searched, ``c0`` the provenance (line length, scorer ``fsf`` or
``cardinal``, depth, score) and ``c1`` the line from the start position in UCI
coordinates (1-based ranks). The shipped suites ``bench/suites/openings-<variant>.epd``
were made with the defaults, e.g. ``python -m bench.suites.openings --variant grand
--out bench/suites/openings-grand.epd``; ``cardinal match`` plays them by default
(``bench/openings.py``).
"""
from __future__ import annotations

import random
import sys
import time

import variants as _variants
from bench.args import OneLineParser
from bench.engines import EngineError, EngineSpec, NoReply, Died, find_fairy_stockfish, start_engine
from bench.outputs import check_output_path, error_line, naming

DEFAULT_COUNT = 520
MIN_PLIES, MAX_PLIES = 4, 8
MAX_CP = 50
# variant -> (scorer, depth): Fairy-Stockfish where it knows the variant, else Cardinal
SCORERS = {"chess": ("fsf", 12), "grand": ("fsf", 10), "capablanca": ("fsf", 10),
           "knightrelay": ("cardinal", 12)}
PREFILTER_DEPTH, PREFILTER_CP = 6, 200
SEARCH_TIMEOUT = 600.0        # s for one search
ATTEMPTS_PER_POSITION = 200   # give up after count * this many lines
# Rough piece values (pawns) for the bad-move filter; the king is never captured.
VALUES = {"p": 1, "n": 3, "b": 3, "r": 5, "a": 7, "c": 8, "q": 9, "k": 0}


def _value(letter: str) -> int:
    return VALUES.get(letter.lower(), 3)


def _white(letter: str) -> bool:
    return letter.isupper()


def loses_material(pos, move) -> bool:
    """True if after ``move`` the opponent can win more material at once than ``move``
    captured: take a piece with a cheaper one, or take an undefended piece."""
    from engine.rules import layout as L
    mover_white = pos.turn == 0
    victim = pos.piece_at(L.move_to(move))
    took = _value(victim) if victim and _white(victim) != mover_white else 0
    pos.push(move)
    try:
        best = 0
        for c in pos.legal_moves():
            to = L.move_to(c)
            v = pos.piece_at(to)
            if v is None or _white(v) != mover_white or v.lower() == "k":
                continue
            gain = _value(v)
            attacker = pos.piece_at(L.move_from(c))
            if gain <= best:
                continue
            pos.push(c)
            defended = any(L.move_to(r) == to for r in pos.legal_moves())
            pos.pop()
            if defended:
                gain -= _value(attacker)
            best = max(best, gain)
        return best > took
    finally:
        pos.pop()


def random_line(variant: str, rng: random.Random, plies: int):
    """(position, moves in UCI) after ``plies`` biased-random plies, or None if the game ended."""
    from engine.rules.position import Position
    pos = Position.from_fen(None, variant)
    moves = []
    for _ in range(plies):
        if pos.status() != "ongoing":
            return None
        legal = pos.legal_moves()
        rng.shuffle(legal)
        pick = next((m for m in legal if not loses_material(pos, m)), legal[0])
        moves.append(pos.uci(pick))
        pos.push(pick)
    return pos, moves


class Scorer:
    """A UCI engine (Fairy-Stockfish or Cardinal) that scores positions at a fixed depth."""

    def __init__(self, kind: str, variant: str, fsf_path: str | None = None):
        self.kind = kind
        if kind == "fsf":
            spec = EngineSpec(cmd=[fsf_path], name="Fairy-Stockfish", options={"Hash": "16"})
        else:
            spec = EngineSpec.cardinal(Hash=16)
        # a fresh Cardinal tree compiles its numba code at start-up: wait for it
        self.eng = start_engine(spec, variant=variant, handshake_timeout=300.0, ready_timeout=300.0)
        self.eng.set_variant(variant)
        self.eng.sync(300.0)
        self.name = self.eng.id_name or spec.label

    def score(self, fen: str, depth: int):
        """``(kind, value)`` of the last main-line score: ``('cp', n)`` or ``('mate', n)``,
        from the side to move; None if the engine gave no score."""
        self.eng.new_game()
        self.eng.position(fen)
        r = self.eng.search(f"depth {depth}", SEARCH_TIMEOUT)
        return r.last.get("score")

    def close(self) -> None:
        self.eng.quit()


def generate(variant: str, count: int, seed: int, scorer: Scorer, depth: int, max_cp: int = MAX_CP,
             progress=None):
    """Up to ``count`` balanced positions: a list of dicts (fen4, plies, moves, cp).
    Raises ``RuntimeError`` when too many lines fail to give a balanced position."""
    rng = random.Random(seed)
    seen, out = set(), []
    attempts = 0
    while len(out) < count:
        attempts += 1
        if attempts > count * ATTEMPTS_PER_POSITION:
            raise RuntimeError(f"only {len(out)} balanced positions after {attempts - 1} lines")
        plies = rng.randint(MIN_PLIES, MAX_PLIES)
        made = random_line(variant, rng, plies)
        if made is None:
            continue
        pos, moves = made
        fen4 = " ".join(pos.fen().split()[:4])
        if fen4 in seen:
            continue
        seen.add(fen4)
        if pos.is_check() or pos.status() != "ongoing" or not pos.legal_moves():
            continue
        fen = fen4 + " 0 1"
        if depth > PREFILTER_DEPTH:
            s = scorer.score(fen, PREFILTER_DEPTH)
            if s is None or s[0] != "cp" or abs(s[1]) > PREFILTER_CP:
                continue
        s = scorer.score(fen, depth)
        if s is None or s[0] != "cp" or abs(s[1]) > max_cp:
            continue
        out.append({"fen4": fen4, "plies": plies, "moves": moves, "cp": s[1]})
        if progress is not None:
            progress(1)
    return out


def write(entries, variant: str, scorer_kind: str, scorer_name: str, depth: int, max_cp: int,
          command: str, out) -> None:
    out.write(f"# Cardinal opening suite: {variant}, {len(entries)} start positions scored within "
              f"+-{max_cp} cp by {scorer_name} at depth {depth}.\n")
    out.write(f"# Random lines of {MIN_PLIES}-{MAX_PLIES} plies from the start position, avoiding moves "
              "that lose material at once (see bench/suites/openings.py).\n")
    out.write("# ce: centipawns from the side to move; c0: provenance; c1: the line (UCI, 1-based ranks).\n")
    out.write(f"# Made by: {command}\n")
    w = len(str(len(entries)))
    for i, e in enumerate(entries, 1):
        out.write(f'{e["fen4"]} id "{variant}.{i:0{w}d}"; ce {e["cp"]}; acd {depth}; '
                  f'c0 "{variant} random {e["plies"]} plies, {scorer_kind} d{depth} {e["cp"]:+d}"; '
                  f'c1 "{" ".join(e["moves"])}";\n')


def _error(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2




def main(argv=None) -> int:
    ap = OneLineParser(prog="python -m bench.suites.openings",
                 description="Make an opening suite of balanced start positions (EPD) for cardinal match.")
    ap.add_argument("--variant", required=True, choices=tuple(SCORERS))
    ap.add_argument("--count", type=int, default=DEFAULT_COUNT, help=f"positions (default {DEFAULT_COUNT})")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--out", default=None, metavar="FILE", help="output file (default: stdout)")
    ap.add_argument("--depth", type=int, default=None,
                    help="search depth (default: chess 12, grand and capablanca 10, knightrelay 12)")
    ap.add_argument("--max-cp", type=int, default=MAX_CP, help=f"largest |score| kept (default {MAX_CP})")
    ap.add_argument("--fsf", default=None, metavar="PATH",
                    help="Fairy-Stockfish (default: PATH, then /usr/games); not used for knightrelay")
    argv = sys.argv[1:] if argv is None else list(argv)
    a = ap.parse_args(argv)
    variant = _variants.canonical(a.variant)
    kind, depth = SCORERS[variant]
    depth = a.depth if a.depth is not None else depth
    if a.count < 1:
        return _error("--count must be at least 1")
    if depth < 1:
        return _error("--depth must be at least 1")
    if a.max_cp < 0:
        return _error("--max-cp must not be negative")
    why = check_output_path(a.out, "--out")
    if why:
        return _error(why)
    fsf = None
    if kind == "fsf":
        fsf = find_fairy_stockfish(a.fsf)
        if fsf is None:
            return _error(f"Fairy-Stockfish not found ({a.fsf or 'PATH, /usr/games'})")
    from tqdm import tqdm
    t0 = time.monotonic()
    try:
        scorer = Scorer(kind, variant, fsf)
    except EngineError as e:
        return _error(str(e))
    bar = tqdm(total=a.count, desc=f"openings {variant}", unit="pos", disable=not sys.stderr.isatty())
    try:
        entries = generate(variant, a.count, a.seed, scorer, depth, a.max_cp, progress=bar.update)
    except (RuntimeError, NoReply, Died) as e:
        return _error(f"{variant}: {e}")
    finally:
        bar.close()
        scorer.close()
    command = "python -m bench.suites.openings " + " ".join(argv)
    if a.out:
        try:
            with naming(a.out), open(a.out, "w", encoding="utf-8") as fh:
                write(entries, variant, kind, scorer.name, depth, a.max_cp, command, fh)
        except OSError as e:           # a full disk, /dev/full
            return _error(error_line(e))
    else:
        write(entries, variant, kind, scorer.name, depth, a.max_cp, command, sys.stdout)
    cps = [abs(e["cp"]) for e in entries]
    print(f"{variant}: {len(entries)} positions in {time.monotonic() - t0:.0f} s, depth {depth}, "
          f"mean |cp| {sum(cps) / len(cps):.1f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
