"""The tuning data file: its format, header, writing whole games and reading them back.

Data file (text, UTF-8, tab-separated; one header line, then whole games)::

    # cardinal-tune v1 variant=grand nodes=4000 seed=1 openings=default weights=hand
    P <fen> <result> <score> <game> <ply>       one recorded position
    G <game> <result> <plies> <termination> <opening>   end of game <game>

``result`` is the game result from White's point of view (``1``, ``0.5``, ``0``),
``score`` the search score in centipawns from White's point of view, ``ply`` the
plies played since the game's start position, ``termination`` one of
``checkmate stalemate repetition fifty insufficient adj-win adj-draw max-plies``;
the header's ``weights`` names the evaluation weights the games were played with
(:func:`weights_digest`; informative: a resumed file keeps its first header).
A game's ``P`` lines and its ``G`` line are appended in one write and flushed, and
only positions followed by their game's ``G`` line count: an interrupted run loses
at most the games in flight, and running the same command again plays the missing
game ids (every game is a function of ``seed`` and its id, so the data set is
reproducible up to line order).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from bench.outputs import naming

HEADER = "# cardinal-tune v1"
HEADER_KEYS = ("variant", "nodes", "seed", "openings")


def default_data_path(variant: str) -> str:
    """``tune-data/<variant>.txt`` (relative to the working directory; not in git)."""
    return os.path.join("tune-data", f"{variant}.txt")


@dataclass
class GameRecord:
    """One finished self-play game: ``result`` White's score (1, 0.5, 0), ``positions``
    ``[(fen, white_score_cp, ply)]`` that passed the quiet filter; ``moves`` every move
    played from the start position (UCI), of which the first ``random_plies`` were random
    (neither is written to the data file)."""
    gid: int
    result: float
    plies: int
    termination: str
    opening: str
    positions: list = field(default_factory=list)
    moves: list = field(default_factory=list)
    random_plies: int = 0


def _fmt_result(r: float) -> str:
    return "1" if r == 1.0 else "0" if r == 0.0 else "0.5"


def format_game(g: GameRecord) -> str:
    """The data-file lines of a game (its ``P`` lines, then its ``G`` line)."""
    res = _fmt_result(g.result)
    lines = [f"P\t{fen}\t{res}\t{sc}\t{g.gid}\t{ply}\n" for fen, sc, ply in g.positions]
    label = g.opening.replace("\t", " ").replace("\n", " ")
    lines.append(f"G\t{g.gid}\t{res}\t{g.plies}\t{g.termination}\t{label}\n")
    return "".join(lines)


def header_line(params: dict) -> str:
    return HEADER + "".join(f" {k}={v}" for k, v in params.items()) + "\n"


def weights_digest(variant: str) -> str:
    """What the games are played with: the first 12 hex digits of the SHA-256 of the
    variant's weights file, or ``hand`` (no file: the hand-set weights)."""
    import hashlib
    from search.eval import weights_path
    p = weights_path(variant)
    if not os.path.exists(p):
        return "hand"
    with open(p, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()[:12]


def parse_header(line: str) -> dict | None:
    if not line.startswith(HEADER):
        return None
    out = {}
    for item in line[len(HEADER):].split():
        k, _, v = item.partition("=")
        out[k] = v
    return out


def scan_data(path: str) -> tuple[dict | None, set, int]:
    """``(header, finished game ids, end offset)`` of a data file; the offset (bytes) is the end
    of the last finished game's ``G`` line (anything after it is an unfinished game)."""
    done: set = set()
    header = None
    end = 0
    off = 0
    with open(path, "rb") as fh:
        for i, raw in enumerate(fh):
            off += len(raw)
            if not raw.endswith(b"\n"):
                break
            if i == 0:
                header = parse_header(raw.decode("utf-8"))
                end = off
                continue
            if raw.startswith(b"G\t"):
                done.add(int(raw.split(b"\t")[1]))
                end = off
    return header, done, end


def _append(fh, text: str, path: str) -> None:
    """Append one game's lines, on disk when this returns; ``OSError`` names ``path``."""
    with naming(path):
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


@dataclass
class DataSet:
    """Positions of a data file: ``fens`` list[str] (n), ``result`` float64[n] (White's game
    result), ``score`` float64[n] (search score, cp, White's view), ``game`` int64[n], ``ply`` int32[n]."""
    fens: list
    result: np.ndarray
    score: np.ndarray
    game: np.ndarray
    ply: np.ndarray
    games: int = 0
    duplicates: int = 0
    header: dict | None = None
    headers: list = field(default_factory=list)   # one header (dict or None) per file read, in order
    file_positions: list = field(default_factory=list)   # positions kept from each file, in order


def read_data(path, variant: str | None = None, dedup: bool = True) -> DataSet:
    """Read a data file (positions of finished games only); with ``dedup`` keep the first of
    positions with the same FEN (move counters ignored). ``path``: one file, or a list of files
    read as one data set (each file's game numbers shifted past the previous files', so the
    train/validation split keeps whole games; duplicates dropped across files; ``header`` is
    the first file's, ``headers`` every file's in order). Raises ``ValueError`` for a malformed
    line, another variant's file, or files of which some were re-scored by a teacher and some
    not (their score scales differ), ``OSError``."""
    if not isinstance(path, (str, os.PathLike)):
        paths = list(path)
        if not paths:
            raise ValueError("no data file given")
        parts = []
        seen: set = set()
        base = 0
        for p in paths:
            d = _read_one(p, variant, dedup, seen)
            if parts and bool((d.header or {}).get("teacher")) != bool((parts[0].header or {}).get("teacher")):
                raise ValueError(f"{p}: scores from {'a teacher' if (d.header or {}).get('teacher') else 'self-play'}, "
                                 f"unlike {paths[0]}: the files cannot be fitted together")
            parts.append(DataSet(d.fens, d.result, d.score, d.game + base, d.ply, d.games, d.duplicates, d.header))
            if len(d.game):
                base = int(parts[-1].game.max()) + 1
        return DataSet([f for d in parts for f in d.fens], np.concatenate([d.result for d in parts]),
                       np.concatenate([d.score for d in parts]), np.concatenate([d.game for d in parts]),
                       np.concatenate([d.ply for d in parts]), sum(d.games for d in parts),
                       sum(d.duplicates for d in parts), parts[0].header, [d.header for d in parts],
                       [len(d.fens) for d in parts])
    return _read_one(path, variant, dedup, set())


def _read_one(path: str, variant: str | None, dedup: bool, seen: set) -> DataSet:
    """One data file for :func:`read_data`; FENs in ``seen`` count as duplicates (and new ones are added)."""
    fens, res, sc, gm, pl = [], [], [], [], []
    pending: dict = {}
    dups = 0
    games = 0
    header = None
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if n == 1 and line.startswith("#"):
                header = parse_header(line)
                if header and variant and header.get("variant") != variant:
                    raise ValueError(f"{path}: data of variant {header.get('variant')}, not {variant}")
                continue
            if not line.endswith("\n"):
                break     # a line cut by a crash: its game is unfinished
            if not line.strip() or line.startswith("#"):
                continue
            f = line.rstrip("\n").split("\t")
            try:
                if f[0] == "P" and len(f) == 6:
                    pending.setdefault(int(f[4]), []).append((f[1], float(f[2]), float(f[3]), int(f[5])))
                elif f[0] == "G" and len(f) >= 3:
                    gid = int(f[1])
                    games += 1
                    for fen, r, s, p in pending.pop(gid, []):
                        if not 0.0 <= r <= 1.0 or len(fen.split()) < 4:
                            raise ValueError
                        if dedup:
                            key = " ".join(fen.split()[:4])
                            if key in seen:
                                dups += 1
                                continue
                            seen.add(key)
                        fens.append(fen)
                        res.append(r)
                        sc.append(s)
                        gm.append(gid)
                        pl.append(p)
                else:
                    raise ValueError
            except (ValueError, IndexError):
                raise ValueError(f"{path}:{n}: malformed line (expected 'P\\tfen\\tresult\\tscore\\tgame\\tply' "
                                 "or 'G\\tgame\\tresult...')") from None
    return DataSet(fens, np.array(res, dtype=np.float64), np.array(sc, dtype=np.float64),
                   np.array(gm, dtype=np.int64), np.array(pl, dtype=np.int32), games, dups, header, [header],
                   [len(fens)])
