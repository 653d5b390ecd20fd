#!/usr/bin/env python3
"""An EPD suite mined from the positions where Cardinal's own score collapsed in real games.

    python bench/suites/mine_losses.py --variant grand --engine Cardinal --pgn ladder.pgn [...] \\
        [--drop 300] [--out bench/suites/losses-grand.epd]

In ladder games against a stronger engine Cardinal's score often falls by several pawns
within a few moves: a tactic the opponent saw at the same time control and Cardinal did
not. For each of Cardinal's moves with a score ``s`` (its ``{score/depth time}`` comment,
its own view), if the score of one of its next two moves is at most ``s - drop``
centipawns, the position after that move (the opponent to move) is kept with the
opponent's reply there as ``bm``: the move Cardinal failed to foresee. One position per
collapse (the first move of a run of falling scores); mate scores and book moves have no
score and are skipped. Lines carry ``id "<source> game G ply P"`` and ``c0 "<s> -> <s2>"``.

The suite is a diagnostic (``cardinal bench epd FILE --movetime MS``), not a tuning target.
Exit status 2 with one error line for bad input (unreadable PGN, unknown variant, no game of
Cardinal, an unwritable output).
"""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import variants as _variants  # noqa: E402
from bench.outputs import error_line, write_text  # noqa: E402
from bench.args import OneLineParser  # noqa: E402
from bench.pgn_reader import read_games, read_pgn_file, replay  # noqa: E402
from bench.tune.pgn_data import pgn_comment_cp  # noqa: E402

DEFAULT_DROP = 300      # cp: three pawns lost within two of our moves is a missed tactic, not drift
LOOKAHEAD = 2           # our next moves checked for the drop


def mine(variant: str, engine: str, pgns: list[str], drop: int = DEFAULT_DROP) -> tuple[list[str], dict]:
    """The EPD lines of the collapses of ``engine`` (its PGN player name) in ``pgns``, and
    counts ``{"games": G, "positions": P, "skipped": S}``. Raises ``OSError``/``ValueError``."""
    variant = _variants.get(variant).name
    lines, counts = [], {"games": 0, "positions": 0, "skipped": 0}
    for path in pgns:
        for gi, g in enumerate(read_games(read_pgn_file(path))):
            try:
                gv = _variants.get(g.variant).name
            except KeyError:
                continue
            if gv != variant or engine not in (g.tags.get("White"), g.tags.get("Black")):
                continue
            try:
                start, moves = replay(g)
            except ValueError:
                counts["skipped"] += 1
                continue
            counts["games"] += 1
            ours = 0 if g.tags.get("White") == engine else 1
            # our scored moves: (ply, cp from our side)
            scored = [(ply, cp) for ply in range(len(moves)) if (start.turn + ply) % 2 == ours
                      and (cp := pgn_comment_cp(g.comments[ply])) is not None]
            kept = {}                 # ply of the opponent's reply -> (our score, the fallen score)
            last_kept = -1
            for i, (ply, s) in enumerate(scored):
                later = scored[i + 1:i + 1 + LOOKAHEAD]
                hit = next(((p2, s2) for p2, s2 in later if s2 <= s - drop), None)
                if hit is None or ply + 1 >= len(moves) or ply <= last_kept:
                    continue
                last_kept = hit[0]          # one position per collapse
                kept[ply + 1] = (s, hit[1])
            pos = start.copy()
            for ply, mv in enumerate(moves):
                if ply in kept:             # the opponent to move, and its reply
                    fen = " ".join(pos.fen().split()[:4])
                    s, s2 = kept[ply]
                    lines.append(f'{fen} bm {pos.san(mv)}; id "{os.path.basename(path)} game {gi + 1} '
                                 f'ply {ply + 1}"; c0 "{s} -> {s2}";')
                    counts["positions"] += 1
                pos._push(mv)
    return lines, counts


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="mine_losses.py", description=__doc__.strip().splitlines()[0])
    ap.add_argument("--variant", required=True)
    ap.add_argument("--engine", default="Cardinal", help="Cardinal's player name in the PGN (default Cardinal)")
    ap.add_argument("--pgn", required=True, nargs="+", metavar="FILE", help="PGN files (.xz read compressed)")
    ap.add_argument("--drop", type=int, default=DEFAULT_DROP, help=f"cp (default {DEFAULT_DROP})")
    ap.add_argument("--out", default=None, help="EPD file to write (default: standard output)")
    a = ap.parse_args(argv)
    try:
        if a.drop < 1:
            raise ValueError(f"--drop must be at least 1, not {a.drop}")
        lines, counts = mine(a.variant, a.engine, a.pgn, a.drop)
        if not counts["games"]:
            raise ValueError(f"no {a.variant} game of {a.engine!r} in {', '.join(a.pgn)}")
        text = "".join(line + "\n" for line in lines)
        if a.out:
            write_text(a.out, text)
        else:
            sys.stdout.write(text)
    except (KeyError, ValueError, OSError) as e:
        why = error_line(e) if isinstance(e, OSError) else e.args[0] if e.args else str(e)
        print(f"error: {why}", file=sys.stderr)
        return 2
    print(f"{counts['positions']} positions from {counts['games']} games of {a.engine} "
          f"({counts['skipped']} unreadable)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
