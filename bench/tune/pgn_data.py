"""A data file from the finished games of PGN files (``cardinal tune pgn``)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import variants as _variants
from bench.tune.datafile import _fmt_result, header_line
from bench.tune.selfplay import MAX_RECORD_CP, SKIP_PLIES, _is_quiet_move

PGN_SCORE_RE = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)/\d+")   # Cute Chess / match-runner comment: "+0.35/12 0.52s"
PGN_RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


@dataclass
class PgnDataResult:
    """What :func:`pgn_data` did: games read, games written (finished, of the variant, legal),
    games skipped and why (``{reason: count}``), positions written."""
    path: str
    games_read: int
    games_written: int
    positions: int
    skipped: dict = field(default_factory=dict)


def pgn_comment_cp(comment: str) -> int | None:
    """Centipawns of a move comment's score (the mover's view, as Cute Chess and
    ``cardinal match`` write it: ``+0.35/12 0.52s``); None for a mate score (``+M5``),
    a book move or no score."""
    m = PGN_SCORE_RE.match(comment or "")
    return None if m is None else int(round(float(m.group(1)) * 100))


def pgn_data(variant: str, pgns, out: str) -> PgnDataResult:
    """Write the finished games of PGN files ``pgns`` (a list of paths, ``.xz`` ones read
    compressed, as ``bench/runs/`` keeps the SPRTs' games; games of other variants are skipped) as a data file ``out`` (overwritten; written to a temporary file
    and renamed, so a failure leaves no half file), game ids ``0..`` in file order.

    Positions are chosen by the ``datagen`` quiet filter applied to the moves played:
    from ply ``SKIP_PLIES`` on, not in check, the move played neither a capture nor a
    promotion, and the mover's comment score within ``MAX_RECORD_CP`` (a position
    whose move has no score, a mate score or a book comment is left out). The score
    column is that comment's score from White's view: in a match between different
    engines it mixes their scales, so fit such data on results (``--lambda 1``) or
    re-score it with ``cardinal tune teacher`` first. Games without a result (``*``),
    with an illegal move or a bad FEN are skipped and counted in ``skipped``. The
    header records ``source=pgn``.

    Raises ``OSError`` for an unreadable input or unwritable output (naming ``out``),
    ``ValueError`` if no game or no position was usable, or ``out`` is not a regular
    file or is one of the inputs (a previous ``out`` is then left as it was).
    """
    from bench.pgn_reader import read_games, read_pgn_file, replay
    variant = _variants.get(variant).name
    if not out:
        raise ValueError("--out is empty")
    target = os.path.realpath(out)     # a symbolic link: its file is replaced, not the link
    if os.path.exists(target) and not os.path.isfile(target):
        raise ValueError(f"{out}: not a regular file (the data file is written to a new file, then renamed)")
    for path in pgns:
        if not path:
            raise ValueError("a --pgn file name is empty")
        if os.path.exists(path) and os.path.realpath(path) == target:
            raise ValueError(f"{out}: the output must not be one of the --pgn files")
    res = PgnDataResult(out, 0, 0, 0)
    chunks = []

    def skip(why):
        res.skipped[why] = res.skipped.get(why, 0) + 1

    for path in pgns:
        games = read_games(read_pgn_file(path))
        for g in games:
            res.games_read += 1
            try:
                gv = _variants.get(g.variant).name
            except KeyError:
                gv = g.variant
            if gv != variant:
                skip("other variant")
                continue
            if g.result not in PGN_RESULTS or not g.complete:
                skip("no result")
                continue
            try:
                start, moves = replay(g)
            except ValueError:
                skip("illegal move or bad FEN")
                continue
            gid = res.games_written
            r = PGN_RESULTS[g.result]
            rt = _fmt_result(r)
            pos = start.copy()
            lines = []
            for ply, (mv, com) in enumerate(zip(moves, g.comments)):
                cp = pgn_comment_cp(com)
                if (ply >= SKIP_PLIES and cp is not None and abs(cp) <= MAX_RECORD_CP
                        and not pos.is_check() and _is_quiet_move(pos, mv)):
                    wcp = cp if pos.turn == 0 else -cp
                    lines.append(f"P\t{pos.fen()}\t{rt}\t{wcp}\t{gid}\t{ply}\n")
                pos._push(mv)
            term = (g.tags.get("Termination") or "pgn").replace("\t", " ").replace(" ", "-") or "pgn"
            label = f"{g.tags.get('White', '?')} - {g.tags.get('Black', '?')}".replace("\t", " ").replace("\n", " ")
            lines.append(f"G\t{gid}\t{rt}\t{len(moves)}\t{term}\t{label}\n")
            chunks.append("".join(lines))
            res.games_written += 1
            res.positions += len(lines) - 1
    if not res.games_written:
        why = ", ".join(f"{n} {k}" for k, n in sorted(res.skipped.items())) or "no games"
        raise ValueError(f"no finished {variant} game in {', '.join(map(str, pgns))} ({why})")
    if not res.positions:
        raise ValueError(f"no position of the {res.games_written} finished {variant} games passed the filter "
                         "(the moves need score comments such as '+0.35/12 0.52s')")
    d = os.path.dirname(target)
    tmp = os.path.join(d, f".{os.path.basename(target)}.{os.getpid()}.tmp")
    try:
        os.makedirs(d, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(header_line({"variant": variant, "source": "pgn", "games": res.games_written}))
            fh.writelines(chunks)
        os.replace(tmp, target)
    except OSError as e:
        raise OSError(e.errno, e.strerror, out) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return res
