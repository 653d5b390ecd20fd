"""Variant records: every rule the generator needs, as plain data.

A :class:`Variant` is one flat record (the Fairy-Stockfish ``variant.h``
habit). New variants copy a parent with :func:`dataclasses.replace` and
override fields. :mod:`engine.rules.tables` turns a record into the flat numpy
tables the numba generator reads; no code path in the generator names a
variant.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

# Move vectors as (dx, dy) with dy towards the opponent for White.
KNIGHT = ((1, 2), (-1, 2), (1, -2), (-1, -2), (2, 1), (-2, 1), (2, -1), (-2, -1))
KING_STEPS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1))
ROOK_DIRS = ((1, 0), (-1, 0), (0, 1), (0, -1))
BISHOP_DIRS = ((1, 1), (-1, 1), (1, -1), (-1, -1))


@dataclass(frozen=True)
class Piece:
    """One piece type: FEN letter (upper case), leaper and slider vectors, values.

    ``letter`` fixes the internal type id (P N B R Q K C A -> 1..8, see
    :mod:`engine.rules.layout`). ``leaps`` are single jumps, ``slides`` are ray
    directions. Pawns are special-cased by the generator (``leaps``/``slides``
    empty). ``value`` is in centipawns (middlegame, endgame): the evaluation's
    starting material weights (a tuned weights file replaces them). ``see`` is the
    fixed exchange value in centipawns that the search orders and prunes by (static
    exchange evaluation, MVV-LVA): it never comes from the tuned evaluation, so a
    refit of the weights cannot change the move order; the king's is 0 (it never
    leaves an exchange, and as a capturer it ranks as the least valuable).
    """
    letter: str
    name: str
    leaps: tuple = ()
    slides: tuple = ()
    value: tuple = (0, 0)
    see: int = 0


@dataclass(frozen=True)
class NoMate:
    """A material set with which neither side can ever mate (insufficient material).

    The set counts the pieces of both sides together; kings are not counted.
    ``pieces`` maps a letter to the most pieces of that type the set allows
    (``None``: any number); every type not named must be absent. ``one_colour``
    lists letters whose pieces must, all together, stand on squares of one
    colour (e.g. bishops that can never cover both colours).
    """
    pieces: dict
    one_colour: str = ""


# Exchange values (``see``): the classical 1/3.2/3.3/5/9.5 scale with a 100 cp pawn; the marshal
# and the cardinal at Fairy-Stockfish's chancellor/archbishop to queen ratios (about 0.92 and 0.87).
PAWN = Piece("P", "pawn", value=(100, 120), see=100)
KNIGHT_P = Piece("N", "knight", leaps=KNIGHT, value=(320, 300), see=320)
BISHOP = Piece("B", "bishop", slides=BISHOP_DIRS, value=(330, 340), see=330)
ROOK = Piece("R", "rook", slides=ROOK_DIRS, value=(500, 540), see=500)
QUEEN = Piece("Q", "queen", slides=ROOK_DIRS + BISHOP_DIRS, value=(950, 1000), see=950)
KING = Piece("K", "king", leaps=KING_STEPS, value=(0, 0), see=0)
MARSHAL = Piece("C", "marshal", leaps=KNIGHT, slides=ROOK_DIRS, value=(850, 900), see=875)
CARDINAL = Piece("A", "cardinal", leaps=KNIGHT, slides=BISHOP_DIRS, value=(800, 820), see=825)


@dataclass(frozen=True)
class Variant:
    """A chess variant as data.

    Fields:
      name: the UCI_Variant / XBoard name (lower case).
      width, height: board size in files and ranks (at most 10x10).
      pieces: the piece types in play.
      start_fen: the initial position.
      castling: castling exists (geometry in the four ``castling_*`` fields below;
        rights are the FEN letters K/Q for White's king/queen side, k/q for Black's).
      castling_king_file: 0-based file of the king that may castle (both colours; the
        first rank for White, the last for Black).
      castling_rook_files: 0-based files of the castling rooks, (king side, queen side);
        the king-side rook stands on a higher file than the king, the queen-side one lower.
      castling_king_to: 0-based files the king moves to, (king side, queen side).
      castling_rook_to: 0-based files the rook moves to, (king side, queen side).
        Every square the king or the rook crosses or lands on must be empty (except the
        two castling pieces); the king must not be in check, nor cross or land on an
        attacked square.
      en_passant: en-passant captures exist.
      double_step_rank: 0-based rank (from the mover's side) a pawn may double-step from.
      promotion_start: 0-based relative rank where optional promotion starts; the
        last rank is always mandatory.
      promotion_types: letters a pawn may promote to.
      promotion_limits: letter -> max count per side (promotion only to a
        type below its limit); absent letters are unlimited.
      relay: pieces other than K and N defended by a friendly knight also move like a knight.
      knights_passive: knights cannot capture, cannot be captured and attack nothing.
      insufficient_material: the :class:`NoMate` material sets (at most four) with which
        no mate is possible: the game is drawn when the material on the board (both
        sides, kings aside) fits one of them.
      aliases: other names accepted for this variant (UCI_Variant, CLI, XBoard).
      xboard_name: the name in XBoard's ``variants`` feature (``normal`` for chess).
      xboard_pieces: for a variant XBoard does not know, ``piece`` lines (Betza
        notation, Sjaak's engine-defined-variant format) sent after ``setup``.
      source: where the rules come from.
      openings: short balanced lines from the start (UCI coordinates, 1-based
        ranks) that the match runner plays when no opening file is given.
      bench_positions: FENs searched by ``cardinal bench`` (``None`` = the start position).
      eval_weights: evaluation overrides for this variant (read by search/eval.py,
        which holds the defaults and documents every key), e.g.
        ``{"values": {"N": (260, 250)}, "relay_bonus": (18, 12)}``.
    """
    name: str
    width: int
    height: int
    pieces: tuple
    start_fen: str
    castling: bool = True
    castling_king_file: int = 4
    castling_rook_files: tuple = (7, 0)
    castling_king_to: tuple = (6, 2)
    castling_rook_to: tuple = (5, 3)
    en_passant: bool = True
    double_step_rank: int = 1
    promotion_start: int = 7
    promotion_types: str = "QRBN"
    promotion_limits: dict = field(default_factory=dict)
    relay: bool = False
    knights_passive: bool = False
    insufficient_material: tuple = ()
    aliases: tuple = ()
    xboard_name: str = ""
    xboard_pieces: tuple = ()
    source: str = ""
    openings: tuple = ()
    bench_positions: tuple = ()
    eval_weights: dict = field(default_factory=dict)

    # Fields that name one variant rather than describe rules: never inherited by derive().
    _IDENTITY = {"aliases": (), "xboard_name": "", "xboard_pieces": (), "source": "", "openings": (),
                 "bench_positions": (), "eval_weights": {}}

    def derive(self, **changes) -> "Variant":
        """A new record copying this one's rules (``dataclasses.replace``) with ``changes``
        applied; identity fields (aliases, XBoard name and pieces, source, openings, bench
        positions, eval overrides) start empty unless given. ``name`` is required."""
        if "name" not in changes:
            raise TypeError("derive() needs a name")
        return replace(self, **{**self._IDENTITY, **changes})

    def piece(self, letter: str) -> Piece:
        for p in self.pieces:
            if p.letter == letter.upper():
                return p
        raise KeyError(letter)

    @property
    def xboard(self) -> str:
        """The XBoard variant name (``xboard_name``, else ``name``)."""
        return self.xboard_name or self.name

    @property
    def letters(self) -> str:
        return "".join(p.letter for p in self.pieces)
