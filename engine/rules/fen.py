"""FEN parsing and output for every variant (plain Python, not on the hot path).

Accepted input, beyond the six standard fields:

* empty-run digits up to the board width (``10`` on grand boards);
* a holdings block ``[...]`` after the board (XBoard's grand FEN), ignored;
* missing halfmove/fullmove counters (defaults 0 and 1), and the Sjaak/XBoard
  short forms ``w - 0 1`` and ``w 0 1`` (castling and/or e.p. field left out);
* on 10-rank boards an e.p. square counted from 0 (CECP) or from 1; the one that
  fits the position is kept.

A well-formed e.p. square that cannot apply (always in knightrelay) is
ignored; castling rights without their king and rook are dropped (the
python-chess convention). Output writes the e.p. square only when an e.p.
capture is legal (the Fairy-Stockfish and python-chess convention).
"""
from __future__ import annotations

import re

import numpy as np

from . import layout as L

_SQUARE_RE = re.compile(r"^([a-z])(\d{1,2})$")
_INT_RE = re.compile(r"^\d+$")


class FenError(ValueError):
    """A malformed FEN; the message names the bad field."""


def parse_square(text: str, width: int, height: int, zero_based: bool = False) -> int:
    """Mailbox index of a square name (``e4``, ``j10``); ``zero_based`` counts ranks from 0.

    Raises ``ValueError`` for a name outside the board.
    """
    m = _SQUARE_RE.match(text)
    if not m:
        raise ValueError(f"bad square {text!r}")
    f = ord(m.group(1)) - ord("a")
    r = int(m.group(2)) - (0 if zero_based else 1)
    if not (0 <= f < width and 0 <= r < height):
        raise ValueError(f"square {text!r} is off the {width}x{height} board")
    return L.square(f, r)


def square_name(sq: int, zero_based: bool = False) -> str:
    """Name of a mailbox square: ``e4``, ``j10`` (``j9`` with ``zero_based``)."""
    return "abcdefghij"[L.file_of(sq)] + str(L.rank_of(sq) + (0 if zero_based else 1))


def parse_board(field: str, variant) -> np.ndarray:
    """The board field as an ``int8[NSQ]`` mailbox. Raises :class:`FenError`."""
    board = np.full(L.NSQ, L.OFF, dtype=np.int8)
    rows = field.split("/")
    if len(rows) != variant.height:
        raise FenError(f"board field: {len(rows)} ranks, {variant.name} has {variant.height}")
    letters = variant.letters
    for i, row in enumerate(rows):
        rank = variant.height - 1 - i
        f = 0
        for tok in re.findall(r"\d+|.", row):
            if tok.isdigit():
                k = int(tok)
                if k == 0 or f + k > variant.width:
                    raise FenError(f"board field: rank {rank + 1} has more than {variant.width} files")
                for _ in range(k):
                    board[L.square(f, rank)] = L.EMPTY
                    f += 1
                continue
            up = tok.upper()
            if up not in letters or not tok.isalpha():
                raise FenError(f"board field: unknown piece letter {tok!r} for {variant.name}")
            if f >= variant.width:
                raise FenError(f"board field: rank {rank + 1} has more than {variant.width} files")
            ty = L.TYPE_LETTERS.index(up)
            board[L.square(f, rank)] = ty | ((0 if tok.isupper() else 1) << 4)
            f += 1
        if f != variant.width:
            raise FenError(f"board field: rank {rank + 1} has {f} files, {variant.name} has {variant.width}")
    return board


def split_fields(fen: str):
    """Split a FEN into (board, side, castling, ep, halfmove, fullmove) strings,
    filling in what is missing. Raises :class:`FenError`."""
    text = fen.strip()
    if not text:
        raise FenError("empty FEN")
    parts = text.split()
    board = parts[0]
    rest = parts[1:]
    if rest and rest[0].startswith("["):
        board += rest.pop(0)
    board = re.sub(r"\[[^\]]*\]$", "", board)
    if not rest:
        raise FenError("side-to-move field missing")
    side = rest[0]
    rest = rest[1:]
    nums = []
    while rest and _INT_RE.match(rest[-1]) and len(nums) < 2:
        nums.insert(0, rest.pop())
    if len(rest) + len(nums) > 4:
        raise FenError(f"too many fields: {' '.join(rest + nums)!r}")
    if len(rest) > 2:
        raise FenError(f"move counters: {' '.join(rest[2:] + nums)!r} are not numbers")
    castling, ep = "-", "-"
    if len(rest) == 2:
        castling, ep = rest
    elif len(rest) == 1:
        if _SQUARE_RE.match(rest[0]):
            ep = rest[0]
        else:
            castling = rest[0]
    if len(nums) == 2:
        half, full = nums
    elif len(nums) == 1:
        half, full = nums[0], "1"
    else:
        half, full = "0", "1"
    return board, side, castling, ep, half, full


def fen_board(board: np.ndarray, variant) -> str:
    """The board field of a mailbox."""
    rows = []
    for rank in range(variant.height - 1, -1, -1):
        row = ""
        empty = 0
        for f in range(variant.width):
            p = int(board[L.square(f, rank)])
            if p == L.EMPTY:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            c = L.TYPE_LETTERS[p & 15]
            row += c if (p >> 4) == 0 else c.lower()
        if empty:
            row += str(empty)
        rows.append(row)
    return "/".join(rows)


def castling_text(rights: int) -> str:
    s = "".join(c for bit, c in ((1, "K"), (2, "Q"), (4, "k"), (8, "q")) if rights & bit)
    return s or "-"


def ep_candidates(text: str, variant, side: int):
    """Possible mailbox squares for an e.p. field (both rank countings on 10-rank boards)."""
    out = []
    for zero in ((False, True) if variant.height == 10 else (False,)):
        try:
            out.append(parse_square(text, variant.width, variant.height, zero))
        except ValueError:
            pass
    if not out:
        raise FenError(f"en-passant field: bad square {text!r}")
    return out


def ep_fits(board: np.ndarray, sq: int, side: int, variant) -> bool:
    """True if an enemy pawn can just have double-stepped over ``sq``:
    ``sq`` empty, the pawn in front of it, its start square behind it empty."""
    them = 1 - side
    fwd_them = L.STRIDE if them == L.WHITE else -L.STRIDE
    rank = L.rank_of(sq)
    start_rank = variant.double_step_rank if them == L.WHITE else variant.height - 1 - variant.double_step_rank
    if rank != start_rank + (1 if them == L.WHITE else -1):
        return False
    pawn = L.PAWN | (them << 4)
    return (board[sq] == L.EMPTY and board[sq + fwd_them] == pawn
            and board[sq - fwd_them] == L.EMPTY)
