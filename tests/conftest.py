"""Shared test helpers: seeded random playouts and EPD/divide file readers.

The playouts are deterministic (``random.Random(seed)``) and cached per
argument tuple, so several test files can share one set of games in a run.
Import the helpers with ``from tests.conftest import ...`` (``tests`` is a
package).
"""
from __future__ import annotations

import io
import os
import random
import signal
import sys
from dataclasses import dataclass, field
from functools import lru_cache

import variants

DATA = os.path.join(os.path.dirname(__file__), "data")
VARIANTS = variants.names()


@dataclass
class Game:
    """One random playout.

    ``fens[i]`` is our FEN before ``moves[i]`` (``len(fens) == len(moves) + 1``);
    ``statuses[i]`` our ``Position.status()`` there; ``checks[i]`` our
    ``is_check()``; ``legal[i]`` the sorted legal moves (uci strings).
    """
    variant: str
    start_fen: str
    moves: list = field(default_factory=list)
    fens: list = field(default_factory=list)
    statuses: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    legal: list = field(default_factory=list)

    @property
    def final_status(self) -> str:
        return self.statuses[-1]


def _is_capture(pos, m) -> bool:
    from engine.rules import layout as L
    return int(pos.board[L.move_to(m)]) != L.EMPTY or bool(L.move_flags(m) & L.F_EP)


def _material(pos) -> int:
    from engine.rules import layout as L
    return sum(int(pos.st[L.S_COUNT + c]) for c in range(32))


@lru_cache(maxsize=None)
def playouts(variant: str, n_games: int = 40, max_plies: int = 200, seed: int = 1,
             capture_bias: float = 0.6, mate_bias: float = 0.8, end_material: int = 10, stalemate_bias: float = 0.5, start_fen: str | None = None) -> tuple:
    """``n_games`` seeded random games (tuple of :class:`Game`).

    Move choice: with probability ``capture_bias`` a random capture when there is
    one (so material comes off and games reach endgames, insufficient material
    and stalemates); once few pieces are left (at most 10 on the board), with
    probability ``mate_bias`` a mating move when there is one (so checkmates occur),
    else half the time a stalemating move when there is one;
    otherwise a uniformly random legal move. ``start_fen='endgame'`` starts each
    game from a random endgame (kings and 1..4 random pieces). A game stops at a game end
    (any status other than 'ongoing') or after ``max_plies`` plies.
    """
    from engine.rules.position import Position
    rng = random.Random(f"{variant}-{seed}")
    games = []
    for _ in range(n_games):
        pos = Position.from_fen(start_fen, variant) if start_fen != "endgame" else _random_endgame(variant, rng)
        g = Game(variant, pos.fen())
        while True:
            legal = pos.legal_moves()
            g.fens.append(pos.fen())
            g.statuses.append(pos.status())
            g.checks.append(pos.is_check())
            g.legal.append(sorted(pos.uci(m) for m in legal))
            if g.statuses[-1] != "ongoing" or len(g.moves) >= max_plies:
                break
            move = None
            if _material(pos) <= end_material and rng.random() < mate_bias:
                stalemating = None
                for m in legal:
                    pos.push(m)
                    over = not pos.legal_moves()
                    check = pos.is_check()
                    pos.pop()
                    if over and check:
                        move = m
                        break
                    if over and stalemating is None:
                        stalemating = m
                if move is None and stalemating is not None and rng.random() < stalemate_bias:
                    move = stalemating
            if move is None:
                caps = [m for m in legal if _is_capture(pos, m)]
                if caps and rng.random() < capture_bias:
                    move = rng.choice(caps)
                else:
                    move = rng.choice(legal)
            g.moves.append(pos.uci(move))
            pos.push(move)
        games.append(g)
    return tuple(games)


def _random_endgame(variant: str, rng: random.Random):
    """A random legal-looking endgame: both kings plus 1..4 other random pieces
    (no pawn on the first or last rank, side not to move not in check)."""
    from engine.rules.position import Position
    from variants import get
    v = get(variant)
    letters = [c for c in v.letters if c != "K"]
    while True:
        cells = {}
        squares = rng.sample([(f, r) for f in range(v.width) for r in range(v.height)], 6)
        cells[squares[0]] = "K"
        cells[squares[1]] = "k"
        for sq in squares[2:2 + rng.randint(1, 4)]:
            c = rng.choice(letters)
            if c == "P" and sq[1] in (0, v.height - 1):
                continue
            cells[sq] = c if rng.random() < 0.5 else c.lower()
        rows = []
        for r in range(v.height - 1, -1, -1):
            row, empty = "", 0
            for f in range(v.width):
                c = cells.get((f, r))
                if c is None:
                    empty += 1
                    continue
                if empty:
                    row += str(empty)
                    empty = 0
                row += c
            rows.append(row + (str(empty) if empty else ""))
        fen = "/".join(rows) + " " + rng.choice("wb") + " - - 0 1"
        pos = Position.from_fen(fen, variant)
        if not pos.warnings and pos.legal_moves():
            return pos


def positions(games):
    """Yield ``(game, index)`` for every recorded position of ``games``."""
    for g in games:
        for i in range(len(g.fens)):
            yield g, i


def read_epd(name: str):
    """Rows ``(fen, [(depth, count), ...])`` of ``tests/data/<name>`` ('#' lines are comments)."""
    rows = []
    with open(os.path.join(DATA, name)) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split(";")]
            fen = parts[0]
            counts = []
            for p in parts[1:]:
                d, n = p.split()
                assert d.startswith("D"), line
                counts.append((int(d[1:]), int(n)))
            rows.append((fen, counts))
    return rows


def read_divides(name: str = "knightrelay_divide.txt"):
    """Blocks ``(fen, {move: count})`` of a divide file (FEN line, then 'move: count' lines)."""
    blocks = []
    with open(os.path.join(DATA, name)) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if ":" in line:
                mv, n = line.split(":")
                blocks[-1][1][mv.strip()] = int(n)
            else:
                blocks.append((line, {}))
    return blocks


def random_positions(variant: str, n: int, seed: int, max_plies: int = 80):
    """``n`` Positions (with history) after 0..``max_plies`` random legal moves from the start,
    from a seeded ``random.Random`` (deterministic)."""
    from engine.rules.position import Position
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        pos = Position.from_fen(None, variant)
        for _ in range(rng.randint(0, max_plies)):
            lm = pos.legal_moves()
            if not lm:
                break
            pos.push(rng.choice(lm))
        out.append(pos)
    return out


def pytest_addoption(parser):
    parser.addoption("--screenshots", metavar="DIR", default=None,
                     help="save the browser-board test screenshots in DIR (default: each test's tmp dir)")


def pytest_configure(config):
    """The Ctrl-C tests send SIGINT to a ``cardinal`` child and expect exit status 130.
    A shell starts a background job (``pytest ... &`` without job control, ``nohup``) with
    SIGINT ignored, and an ignored signal stays ignored across exec, so every child would
    ignore Ctrl-C as the Unix convention asks. Give the suite Python's own handler instead:
    a handled signal is reset to the default at exec, so children react to Ctrl-C again."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


class _Tty(io.StringIO):
    def isatty(self):
        return True


def capture_main(main, argv, tty=False):
    """Run a command's ``main(argv)`` in-process with stdout and stderr captured (stderr reads as
    a terminal when ``tty``); returns ``(status, stdout, stderr)``."""
    out, err = io.StringIO(), (_Tty() if tty else io.StringIO())
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        rc = main(argv)
    finally:
        sys.stdout, sys.stderr = old
    return rc, out.getvalue(), err.getvalue()
