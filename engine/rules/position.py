"""The Python API over the numba core: :class:`Position`.

Example::

    from engine import Position
    pos = Position.from_fen(variant="grand")          # start position
    pos.push_uci("e3e5")
    print(pos.fen(), len(pos.legal_moves()), pos.status())

Moves are packed ``int`` values (layout in :mod:`engine.rules.layout`); use
:meth:`Position.uci` and :meth:`Position.san` to print them.
"""
from __future__ import annotations

import re
import numpy as np

from . import layout as L
from . import fen as F
from .fen import FenError
from . import movegen as G
from variants import get as get_variant
from .tables import compile_variant

_ZOB = G.zobrist_table()
REBASE_KEEP = 1024   # plies of history kept by Position._rebase
MAX_COUNTER = 1_000_000   # largest accepted FEN move counter
_MOVE_RE = re.compile(r"^([a-j])(\d{1,2})([a-j])(\d{1,2})([a-z]?)$")


def zobrist() -> np.ndarray:
    """The process-wide Zobrist table, ``int64[ZOB_ROWS, NSQ]``."""
    return _ZOB


class Position:
    """A game position with its history (for repetition and ``pop``).

    Arrays (shared with the numba core, see :mod:`engine.rules.movegen`):
    ``board`` int8[168], ``st`` int64[S_SIZE], ``stack`` int64[MAX_GAME_PLIES, U_SIZE],
    ``hist`` int64[MAX_GAME_PLIES + 1], ``vt`` int32[V_SIZE], ``zob`` int64[40, 168].
    """

    def __init__(self, variant: str = "chess"):
        self.variant = get_variant(variant)
        self.vt = compile_variant(self.variant.name)
        self.zob = _ZOB
        self.board = np.full(L.NSQ, L.OFF, dtype=np.int8)
        self.st = np.zeros(L.S_SIZE, dtype=np.int64)
        self.stack = np.zeros((L.MAX_GAME_PLIES, L.U_SIZE), dtype=np.int64)
        self.hist = np.zeros(L.MAX_GAME_PLIES + 1, dtype=np.int64)
        self.buf = np.zeros(G.MAX_MOVES * 64, dtype=np.int32)
        self.warnings: list[str] = []
        self.start_fen = ""
        self.move_stack: list[int] = []

    # ------------------------------------------------------------------ set-up
    @classmethod
    def from_fen(cls, fen: str | None = None, variant: str = "chess") -> "Position":
        """Position from a FEN (``None``: the variant's start position).

        Raises :class:`FenError` (a ``ValueError``) naming the bad field, and
        ``KeyError`` for an unknown variant. A position where the side not to
        move is in check is accepted; the warning is in ``.warnings``.
        """
        pos = cls(variant)
        pos.set_fen(fen if fen is not None else pos.variant.start_fen)
        return pos

    def set_fen(self, fen: str) -> None:
        """Replace the position (and clear the history). On error the position is unchanged."""
        v = self.variant
        bfield, side, castling, ep, half, full = F.split_fields(fen)
        board = F.parse_board(bfield, v)
        if side not in ("w", "b"):
            raise FenError(f"side-to-move field: {side!r} is not 'w' or 'b'")
        us = 0 if side == "w" else 1
        if not re.match(r"^(-|[KQkq]{1,4})$", castling) or len(set(castling)) != len(castling):
            raise FenError(f"castling field: {castling!r} is malformed")
        if not _INT_OK(half) or not _INT_OK(full):
            raise FenError(f"move counters: {half!r} {full!r} are not numbers")
        if int(half) > MAX_COUNTER or int(full) > MAX_COUNTER:
            raise FenError(f"move counters: {half!r} {full!r} out of range (at most {MAX_COUNTER})")
        st = np.zeros(L.S_SIZE, dtype=np.int64)
        kings = {0: [], 1: []}
        for f in range(v.width):
            for r in range(v.height):
                sq = L.square(f, r)
                p = int(board[sq])
                if p == L.EMPTY:
                    continue
                st[L.S_COUNT + p] += 1
                i = int(self.vt[L.V_SQIDX + sq])
                st[L.S_OCC + 2 * (p >> 4) + (i >> 6)] |= L.occ_bit(i)
                if p & 15 == L.KING:
                    kings[p >> 4].append(sq)
                if p & 15 == L.PAWN and r in (0, v.height - 1):
                    raise FenError(f"board field: pawn on {F.square_name(sq)} (first or last rank)")
        for c, name in ((0, "white"), (1, "black")):
            if len(kings[c]) != 1:
                raise FenError(f"board field: {name} has {len(kings[c])} kings (needs exactly 1)")
            st[L.S_KSQ + c] = kings[c][0]
        rights = 0
        if v.castling and castling != "-":
            for ch, bit in (("K", 1), ("Q", 2), ("k", 4), ("q", 8)):
                if ch not in castling:
                    continue
                c = 0 if ch.isupper() else 1
                home = 0 if c == 0 else v.height - 1
                rook_file = v.castling_rook_files[0 if ch.upper() == "K" else 1]
                if (board[L.square(v.castling_king_file, home)] == (L.KING | (c << 4))
                        and board[L.square(rook_file, home)] == (L.ROOK | (c << 4))):
                    rights |= bit
        st[L.S_SIDE] = us
        st[L.S_CASTLE] = rights
        st[L.S_HALFMOVE] = int(half)
        st[L.S_FULLMOVE] = max(1, int(full))
        if ep != "-":
            cands = F.ep_candidates(ep, v, us)
            if v.en_passant:
                for sq in cands:
                    if F.ep_fits(board, sq, us, v) and G._ep_capture_legal(board, st, self.vt, sq, us):
                        st[L.S_EP] = sq
                        break
        warn = []
        them = 1 - us
        if G.is_attacked(board, st, self.vt, int(st[L.S_KSQ + them]), us):
            warn.append(f"the side not to move ({'white' if them == 0 else 'black'}) is in check")
        st[L.S_HASH] = G.compute_hash(board, st, self.vt, self.zob)
        self.board[:] = board
        self.st[:] = st
        self.hist[0] = st[L.S_HASH]
        self.warnings = warn
        self.start_fen = fen.strip()
        self.move_stack = []

    def copy(self) -> "Position":
        """An independent copy, history included."""
        other = Position(self.variant.name)
        for name in ("board", "st", "stack", "hist"):
            getattr(other, name)[:] = getattr(self, name)
        other.warnings = list(self.warnings)
        other.start_fen = self.start_fen
        other.move_stack = list(self.move_stack)
        return other

    # ------------------------------------------------------------------ queries
    @property
    def turn(self) -> int:
        """Side to move: 0 white, 1 black."""
        return int(self.st[L.S_SIDE])

    @property
    def key(self) -> int:
        """Zobrist key (signed 64-bit int)."""
        return int(self.st[L.S_HASH])

    @property
    def ply(self) -> int:
        return int(self.st[L.S_PLY])

    def fen(self) -> str:
        """FEN of the position (e.p. square only when an e.p. capture is legal)."""
        st = self.st
        ep = F.square_name(int(st[L.S_EP])) if st[L.S_EP] else "-"
        return (f"{F.fen_board(self.board, self.variant)} {'wb'[int(st[L.S_SIDE])]} "
                f"{F.castling_text(int(st[L.S_CASTLE]))} {ep} {int(st[L.S_HALFMOVE])} {int(st[L.S_FULLMOVE])}")

    def legal_moves(self) -> list[int]:
        """Legal moves as packed ints, in generation order."""
        n = G.gen_legal(self.board, self.st, self.vt, self.buf, 0, G.GEN_ALL)
        return [int(m) for m in self.buf[:n]]

    def is_legal(self, move: int) -> bool:
        """True if packed ``move`` is legal here (one generation into the move buffer, no list)."""
        n = G.gen_legal(self.board, self.st, self.vt, self.buf, 0, G.GEN_ALL)
        return bool((self.buf[:n] == move).any())

    def legal_uci(self, zero_based: bool = False) -> list[str]:
        return [self.uci(m, zero_based) for m in self.legal_moves()]

    def is_check(self) -> bool:
        """True if the side to move is in check."""
        return bool(G.in_check(self.board, self.st, self.vt))

    def opponent_in_check(self) -> bool:
        """True if the side NOT to move is in check (a position the rules forbid)."""
        them = 1 - self.turn
        k = int(self.st[L.S_KSQ + them])
        return k != 0 and bool(G.is_attacked(self.board, self.st, self.vt, k, self.turn))

    def status(self) -> str:
        """Game-end status: 'ongoing', 'checkmate', 'stalemate', 'fifty', 'repetition'
        (threefold) or 'insufficient'. Checkmate and stalemate come first, then
        insufficient material, the 50-move rule and repetition."""
        # Plain Python over the compiled pieces (not on the hot path; a numba wrapper
        # would recompile gen_legal inline and cost ~2 s of cold start).
        if G.gen_legal(self.board, self.st, self.vt, self.buf, 0, G.GEN_ALL) == 0:
            return "checkmate" if self.is_check() else "stalemate"
        if G.insufficient_material(self.board, self.st, self.vt):
            return "insufficient"
        if self.st[L.S_HALFMOVE] >= 100:
            return "fifty"
        if G.repetitions(self.st, self.hist, self.vt) >= 2:
            return "repetition"
        return "ongoing"

    def result(self) -> str | None:
        """PGN result if the game is over by rule ('1-0', '0-1', '1/2-1/2'), else None."""
        s = self.status()
        if s == "ongoing":
            return None
        if s == "checkmate":
            return "0-1" if self.turn == 0 else "1-0"
        return "1/2-1/2"

    def piece_at(self, sq: int) -> str | None:
        """FEN letter of the piece on mailbox square ``sq``, or None."""
        p = int(self.board[sq])
        if p in (L.EMPTY, L.OFF):
            return None
        c = L.TYPE_LETTERS[p & 15]
        return c if p >> 4 == 0 else c.lower()

    # ------------------------------------------------------------------ moves
    def push(self, move: int) -> None:
        """Play a legal move. Raises ``ValueError`` if ``move`` is not legal here
        (use :meth:`parse_uci` / :meth:`parse_san` to read moves from text)."""
        if not self.is_legal(move):
            raise ValueError(f"move {move!r} is not legal in {self.fen()}")
        self._push(move)

    def _push(self, move: int) -> None:
        if self.ply >= L.MAX_GAME_PLIES - 300:
            self._rebase()
        # int32, as the search and perft pass it: one compiled make_move serves all callers
        G.make_move(self.board, self.st, self.stack, self.hist, self.vt, self.zob, np.int32(move))
        self.move_stack.append(move)

    def pop(self) -> int:
        """Take back the last move and return it. Raises ``IndexError`` if there is none."""
        if not self.move_stack or self.ply == 0:
            raise IndexError("no move to take back")
        G.unmake_move(self.board, self.st, self.stack, self.vt)
        return self.move_stack.pop()

    def _rebase(self) -> None:
        """Keep only the history that repetition can still need (very long games).

        At most ``REBASE_KEEP`` plies are kept, so the undo stack never overflows
        even when the 50-move counter runs far past 100 (a GUI may play on);
        repetitions older than that are no longer seen. Older than
        :func:`engine.rules.movegen.repetition_floor` nothing is needed."""
        keep = int(min(self.ply - G.repetition_floor(self.st, self.vt), REBASE_KEEP))
        ply = self.ply
        self.hist[: keep + 1] = self.hist[ply - keep: ply + 1].copy()
        self.stack[:keep] = self.stack[ply - keep: ply].copy()
        self.st[L.S_PLY] = keep
        self.move_stack = self.move_stack[len(self.move_stack) - keep:] if keep else []

    def uci(self, move: int, zero_based: bool = False) -> str:
        """Coordinate notation: ``e2e4``, ``g9g10q``; ``zero_based`` counts ranks from 0 (CECP on 10-rank boards)."""
        s = F.square_name(L.move_from(move), zero_based) + F.square_name(L.move_to(move), zero_based)
        pr = L.move_promo(move)
        return s + L.TYPE_LETTERS[pr].lower() if pr else s

    def parse_uci(self, text: str, zero_based: bool = False) -> int:
        """The legal move written ``text`` in coordinate notation. Raises ``ValueError`` if
        it is malformed or not legal here. Promotion letters may be upper case or
        follow ``=``; castling may also be written king-takes-rook (``e1h1``)."""
        t = text.strip().replace("=", "")
        m = _MOVE_RE.match(t.lower()) if t else None
        if not m:
            raise ValueError(f"malformed move {text!r}")
        w, h = self.variant.width, self.variant.height
        try:
            frm = F.parse_square(m.group(1) + m.group(2), w, h, zero_based)
            to = F.parse_square(m.group(3) + m.group(4), w, h, zero_based)
        except ValueError as e:
            raise ValueError(f"illegal move {text!r}: {e}") from None
        promo = 0
        if m.group(5):
            if m.group(5).upper() not in L.TYPE_LETTERS:
                raise ValueError(f"illegal move {text!r}: bad promotion letter")
            promo = L.TYPE_LETTERS.index(m.group(5).upper())
        legal = self.legal_moves()
        for mv in legal:
            if L.move_from(mv) == frm and L.move_to(mv) == to and L.move_promo(mv) == promo:
                return mv
        v = self.variant
        for mv in legal:  # king-takes-own-rook castling notation
            if L.move_flags(mv) & L.F_CASTLE and L.move_from(mv) == frm and promo == 0:
                side = 0 if L.file_of(L.move_to(mv)) == v.castling_king_to[0] else 1
                rook_sq = L.square(v.castling_rook_files[side], L.rank_of(frm))
                if to == rook_sq:
                    return mv
        raise ValueError(f"illegal move {text!r} in {self.fen()}")

    def push_uci(self, text: str, zero_based: bool = False) -> int:
        """Parse and play a coordinate move; returns it. Raises ``ValueError`` if illegal."""
        mv = self.parse_uci(text, zero_based)
        self._push(mv)
        return mv

    def push_gui_move(self, text: str, zero_based: bool = False) -> tuple[int, str | None]:
        """Play a move received from a GUI; returns ``(move, warning)``.

        Like :meth:`push_uci`, except in variants with relay: Cute Chess 1.5 does
        not count relayed knight attacks in its check tests (variants/rules/knightrelay.md,
        "Reference implementation"), so its games contain moves that leave or put
        the mover's king under a relayed attack, or castle through one. Such a
        move is played, with a warning as second element; the side not to move is
        then in check, and the search answers by capturing the king. Raises
        ``ValueError`` for anything else that is not legal.
        """
        try:
            return self.push_uci(text, zero_based), None
        except ValueError as err:
            if not self.variant.relay:
                raise
            mv = self._relay_blind_move(text, zero_based)
            if mv is None:
                raise err from None
        self._push(mv)
        return mv, (f"move {text} leaves a king under a relayed knight attack (illegal by the rules; "
                    f"accepted because Cute Chess 1.5 ignores relayed checks)")

    def _relay_blind_move(self, text: str, zero_based: bool) -> int | None:
        """The move ``text`` if it is legal when relayed attacks are ignored in check
        tests (relayed moves still exist), else None."""
        m = _MOVE_RE.match(text.strip().lower().replace("=", ""))
        if not m:
            return None
        w, h = self.variant.width, self.variant.height
        try:
            frm = F.parse_square(m.group(1) + m.group(2), w, h, zero_based)
            to = F.parse_square(m.group(3) + m.group(4), w, h, zero_based)
        except ValueError:
            return None
        promo = L.TYPE_LETTERS.index(m.group(5).upper()) if m.group(5) and m.group(5).upper() in L.TYPE_LETTERS else 0
        blind = self.vt.copy()
        blind[L.V_FLAGS] &= ~L.VF_RELAY
        cands = set()
        for vt in (self.vt, blind):   # relayed moves need vt; castling through relayed attacks needs blind
            n = G.gen_pseudo(self.board, self.st, vt, self.buf, 0, G.GEN_ALL)
            cands.update(int(x) for x in self.buf[:n])
        for mv in cands:
            if L.move_from(mv) == frm and L.move_to(mv) == to and L.move_promo(mv) == promo:
                if (int(self.board[to]) & 15) != L.KING and G._legal_slow(self.board, self.st, blind, mv):
                    return mv
        return None

    def san(self, move: int) -> str:
        """Standard algebraic notation of a legal move (see :mod:`engine.rules.notation`).
        Raises ``ValueError`` if ``move`` is not legal here."""
        from .notation import san
        legal = self.legal_moves()
        if move not in legal:
            raise ValueError(f"move {move!r} is not legal in {self.fen()}")
        return san(self, move, legal)

    def parse_san(self, text: str) -> int:
        """The legal move written in SAN (or coordinates). Raises ``ValueError``."""
        from .notation import parse_san
        return parse_san(self, text)

    # ------------------------------------------------------------------ perft
    def perft(self, depth: int) -> int:
        """Leaf nodes at ``depth`` plies (bulk counting at the last ply); 1 at depth 0.
        Raises ``ValueError`` for a negative or non-integer depth."""
        _check_depth(depth, 0)
        if depth == 0:
            return 1
        buf = self._perft_buf(depth)
        return int(G.perft(self.board, self.st, self.stack, self.hist, self.vt, self.zob, depth, buf, 0))

    def divide(self, depth: int) -> list[tuple[str, int]]:
        """Per root move leaf counts at ``depth`` (``[(uci, count), ...]``); ``ValueError``
        for a depth below 1."""
        _check_depth(depth, 1)
        out = []
        buf = self._perft_buf(depth)
        for mv in self.legal_moves():
            self._push(mv)
            n = 1 if depth <= 1 else int(G.perft(self.board, self.st, self.stack, self.hist, self.vt,
                                                self.zob, depth - 1, buf, 0))
            self.pop()
            out.append((self.uci(mv), n))
        return out

    def _perft_buf(self, depth: int) -> np.ndarray:
        return np.zeros(G.MAX_MOVES * (depth + 1), dtype=np.int32)

    def __repr__(self) -> str:
        return f"Position.from_fen({self.fen()!r}, variant={self.variant.name!r})"


def _check_depth(depth, low: int) -> None:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)):
        raise ValueError(f"perft depth must be an int, not {depth!r}")
    if depth < low:
        raise ValueError(f"perft depth {depth} out of range (at least {low})")


def _INT_OK(s: str) -> bool:
    return s.isdigit()


__all__ = ["Position", "FenError", "zobrist"]
