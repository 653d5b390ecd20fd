"""Standard algebraic notation (SAN) for PGN output and input.

Orthodox SAN (PGN standard, section 8.2.3) with the variants' additions:
grand promotions name the piece (``d9=A``; ``d9`` is the pawn staying a pawn);
a relayed pawn jump (knightrelay) is written with its from-square, ``e2g3`` or
``e2xg3``, never plain ``g3`` (variants/rules/knightrelay.md, SAN).
"""
from __future__ import annotations

from . import layout as L
from .fen import square_name


def _is_relay_pawn_jump(frm: int, to: int) -> bool:
    return abs(L.file_of(to) - L.file_of(frm)) + abs(L.rank_of(to) - L.rank_of(frm)) == 3 \
        and L.file_of(to) != L.file_of(frm) and L.rank_of(to) != L.rank_of(frm)


def san(pos, move: int, legal: list[int] | None = None) -> str:
    """SAN of a legal ``move`` in ``pos`` (check ``+`` and mate ``#`` suffixes included)."""
    legal = pos.legal_moves() if legal is None else legal
    frm, to = L.move_from(move), L.move_to(move)
    flags, promo = L.move_flags(move), L.move_promo(move)
    p = int(pos.board[frm]) & 15
    capture = int(pos.board[to]) not in (L.EMPTY, L.OFF) or bool(flags & L.F_EP)
    if flags & L.F_CASTLE:
        text = "O-O" if L.file_of(to) == pos.variant.castling_king_to[0] else "O-O-O"
    elif p == L.PAWN:
        if _is_relay_pawn_jump(frm, to):
            text = square_name(frm) + ("x" if capture else "") + square_name(to)
        else:
            text = (square_name(frm)[0] + "x" if capture else "") + square_name(to)
            if promo:
                text += "=" + L.TYPE_LETTERS[promo]
    else:
        text = L.TYPE_LETTERS[p]
        rivals = [m for m in legal if m != move and L.move_to(m) == to
                  and int(pos.board[L.move_from(m)]) & 15 == p]
        if rivals:
            ff, fr = L.file_of(frm), L.rank_of(frm)
            same_file = any(L.file_of(L.move_from(m)) == ff for m in rivals)
            same_rank = any(L.rank_of(L.move_from(m)) == fr for m in rivals)
            name = square_name(frm)
            if not same_file:
                text += name[0]
            elif not same_rank:
                text += name[1:]
            else:
                text += name
        text += ("x" if capture else "") + square_name(to)
    pos._push(move)
    try:
        if pos.is_check():
            text += "#" if not pos.legal_moves() else "+"
    finally:
        pos.pop()
    return text


def parse_san(pos, text: str) -> int:
    """The legal move whose SAN (or coordinate notation) is ``text``; check/mate marks,
    ``!``/``?`` and ``0-0`` castling are tolerated. Raises ``ValueError``."""
    t = text.strip()
    clean = t.rstrip("+#!?").replace("0-0-0", "O-O-O").replace("0-0", "O-O")
    legal = pos.legal_moves()
    for m in legal:
        if san(pos, m, legal).rstrip("+#") == clean:
            return m
    try:
        return pos.parse_uci(clean.replace("x", "").replace("-", ""))
    except ValueError:
        raise ValueError(f"illegal or unknown move {text!r} in {pos.fen()}") from None
