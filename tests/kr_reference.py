"""Plain, slow, pure-Python reference move generator for Knight Relay Chess.

Written directly from the rules of Knight Relay Chess (Charosh 1972; Pritchard,
The Classified Encyclopedia of Chess Variants, 2007, p. 169; README.md) and
deliberately independent of the engine: it imports nothing from ``engine/``,
``variants/`` or ``search/``.  It is the oracle the numba generator is tested
against, so clarity beats speed everywhere.

Board: a list of 64 one-character strings, index ``rank * 8 + file`` with
rank 0 = rank 1 and file 0 = file a; ``'.'`` is an empty square, upper case is
White, lower case is Black (FEN letters).

Rule summary:

* Relay: a piece other than a king or knight that stands a knight's move from a
  friendly knight may also move/capture like a knight (judged on the position
  before the move).  A pawn may not use that power to reach its own first or
  last rank, and does not attack squares of those ranks with it.
* Relayed knight moves count in every attack test (check, mate, castling).
* Knights move only to empty squares, cannot be captured by anything (king
  included) and attack no square.
* No en passant; castling, promotion, stalemate, 50-move rule are orthodox.
"""

from __future__ import annotations

__all__ = ["legal_moves", "in_check", "make", "status", "perft"]

EMPTY = "."
FILES = "abcdefgh"

KNIGHT_OFFSETS = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]
KING_OFFSETS = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]
ROOK_DIRS = [(1, 0), (-1, 0), (0, 1), (0, -1)]
BISHOP_DIRS = [(1, 1), (1, -1), (-1, 1), (-1, -1)]


# ---------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------

def _sq(file: int, rank: int) -> int:
    return rank * 8 + file


def _on_board(file: int, rank: int) -> bool:
    return 0 <= file < 8 and 0 <= rank < 8


def _name(sq: int) -> str:
    return FILES[sq % 8] + str(sq // 8 + 1)


def _parse_sq(name: str) -> int:
    return _sq(FILES.index(name[0]), int(name[1]) - 1)


def _color(piece: str) -> str | None:
    """'w', 'b' or None for an empty square."""
    if piece == EMPTY:
        return None
    return "w" if piece.isupper() else "b"


def _other(color: str) -> str:
    return "b" if color == "w" else "w"


def _knight_squares(sq: int):
    f, r = sq % 8, sq // 8
    for df, dr in KNIGHT_OFFSETS:
        if _on_board(f + df, r + dr):
            yield _sq(f + df, r + dr)


def _pawn_first_last_ranks(color: str) -> tuple[int, int]:
    """(own first rank, own last rank) as 0-based rank indices."""
    return (0, 7) if color == "w" else (7, 0)


def _is_relayed(board: list[str], sq: int) -> bool:
    """variants/rules/knightrelay.md 'Relay': a non-king, non-knight piece a knight's move from
    a friendly knight gains knight power."""
    piece = board[sq]
    if piece == EMPTY or piece.upper() in ("K", "N"):
        return False
    friendly_knight = "N" if piece.isupper() else "n"
    return any(board[t] == friendly_knight for t in _knight_squares(sq))


def _can_land_on(board: list[str], target: int, mover_color: str) -> bool:
    """A move may end on an empty square or on an enemy piece that is not a
    knight (variants/rules/knightrelay.md 'Knights': knights cannot be captured)."""
    occ = board[target]
    if occ == EMPTY:
        return True
    if _color(occ) == mover_color:
        return False
    return occ.upper() != "N"


# ---------------------------------------------------------------------------
# FEN
# ---------------------------------------------------------------------------

class _Pos:
    __slots__ = ("board", "side", "castling", "halfmove", "fullmove")

    def __init__(self, board, side, castling, halfmove, fullmove):
        self.board = board
        self.side = side
        self.castling = castling
        self.halfmove = halfmove
        self.fullmove = fullmove


def _parse_fen(fen: str) -> _Pos:
    parts = fen.split()
    if len(parts) < 4:
        raise ValueError(f"bad FEN: {fen!r}")
    placement, side, castling = parts[0], parts[1], parts[2]
    # parts[3] is the en-passant field: accepted and ignored (no en passant).
    halfmove = int(parts[4]) if len(parts) > 4 else 0
    fullmove = int(parts[5]) if len(parts) > 5 else 1
    rows = placement.split("/")
    if len(rows) != 8:
        raise ValueError(f"bad FEN placement: {fen!r}")
    board = [EMPTY] * 64
    for i, row in enumerate(rows):
        rank = 7 - i
        file = 0
        for ch in row:
            if ch.isdigit():
                file += int(ch)
            else:
                if ch.upper() not in "KQRBNP":
                    raise ValueError(f"bad piece {ch!r} in FEN {fen!r}")
                board[_sq(file, rank)] = ch
                file += 1
        if file != 8:
            raise ValueError(f"bad FEN row {row!r}")
    if side not in ("w", "b"):
        raise ValueError(f"bad side to move in FEN {fen!r}")
    castling = "" if castling == "-" else castling
    return _Pos(board, side, castling, halfmove, fullmove)


def _to_fen(pos: _Pos) -> str:
    rows = []
    for rank in range(7, -1, -1):
        row = ""
        empties = 0
        for file in range(8):
            p = pos.board[_sq(file, rank)]
            if p == EMPTY:
                empties += 1
            else:
                if empties:
                    row += str(empties)
                    empties = 0
                row += p
        if empties:
            row += str(empties)
        rows.append(row)
    castling = "".join(c for c in "KQkq" if c in pos.castling) or "-"
    return f"{'/'.join(rows)} {pos.side} {castling} - {pos.halfmove} {pos.fullmove}"


# ---------------------------------------------------------------------------
# attacks
# ---------------------------------------------------------------------------

def _attacked(board: list[str], sq: int, by: str) -> bool:
    """Is square ``sq`` attacked by side ``by``?

    Knights attack nothing.  Kings, queens, rooks, bishops and pawns attack as
    in orthodox chess; relayed non-king/non-knight pieces additionally attack
    by knight power, except that a pawn's knight power never attacks its own
    first or last rank (variants/rules/knightrelay.md 'Relay').
    """
    f, r = sq % 8, sq // 8
    up = str.upper if by == "w" else str.lower

    # pawns (ordinary diagonal attack)
    pawn = up("p")
    dr = -1 if by == "w" else 1  # a white pawn attacking sq stands one rank below
    for df in (-1, 1):
        if _on_board(f + df, r + dr) and board[_sq(f + df, r + dr)] == pawn:
            return True

    # king
    king = up("k")
    for df, drr in KING_OFFSETS:
        if _on_board(f + df, r + drr) and board[_sq(f + df, r + drr)] == king:
            return True

    # sliders
    for dirs, kinds in ((ROOK_DIRS, (up("r"), up("q"))), (BISHOP_DIRS, (up("b"), up("q")))):
        for df, drr in dirs:
            ff, rr = f + df, r + drr
            while _on_board(ff, rr):
                p = board[_sq(ff, rr)]
                if p != EMPTY:
                    if p in kinds:
                        return True
                    break
                ff += df
                rr += drr

    # relayed knight power
    first, last = _pawn_first_last_ranks(by)
    for t in _knight_squares(sq):
        p = board[t]
        if p == EMPTY or _color(p) != by:
            continue
        kind = p.upper()
        if kind in ("K", "N"):
            continue
        if kind == "P" and r in (first, last):
            continue
        if _is_relayed(board, t):
            return True
    return False


def _king_square(board: list[str], color: str) -> int | None:
    king = "K" if color == "w" else "k"
    for i, p in enumerate(board):
        if p == king:
            return i
    return None


def _side_in_check(board: list[str], color: str) -> bool:
    ksq = _king_square(board, color)
    if ksq is None:
        return False
    return _attacked(board, ksq, _other(color))


# ---------------------------------------------------------------------------
# move generation
# ---------------------------------------------------------------------------

def _pseudo_moves(pos: _Pos) -> list[str]:
    board = pos.board
    me = pos.side
    them = _other(me)
    moves: list[str] = []
    for sq in range(64):
        piece = board[sq]
        if _color(piece) != me:
            continue
        kind = piece.upper()
        f, r = sq % 8, sq // 8
        frm = _name(sq)

        if kind == "N":
            # knights move only to empty squares (cannot capture)
            for t in _knight_squares(sq):
                if board[t] == EMPTY:
                    moves.append(frm + _name(t))
            continue

        if kind == "K":
            for df, dr in KING_OFFSETS:
                if _on_board(f + df, r + dr):
                    t = _sq(f + df, r + dr)
                    if _can_land_on(board, t, me):
                        moves.append(frm + _name(t))
            moves.extend(_castling_moves(pos, sq))
            continue

        if kind == "P":
            first, last = _pawn_first_last_ranks(me)
            second = 1 if me == "w" else 6
            fwd = 1 if me == "w" else -1
            # single step
            if _on_board(f, r + fwd) and board[_sq(f, r + fwd)] == EMPTY:
                t = _sq(f, r + fwd)
                if r + fwd == last:
                    moves.extend(frm + _name(t) + pr for pr in "qrbn")
                else:
                    moves.append(frm + _name(t))
                # double step from own second rank (also after returning there)
                if r == second and board[_sq(f, r + 2 * fwd)] == EMPTY:
                    moves.append(frm + _name(_sq(f, r + 2 * fwd)))
            # diagonal captures (never onto a knight)
            for df in (-1, 1):
                if _on_board(f + df, r + fwd):
                    t = _sq(f + df, r + fwd)
                    occ = board[t]
                    if occ != EMPTY and _color(occ) == them and occ.upper() != "N":
                        if r + fwd == last:
                            moves.extend(frm + _name(t) + pr for pr in "qrbn")
                        else:
                            moves.append(frm + _name(t))
            # relayed knight jumps, never to own first or last rank
            if _is_relayed(board, sq):
                for t in _knight_squares(sq):
                    if t // 8 in (first, last):
                        continue
                    if _can_land_on(board, t, me):
                        moves.append(frm + _name(t))
            continue

        # Q, R, B
        dirs = {"Q": ROOK_DIRS + BISHOP_DIRS, "R": ROOK_DIRS, "B": BISHOP_DIRS}[kind]
        for df, dr in dirs:
            ff, rr = f + df, r + dr
            while _on_board(ff, rr):
                t = _sq(ff, rr)
                occ = board[t]
                if occ == EMPTY:
                    moves.append(frm + _name(t))
                else:
                    if _can_land_on(board, t, me):
                        moves.append(frm + _name(t))
                    break
                ff += df
                rr += dr
        if _is_relayed(board, sq):
            for t in _knight_squares(sq):
                if _can_land_on(board, t, me):
                    moves.append(frm + _name(t))
    return moves


def _castling_moves(pos: _Pos, ksq: int) -> list[str]:
    """Orthodox castling: king and rook on home squares, right present in FEN,
    squares between empty, king not in check and not passing through or landing
    on an attacked square (relayed knight attacks count; knights attack
    nothing)."""
    board = pos.board
    me = pos.side
    them = _other(me)
    home_rank = 0 if me == "w" else 7
    king, rook = ("K", "R") if me == "w" else ("k", "r")
    if ksq != _sq(4, home_rank) or board[ksq] != king:
        return []
    out = []
    rights = pos.castling
    kside, qside = ("K", "Q") if me == "w" else ("k", "q")
    if kside in rights and board[_sq(7, home_rank)] == rook:
        between = [_sq(5, home_rank), _sq(6, home_rank)]
        if all(board[s] == EMPTY for s in between):
            path = [ksq, _sq(5, home_rank), _sq(6, home_rank)]
            if not any(_attacked(board, s, them) for s in path):
                out.append(_name(ksq) + _name(_sq(6, home_rank)))
    if qside in rights and board[_sq(0, home_rank)] == rook:
        between = [_sq(1, home_rank), _sq(2, home_rank), _sq(3, home_rank)]
        if all(board[s] == EMPTY for s in between):
            path = [ksq, _sq(3, home_rank), _sq(2, home_rank)]
            if not any(_attacked(board, s, them) for s in path):
                out.append(_name(ksq) + _name(_sq(2, home_rank)))
    return out


def _apply(pos: _Pos, move: str) -> _Pos:
    """Apply a (pseudo-legal) move without any legality check."""
    board = pos.board[:]
    frm = _parse_sq(move[0:2])
    to = _parse_sq(move[2:4])
    promo = move[4:5]
    piece = board[frm]
    captured = board[to]
    board[frm] = EMPTY
    if promo:
        board[to] = promo.upper() if pos.side == "w" else promo.lower()
    else:
        board[to] = piece
    # castling: the king moves two files -> move the rook too
    if piece.upper() == "K" and abs(to % 8 - frm % 8) == 2:
        rank = frm // 8
        if to % 8 == 6:
            board[_sq(5, rank)] = board[_sq(7, rank)]
            board[_sq(7, rank)] = EMPTY
        else:
            board[_sq(3, rank)] = board[_sq(0, rank)]
            board[_sq(0, rank)] = EMPTY
    # castling rights, as orthodox chess
    rights = pos.castling
    lose = {
        _sq(4, 0): "KQ", _sq(7, 0): "K", _sq(0, 0): "Q",
        _sq(4, 7): "kq", _sq(7, 7): "k", _sq(0, 7): "q",
    }
    for s in (frm, to):
        if s in lose:
            rights = "".join(c for c in rights if c not in lose[s])
    # 50-move counter: reset on any pawn move (relayed jumps included) or capture
    if piece.upper() == "P" or captured != EMPTY:
        halfmove = 0
    else:
        halfmove = pos.halfmove + 1
    fullmove = pos.fullmove + (1 if pos.side == "b" else 0)
    return _Pos(board, _other(pos.side), rights, halfmove, fullmove)


def _legal(pos: _Pos) -> list[str]:
    out = []
    for m in _pseudo_moves(pos):
        nxt = _apply(pos, m)
        if not _side_in_check(nxt.board, pos.side):
            out.append(m)
    return out


def _perft(pos: _Pos, depth: int) -> int:
    if depth == 0:
        return 1
    moves = _legal(pos)
    if depth == 1:
        return len(moves)
    return sum(_perft(_apply(pos, m), depth - 1) for m in moves)


# ---------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------

def legal_moves(fen: str) -> list[str]:
    """Legal moves of the side to move, in coordinate notation, sorted.

    Implements the Knight Relay rules: orthodox moves plus relayed knight
    moves ('Relay'), knights neither capture nor can be captured ('Knights'),
    no en passant, orthodox castling written as the king move (``e1g1``),
    promotion by ordinary pawn moves only (``e7e8q``; suffixes q, r, b, n).
    """
    return sorted(set(_legal(_parse_fen(fen))))


def in_check(fen: str) -> bool:
    """True if the side to move's king is attacked (variants/rules/knightrelay.md: relayed
    knight attacks count; knights attack nothing; a pawn's knight power does not
    attack its own first/last rank)."""
    pos = _parse_fen(fen)
    return _side_in_check(pos.board, pos.side)


def make(fen: str, move: str) -> str:
    """FEN after playing the legal ``move`` (raises ValueError if illegal).

    Per variants/rules/knightrelay.md: en-passant field always ``-``; halfmove clock reset on
    pawn moves (relayed pawn jumps included) and captures; fullmove number
    incremented after Black's move; castling rights updated as in orthodox
    chess (king or rook leaving its home square, or a capture on a rook's home
    square).
    """
    pos = _parse_fen(fen)
    if move not in _legal(pos):
        raise ValueError(f"illegal move {move!r} in {fen!r}")
    return _to_fen(_apply(pos, move))


def _insufficient(board: list[str]) -> bool:
    """variants/rules/knightrelay.md 'Other changes': both sides only kings and knights; or
    K vs K; or K+B vs K with no knight on the board."""
    pieces = [p for p in board if p != EMPTY]
    non_king = [p for p in pieces if p.upper() != "K"]
    if all(p.upper() == "N" for p in non_king):
        return True  # covers K vs K too
    if len(non_king) == 1 and non_king[0].upper() == "B":
        return True  # K+B vs K (no knight on the board by construction)
    return False


def status(fen: str) -> str:
    """Game state per variants/rules/knightrelay.md: 'checkmate', 'stalemate', 'fifty'
    (halfmove clock >= 100 and not checkmate), 'insufficient' (both sides only
    kings and knights; K vs K; K+B vs K with no knight on the board) or
    'ongoing'.  Precedence: checkmate > stalemate > fifty > insufficient.
    """
    pos = _parse_fen(fen)
    moves = _legal(pos)
    if not moves:
        if _side_in_check(pos.board, pos.side):
            return "checkmate"
        return "stalemate"
    if pos.halfmove >= 100:
        return "fifty"
    if _insufficient(pos.board):
        return "insufficient"
    return "ongoing"


def perft(fen: str, depth: int) -> int:
    """Number of leaf nodes of the legal-move tree of ``depth`` plies
    (plain recursion over the variants/rules/knightrelay.md move rules)."""
    return _perft(_parse_fen(fen), depth)


def divide(fen: str, depth: int) -> dict[str, int]:
    """Perft split by root move (debugging aid)."""
    pos = _parse_fen(fen)
    return {m: _perft(_apply(pos, m), depth - 1) for m in sorted(_legal(pos))}
