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

# move flags
F_DOUBLE = 1
F_EP = 2
F_CASTLE = 4

# state vector (int64) layout
S_SIDE = 0        # side to move: 0 white, 1 black
S_EP = 1          # en-passant target square, 0 if none (only set when an e.p. capture is legal)
S_CASTLE = 2      # castling rights bits: 1 K, 2 Q, 4 k, 8 q
S_HALFMOVE = 3    # 50-move-rule counter (plies)
S_FULLMOVE = 4    # FEN fullmove number
S_KSQ = 5         # king squares: S_KSQ + colour (0 if the side has no king)
S_HASH = 7        # Zobrist key (uint64 bits stored in int64)
S_PLY = 8         # number of moves on the undo stack == length of game history - 1
S_COUNT = 16      # piece counts by piece code: S_COUNT + code (code < 32)
S_SIZE = 48

# undo stack row (int64), one row per made move
U_MOVE, U_CAPT, U_EP, U_CASTLE, U_HALF, U_HASH = 0, 1, 2, 3, 4, 5
U_SIZE = 8
MAX_GAME_PLIES = 2048  # undo stack / history capacity (game + search)

# variant table (int32, 1-D) layout
V_WIDTH = 0
V_HEIGHT = 1
V_FLAGS = 2          # VF_* bits
V_DOUBLE_RANK = 3    # 0-based rank (from the mover's side) a pawn may double-step from
V_PROMO_START = 4    # 0-based relative rank where the promotion zone starts (last rank is mandatory)
V_NPROMO = 5
V_PROMO = 8          # V_PROMO + i: promotion piece types, i < V_NPROMO (up to 8)
V_PROMO_MAX = 16     # V_PROMO_MAX + type: max count of that type per side (promotion limit)
V_LEAP_N = 32        # V_LEAP_N + type: number of leaper offsets
V_SLIDE_N = 48       # V_SLIDE_N + type: number of slider directions
V_LEAP = 64          # V_LEAP + type*16 + i: leaper offsets (up to 16 per type)
V_SLIDE = 224        # V_SLIDE + type*8 + i: slider direction offsets (up to 8 per type)
V_NSQUARES = 300     # number of real squares
V_SQUARES = 301      # V_SQUARES + i: list of real squares, a1 b1 ... (rank-major)
V_CMASK = 420        # V_CMASK + sq: castling-rights mask ANDed when a move touches sq
V_FILE = 600         # V_FILE + sq: 0-based file of sq (-1 off-board)
V_RANK = 780         # V_RANK + sq: 0-based rank
V_SLIDEMASK = 950    # V_SLIDEMASK + type: bit d set if the type attacks along LINE_OFFSETS[d] (towards the target)
V_RELAYABLE = 960    # V_RELAYABLE + type: 1 if the type gains knight moves when relayed
# castling, per colour and side: index c = 2 * colour + side (side 0 king side, 1 queen side),
# the same bit as in S_CASTLE (1 << c)
V_CK_FROM = 980      # V_CK_FROM + colour: the square a castling king starts from
V_CR_FROM = 982      # V_CR_FROM + c: the castling rook's start square
V_CK_TO = 986        # V_CK_TO + c: the king's destination square
V_CR_TO = 990        # V_CR_TO + c: the rook's destination square
V_CEMPTY_N = 994     # V_CEMPTY_N + c: number of squares that must be empty
V_CSAFE_N = 998      # V_CSAFE_N + c: number of squares that must not be attacked
CASTLE_MAXSQ = 12
V_CEMPTY = 1002      # V_CEMPTY + c*CASTLE_MAXSQ + j: squares that must be empty
V_CSAFE = 1050       # V_CSAFE + c*CASTLE_MAXSQ + j: king start and crossed squares (the destination
                     # is left to the legality test)
# insufficient material: material sets (both sides, kings aside) with which no mate is possible
MAX_NOMATE = 4
V_NNOMATE = 1098     # number of sets
V_NOMATE = 1100      # V_NOMATE + e*NTYPES + type: most pieces of that type in set e (0 = none)
V_NOMATE_COLOUR = 1136  # V_NOMATE_COLOUR + e: bit t set if type t must stand on one square colour
V_SIZE = 1140

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
