"""Board geometry, piece codes, move encoding and state-vector layout.

Pure Python constants (no numba import), shared by the numba core and the
Python API. Everything the hot path reads is an ``int`` here, which numba
freezes as a compile-time constant.

Board: one padded mailbox serves 8x8 and 10x10. It is 12 columns by 14 rows
(``NSQ = 168`` cells, ``int8``): files a..j sit in columns 1..10, ranks 1..10 in
rows 2..11. Column 0 and 11 and rows 0, 1, 12, 13 are ``OFF``; on 8x8 boards the
unused columns 9..10 and rows 10..11 are ``OFF`` as well. A knight jump from any
real square lands on a real square or an ``OFF`` cell, never out of the array.
Square index: ``sq = (rank + 2) * 12 + file + 1`` with 0-based file and rank.

Piece code (``int8``): ``type | (colour << 4)``; white 1..8, black 17..24,
``EMPTY = 0``, ``OFF = 48`` (colour bits 0x30, so it matches neither colour).

Move (``int32``)::

    bits  0..7   from square (0..167)
    bits  8..15  to square
    bits 16..19  promotion piece type (0 = none)
    bits 20..23  flags: 1 double pawn step, 2 en passant, 4 castling
"""

STRIDE = 12
NROWS = 14
NSQ = STRIDE * NROWS

# piece types
PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING, MARSHAL, CARDINAL = 1, 2, 3, 4, 5, 6, 7, 8
NTYPES = 9  # types are 1..8; index 0 unused
WHITE, BLACK = 0, 1
EMPTY = 0
OFF = 48
TYPE_LETTERS = ".PNBRQKCA"  # FEN letters by type (upper case = white)

# move flags (bits 20..23 of a move) and the move's bit fields
F_DOUBLE = 1
F_EP = 2
F_CASTLE = 4
MOVE_TO_SHIFT = 8        # to square: (m >> MOVE_TO_SHIFT) & SQ_MASK
MOVE_PROMO_SHIFT = 16    # promotion type: (m >> MOVE_PROMO_SHIFT) & 0xF
MOVE_FLAGS_SHIFT = 20    # flags: (m >> MOVE_FLAGS_SHIFT) & 0xF
SQ_MASK = 0xFF           # from square: m & SQ_MASK
MOVE_PROMO_BITS = 0xF << MOVE_PROMO_SHIFT   # m & MOVE_PROMO_BITS != 0: a promotion
MOVE_EP_BIT = F_EP << MOVE_FLAGS_SHIFT      # m & MOVE_EP_BIT != 0: an en-passant capture
MOVE_CASTLE_BIT = F_CASTLE << MOVE_FLAGS_SHIFT

def field_offsets(*widths):
    """Offsets of consecutive fields of the given widths, then the total size: the one
    declaration of a vector's layout (fields cannot overlap, and a new field is one more
    width). Returns ``(offset_0, ..., offset_n-1, size)``."""
    out, pos = [], 0
    for w in widths:
        if w <= 0:
            raise ValueError("field widths must be positive")
        out.append(pos)
        pos += w
    return (*out, pos)


# state vector (int64[S_SIZE]): one per position, updated by make/unmake
(S_SIDE,          # side to move: 0 white, 1 black
 S_EP,            # en-passant target square, 0 if none (only set when an e.p. capture is legal)
 S_CASTLE,        # castling rights bits: 1 K, 2 Q, 4 k, 8 q
 S_HALFMOVE,      # 50-move-rule counter (plies)
 S_FULLMOVE,      # FEN fullmove number
 S_KSQ,           # king squares: S_KSQ + colour (0 if the side has no king)
 S_HASH,          # Zobrist key (uint64 bits stored in int64)
 S_PLY,           # number of moves on the undo stack == length of game history - 1
 S_COUNT,         # piece counts by piece code: S_COUNT + code (code < 32)
 S_OCC,           # occupancy bitsets: bit b of S_OCC + 2*colour + w is set iff square
                  #   V_SQUARES[64*w + b] holds a piece of that colour (squares in board order)
 S_SIZE) = field_offsets(1, 1, 1, 1, 1, 2, 1, 1, 32, 4)


def occ_bit(i: int) -> int:
    """The ``int64`` value of bit ``i % 64`` (bit 63 is the sign bit) for an ``S_OCC`` word."""
    b = 1 << (i & 63)
    return b - (1 << 64) if b >= 1 << 63 else b

# undo stack row (int64[U_SIZE]), one row per made move
(U_MOVE,          # the move (0 for a null move)
 U_CAPT,          # captured piece code (EMPTY if none)
 U_EP,            # S_EP before the move
 U_CASTLE,        # S_CASTLE before the move
 U_HALF,          # S_HALFMOVE before the move
 U_HASH,          # S_HASH before the move
 U_SIZE) = field_offsets(1, 1, 1, 1, 1, 1)
MAX_GAME_PLIES = 2048  # undo stack / history capacity (game + search)

CASTLE_MAXSQ = 12   # squares per castling path (must-be-empty / must-not-be-attacked lists)
MAX_NOMATE = 4      # insufficient-material sets per variant

# variant table (int32[V_SIZE], 1-D, read-only): compiled from a variant record by
# engine/rules/tables.py; the generator reads rules only from here.
# Castling fields are indexed by c = 2 * colour + side (side 0 king side, 1 queen side),
# the same bit as in S_CASTLE (1 << c).
(V_WIDTH,         # files
 V_HEIGHT,        # ranks
 V_FLAGS,         # VF_* bits
 V_DOUBLE_RANK,   # 0-based rank (from the mover's side) a pawn may double-step from
 V_PROMO_START,   # 0-based relative rank where the promotion zone starts (last rank is mandatory)
 V_NPROMO,        # number of promotion types
 V_PROMO,         # V_PROMO + i: promotion piece types, i < V_NPROMO
 V_PROMO_MAX,     # V_PROMO_MAX + type: max count of that type per side (promotion limit)
 V_LEAP_N,        # V_LEAP_N + type: number of leaper offsets
 V_SLIDE_N,       # V_SLIDE_N + type: number of slider directions
 V_LEAP,          # V_LEAP + type*16 + i: leaper offsets (up to 16 per type)
 V_SLIDE,         # V_SLIDE + type*8 + i: slider direction offsets (up to 8 per type)
 V_NSQUARES,      # number of real squares
 V_SQUARES,       # V_SQUARES + i: list of real squares, a1 b1 ... (rank-major)
 V_CMASK,         # V_CMASK + sq: castling-rights mask ANDed when a move touches sq
 V_FILE,          # V_FILE + sq: 0-based file of sq (-1 off-board)
 V_RANK,          # V_RANK + sq: 0-based rank
 V_SLIDEMASK,     # V_SLIDEMASK + type: bit d set if the type attacks along LINE_OFFSETS[d] (towards the target)
 V_RELAYABLE,     # V_RELAYABLE + type: 1 if the type gains knight moves when relayed
 V_CK_FROM,       # V_CK_FROM + colour: the square a castling king starts from
 V_CR_FROM,       # V_CR_FROM + c: the castling rook's start square
 V_CK_TO,         # V_CK_TO + c: the king's destination square
 V_CR_TO,         # V_CR_TO + c: the rook's destination square
 V_CEMPTY_N,      # V_CEMPTY_N + c: number of squares that must be empty
 V_CEMPTY,        # V_CEMPTY + c*CASTLE_MAXSQ + j: squares that must be empty
 V_CSAFE_N,       # V_CSAFE_N + c: number of squares that must not be attacked
 V_CSAFE,         # V_CSAFE + c*CASTLE_MAXSQ + j: the king's start and crossed squares (its
                  #   destination is left to the legality test)
 V_NNOMATE,       # number of insufficient-material sets (material with which no mate is possible)
 V_NOMATE,        # V_NOMATE + e*NTYPES + type: most pieces of that type (both sides) in set e
 V_NOMATE_COLOUR,  # V_NOMATE_COLOUR + e: bit t set if the type-t pieces must stand on one square colour
 V_SQIDX,         # V_SQIDX + sq: index of sq in V_SQUARES (its bit in S_OCC; -1 off-board)
 V_SEE,           # V_SEE + type: the type's fixed exchange value in centipawns (Piece.see; king 0):
                  #   static exchange evaluation and capture ordering, never the tuned evaluation
 V_SIZE) = field_offsets(1, 1, 1, 1, 1, 1, 8, NTYPES, NTYPES, NTYPES, NTYPES * 16, NTYPES * 8,
                    1, 100, NSQ, NSQ, NSQ, NTYPES, NTYPES,
                    2, 4, 4, 4, 4, 4 * CASTLE_MAXSQ, 4, 4 * CASTLE_MAXSQ,
                    1, MAX_NOMATE * NTYPES, MAX_NOMATE, NSQ, NTYPES)

VF_CASTLING = 1
VF_EP = 2
VF_RELAY = 4           # pieces defended by a friendly knight gain knight moves
VF_KNIGHT_PASSIVE = 8  # knights neither capture, nor can be captured, nor attack

KNIGHT_OFFSETS = (2 * STRIDE + 1, 2 * STRIDE - 1, -2 * STRIDE + 1, -2 * STRIDE - 1,
                  STRIDE + 2, STRIDE - 2, -STRIDE + 2, -STRIDE - 2)
# the 8 line directions: 4 orthogonal then 4 diagonal
LINE_OFFSETS = (1, -1, STRIDE, -STRIDE, STRIDE + 1, STRIDE - 1, -STRIDE + 1, -STRIDE - 1)


def square(file: int, rank: int) -> int:
    """Mailbox index of a 0-based (file, rank)."""
    return (rank + 2) * STRIDE + file + 1


def file_of(sq: int) -> int:
    return sq % STRIDE - 1


def rank_of(sq: int) -> int:
    return sq // STRIDE - 2


def move_from(m: int) -> int:
    return m & 0xFF


def move_to(m: int) -> int:
    return (m >> 8) & 0xFF


def move_promo(m: int) -> int:
    return (m >> 16) & 0xF


def move_flags(m: int) -> int:
    return (m >> 20) & 0xF


def encode_move(frm: int, to: int, promo: int = 0, flags: int = 0) -> int:
    return frm | (to << 8) | (promo << 16) | (flags << 20)
