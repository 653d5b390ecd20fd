"""Static evaluation in linear form: ``mg = w_mg·f``, ``eg = w_eg·f``, tapered by the game phase.

The evaluation is a dot product of two weight vectors (middlegame ``w_mg`` and
endgame ``w_eg``, ``int32[NF]``, names in :data:`FEATURES`) with one feature
vector ``f`` (``int32[NF]``, white minus black counts) of the position::

    white_cp = trunc((w_mg·f * phase + w_eg·f * (total - phase)) / total)
    evaluate() = white_cp if White is to move else -white_cp

``phase`` is the material phase (sum of :data:`DEFAULTS` ``phase`` weights of the
pieces on the board, at most ``total``, its start value; PeSTO-style tapering).
One njit function, :func:`_eval_core`, computes both: the search calls it through
:func:`evaluate` (``trace`` False: weights added as the features are found), the
tuner (``bench.tune``) through :func:`eval_features` (``trace`` True: the features
themselves), so the two can never disagree (tested: the tapered dot products
equal ``evaluate()`` exactly).

Where the weights come from: the hand-set values (:data:`DEFAULTS`, piece values
from the variant record, ``Variant.eval_weights`` overrides), overlaid by the
variant's weights file ``variants/weights/<variant>.json`` when it exists (written
by ``cardinal tune fit``; format in :func:`write_weights`).

Features (per side, white minus black):
  * material per piece type, and the piece-square terms as features: distance to
    the centre per type, pawn rank and central pawns, king rank, centre distance
    and centre files, knight ranks beyond the middle, rook on the 7th (9th in
    grand); and a free piece-square table per type (files folded, so left-right
    symmetric), which the tuner fits on top of those terms. These are folded into
    piece-square tables ``EV_PST_MG/EG`` so the search adds one table entry per
    piece; :func:`eval_features` expands them again from the basis table ``EV_PB``.
  * mobility per type (sliders: empty and enemy squares along rays; leapers:
    non-own squares), pieces within two squares of the enemy king per type, and
    squares of the enemy king zone (the king's square and its neighbours) each
    type attacks (counted for pieces within 3 files and ranks of that king);
    mobility below a hinge per type (``MOB_LOW`` minus the mobility, when positive:
    the first squares of mobility count more than the later ones);
    mobility squares an enemy pawn attacks (one count over all types: Stockfish's
    mobility area leaves them out); king danger, the number of pieces attacking the
    enemy king zone times the zone squares they attack (Stockfish squares its sum of
    attacker weights and zone attacks: the product is that square's cross term);
    quadratic king danger, the square of Stockfish 11's kingDanger sum (attacker weights,
    king-zone attacks, safe checks) per attacking side.
  * pawn structure: passed pawns by ranks to go to the promotion zone, doubled,
    isolated; connected pawns (phalanx: a pawn beside; supported: defended by a
    pawn) and connected pawns near the zone (Stockfish's ``Connected`` bonus grows
    with the rank); pawns in or near the zone whose side has nothing to promote to
    (grand: promotion only to a captured type).
  * threats (Stockfish's ``ThreatByPawn``, ``ThreatByMinor``/``ByRook``): enemy
    pieces attacked by a pawn, per type; enemy pieces attacked by a less valuable
    piece (by the fixed exchange values, V_SEE), per type; attacks on enemy pieces that no enemy
    pawn defends.
  * rooks (any piece sliding along files) on open and half-open files, bishop pair,
    king shelter pawns, files next to the king without an own pawn, pawns storming
    the enemy king (1-3 ranks in front of it, its file and the adjacent ones), tempo.
  * Knight Relay: pieces relayed now, their knight-leap squares (relay mobility) and
    those in the enemy king zone, and squares a knight could step to and relay a
    friend from.

Table layout (``int32``, :func:`build_eval`)::

    EV_PST_MG + code*NSQ + sq     piece-square value (material included), mg; code 1..8 white, 17..24 black
    EV_PST_EG + code*NSQ + sq     same, eg
    EV_PHASE + type               phase weight of a piece type
    EV_W + W_PHASE_TOTAL          the start phase (``total``)
    EV_WMG + i, EV_WEG + i        the weights of feature i (non-PST features are read from here)
    EV_PB + ((code*NSQ + sq)*PB_K + k)*2 + {0, 1}
                                  the PST basis: feature index (-1: none) and coefficient

Symmetric by construction: black's basis is the rank mirror of white's, features
are white minus black and the taper rounds towards zero, so eval(p) == eval(flip(p))
(tested).
"""
from __future__ import annotations

import json
import os
from functools import lru_cache

import numpy as np
from engine.rules.jit import njit, nowrap, trailing_zeros

from engine.rules import layout as L
from engine.rules.layout import (NSQ, STRIDE, PAWN, KNIGHT, BISHOP, KING, EMPTY, OFF, S_SIDE, S_KSQ, S_COUNT, S_OCC,
                                 V_HEIGHT, V_FLAGS, V_PROMO_START, V_NPROMO, V_PROMO, V_PROMO_MAX, V_LEAP_N,
                                 V_SLIDE_N, V_LEAP, V_SLIDE, V_SQUARES, V_FILE, V_RANK, V_RELAYABLE, V_SLIDEMASK, V_SEE,
                                 VF_RELAY, VF_KNIGHT_PASSIVE, KNIGHT_OFFSETS, LINE_OFFSETS, SQ_MASK, MOVE_TO_SHIFT,
                                 MOVE_PROMO_SHIFT, MOVE_FLAGS_SHIFT, F_EP, F_CASTLE, V_CR_FROM, V_CR_TO)
from engine.rules.movegen import castle_index
from engine.rules.tables import compile_variant

# ---- features: index groups (per-type groups are indexed by piece type 1..8) ----
F_MAT = 0              # + type: pieces of that type                                       (PST basis)
F_CENTRE = 16          # + type: Chebyshev distance to the centre (half-steps rounded down) (PST basis)
F_PAWN_RANK = 32       # + relative rank: pawns on that rank                               (PST basis)
F_PAWN_CENTRAL = 48    # pawns on the two centre files, past their double-step rank        (PST basis)
F_KING_RANK = 49       # + min(relative rank, 3): the king's rank                           (PST basis, 4)
F_KING_DC = 53         # king's distance to the centre                                      (PST basis)
F_KING_CFILE = 54      # king on the four centre files                                      (PST basis)
F_KNIGHT_BEYOND = 55   # ranks a knight stands beyond the board's middle                    (PST basis)
F_ROOK_7TH = 56        # rook on the last rank but one                                      (PST basis)
F_PST_END = 64         # features below this index live in the piece-square tables
F_MOB = 64             # + type: mobility (reachable squares)
F_KATT = 80            # + type: pieces within two squares (Chebyshev) of the enemy king
F_KZONE = 96           # + type: enemy king-zone squares attacked (zone: the king's square and neighbours)
F_PASSED = 112         # + d: passed pawns, d = ranks to go to the promotion zone (0: in it), d <= 15
F_UNPROMO = 128        # + d (0..3): pawns d ranks from (or in) the zone whose side has nothing to promote to
F_DOUBLED = 132        # files with two or more own pawns
F_ISOLATED = 133       # pawns without a friendly pawn on an adjacent file
F_SHIELD = 134         # own pawns on the three squares one or two ranks in front of the king
F_KING_OPEN = 135      # files next to / of the king without an own pawn
F_BISHOP_PAIR = 136    # two bishops or more
F_RELAY = 137          # knightrelay: pieces relayed now (a knight's move from a friendly knight)
F_REACH = 138          # knightrelay: empty squares a knight can step to and relay a friend from
F_RELAY_KZONE = 139    # knightrelay: enemy king-zone squares attacked by relayed knight leaps
F_TEMPO = 140          # +1 White to move, -1 Black to move
F_PAWN_STORM = 141     # own pawns 1-3 ranks in front of the enemy king, on its file and the adjacent ones
F_RELAY_MOB = 142      # knightrelay: knight-leap squares (not own-occupied) of relayed pieces
F_OPEN = 144           # + type: file-sliding pieces on a file without pawns
F_SEMI = 160           # + type: file-sliding pieces on a file without own pawns but with enemy ones
F_PHALANX = 176        # pawns with an own pawn beside them (same rank, adjacent file)
F_SUPPORTED = 177      # pawns defended by an own pawn
F_CONN_NEAR = 178      # connected (phalanx or supported) pawns near promotion: max(0, 4 - ranks to the zone)
F_WEAK_ATT = 179       # attacks by a piece (not a pawn or the king) on an enemy piece no enemy pawn defends
F_PTHREAT = 180        # + type: enemy pieces of that type attacked by an own pawn (Stockfish's ThreatByPawn)
F_LTHREAT = 192        # + type: enemy pieces of that type attacked by a less valuable piece (not a pawn or
                       # the king; values: the variant table's fixed V_SEE; Stockfish's ThreatByMinor / ThreatByRook)
F_MOB_PAWN = 208       # mobility squares (as counted in F_MOB) that an enemy pawn attacks (Stockfish's
                       # mobility area leaves them out)
F_KDANGER = 209        # king danger: pieces attacking the enemy king zone times the zone squares they attack
                       # (Stockfish's kingDanger grows with both and is squared: one attacker is harmless)
F_CHECK = 210          # + type: moves of a piece of that type to a square from which it checks the enemy king,
                       # not attacked by an enemy pawn (Stockfish's safe checks, with pawn attacks as the safety)
F_MOBLOW = 226         # + type: MOB_LOW minus the mobility, when positive (a hinge: the first few squares of
                       # mobility are worth more than the later ones; Stockfish's mobility tables are concave)
F_KD2 = 242            # king danger, quadratic (Stockfish 11's kingDanger^2 / 4096): per attacking side
                       # kd = sum over its pieces of an attacker weight (when the piece attacks the enemy
                       # king zone) + KD_ZONE per zone square attacked + a safe-check weight (when it has a
                       # safe check), in Stockfish's units; the feature is (kd^2 >> KD_SHIFT) for
                       # kd > KD_MIN, white's attack minus black's
F_PST = 243            # + (type - 1)*PST_TYPE + folded_file*PST_RANKS + rank: a piece of that type on that
                       # white-relative square, files folded (0: an edge file): a free piece-square table
                       # on top of the terms above, for the tuner (0 unless fitted)
PST_RANKS = 16
PST_TYPE = 8 * PST_RANKS   # folded files 0..7 (boards up to 16 files wide)
NF = F_PST + 8 * PST_TYPE
KD_ZONE = 69           # Stockfish 11: 69 per king-ring attack
KD_MIN = 100           # Stockfish 11 applies the quadratic only above 100
KD_SHIFT = 17          # kd^2 >> 17: a feature of a few units to a few hundred (the weight is fitted)
MOB_LOW = 4            # the hinge: a piece reaching fewer than 4 squares is poorly placed or trapped

# eval scratch (``ws``): int32[WS_SIZE]; from WS_CHK, one cell per mailbox square: the check-square
# marks (bits 0-2 for the white king, 3-5 for the black: knight leap, file/rank ray, diagonal ray);
# from WS_LIST, the cells marked (at most 2 kings x (8 leaps + 8 rays of up to 9 squares)), so that
# clearing them visits a list instead of walking the rays again
WS_CHK = 64
WS_LIST = WS_CHK + NSQ
WS_SIZE = WS_LIST + 2 * (8 + 8 * 9)

_TYPE_NAMES = {t: L.TYPE_LETTERS[t] for t in range(1, 9)}


def pst_index(ty: int, ff: int, r: int) -> int:
    """The free piece-square feature of type ``ty`` (1..8) on folded file ``ff`` (0: an edge file)
    and white-relative rank ``r`` (0: White's first rank)."""
    return F_PST + (ty - 1) * PST_TYPE + ff * PST_RANKS + r


def _feature_names():
    names = ["-"] * NF
    for t, c in _TYPE_NAMES.items():
        names[F_MAT + t] = f"material_{c}"
        names[F_CENTRE + t] = f"centre_dist_{c}"
        names[F_MOB + t] = f"mobility_{c}"
        names[F_KATT + t] = f"king_near_{c}"
        names[F_KZONE + t] = f"king_zone_{c}"
        names[F_OPEN + t] = f"open_file_{c}"
        names[F_SEMI + t] = f"half_open_file_{c}"
        if t not in (PAWN, KING):
            names[F_MOBLOW + t] = f"mobility_low_{c}"
            names[F_PTHREAT + t] = f"pawn_threat_{c}"
            names[F_CHECK + t] = f"check_{c}"
            names[F_LTHREAT + t] = f"threat_by_lesser_{c}"
    for r in range(16):
        names[F_PAWN_RANK + r] = f"pawn_rank_{r}"
        names[F_PASSED + r] = f"passed_{r}"
    for r in range(4):
        names[F_KING_RANK + r] = f"king_rank_{r}"
        names[F_UNPROMO + r] = f"unpromotable_{r}"
    for i, n in ((F_PAWN_CENTRAL, "pawn_central"), (F_KING_DC, "king_centre_dist"), (F_KING_CFILE, "king_centre_file"),
                 (F_KNIGHT_BEYOND, "knight_beyond"), (F_ROOK_7TH, "rook_7th"), (F_DOUBLED, "doubled"),
                 (F_ISOLATED, "isolated"), (F_SHIELD, "king_shield"), (F_KING_OPEN, "king_open_file"),
                 (F_BISHOP_PAIR, "bishop_pair"), (F_RELAY, "relayed"), (F_REACH, "relay_reach"),
                 (F_RELAY_KZONE, "relay_king_zone"), (F_TEMPO, "tempo"), (F_PAWN_STORM, "pawn_storm"),
                 (F_RELAY_MOB, "relay_mobility"), (F_PHALANX, "pawn_phalanx"), (F_SUPPORTED, "pawn_supported"),
                 (F_CONN_NEAR, "pawn_connected_near"), (F_WEAK_ATT, "attack_on_weak"),
                 (F_MOB_PAWN, "mobility_pawn_attacked"), (F_KDANGER, "king_danger")):
        names[i] = n
    names[F_KD2] = "king_danger_quadratic"
    for t, c in _TYPE_NAMES.items():
        for ff in range(8):
            for r in range(PST_RANKS):
                names[pst_index(t, ff, r)] = f"pst_{c}_{'abcdefgh'[ff]}{r + 1}"
    for i in range(NF):
        if names[i] == "-":
            names[i] = f"unused_{i}"
    return tuple(names)


FEATURES = _feature_names()
FEATURE_INDEX = {n: i for i, n in enumerate(FEATURES)}

# Evaluation terms for a breakdown (the UCI ``eval`` command), after Stockfish's ``eval``
# trace: each feature belongs to the first term one of whose name prefixes it starts with
# (so ``pawn_threat_`` is a threat and ``pawn_storm`` king safety, not a pawn term).
TERMS = (("Material", ("material_", "bishop_pair")),
         ("Placement", ("centre_dist_", "open_file_", "half_open_file_", "knight_beyond", "rook_7th",
                        "king_centre_", "king_rank_", "pst_")),
         ("Mobility", ("mobility_",)),
         ("King safety", ("king_zone_", "king_near_", "king_danger", "check_", "king_shield",
                          "king_open_file", "pawn_storm")),
         ("Threats", ("threat_by_lesser_", "pawn_threat_", "attack_on_weak")),
         ("Pawns", ("pawn_", "doubled", "isolated", "unpromotable_")),
         ("Passed pawns", ("passed_",)),
         ("Knight relay", ("relay",)),
         ("Tempo", ("tempo",)),
         ("Other", ("",)))
TERM_OF = tuple(next(i for i, (_, pre) in enumerate(TERMS) if n.startswith(pre)) for n in FEATURES)

PB_K = 4                # PST basis entries per (piece code, square)
EV_PST_MG = 0
EV_PST_EG = 32 * NSQ
EV_PHASE = 64 * NSQ
EV_W = EV_PHASE + 16
W_PHASE_TOTAL = 0
W_CHK_ON = 1             # 1 if a check-square feature (F_CHECK + type) or F_KD2 is weighted: the squares are marked
EV_CHKM = EV_W + 16      # EV_CHKM + type: the check-square marks that apply to the type (1 knight leap,
                         # 2 file/rank slide, 4 diagonal slide, as _mark_checks sets them; 0 pawn, king)
EV_KDW = EV_CHKM + 16    # EV_KDW + type: king-danger weight of a king-zone attacker of that type (Stockfish 11's
                         # KingAttackWeights), EV_KDC + type: of a safe check by it (its *SafeCheck)
EV_KDC = EV_KDW + 16
EV_WMG = EV_KDC + 16
EV_WEG = EV_WMG + NF
EV_PB = EV_WEG + NF
EV_SIZE = EV_PB + 32 * NSQ * PB_K * 2

LETTER_TYPE = {c: i for i, c in enumerate(L.TYPE_LETTERS) if c != "."}
WEIGHTS_VERSION = 1
WEIGHTS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "variants", "weights")

# Hand-set defaults; a variant overrides any key through Variant.eval_weights.
DEFAULTS = {
    "values": {},                     # letter -> (mg, eg); default: Piece.value
    # phase weight per piece type: minor 1, rook 2, compound 3-4 (queen-like pieces end the middlegame slowest)
    "phase": {"N": 1, "B": 1, "R": 2, "Q": 4, "C": 4, "A": 3},
    # cp per reachable square; long-range pieces get less per square since they have many
    "mobility": {"N": (4, 4), "B": (5, 5), "R": (3, 5), "Q": (2, 4), "C": (2, 3), "A": (3, 3), "K": (0, 0)},
    # passed pawn by ranks still to go to the promotion zone (0 = already in it): grows near promotion
    "passed_mg": (60, 40, 25, 15, 10, 6, 4, 2, 2, 2),
    "passed_eg": (130, 90, 60, 38, 22, 14, 10, 8, 8, 8),
    "doubled": (-10, -20),            # a second pawn on a file cannot protect or pass the first
    "isolated": (-10, -14),           # no friendly pawn on the adjacent files to defend it
    "king_shield": 10,                # mg, per own pawn on the 3 squares 1-2 ranks in front of the king
    "relay_bonus": (0, 0),            # knightrelay: per piece relayed by a friendly knight
    "relay_reach": (0, 0),            # knightrelay: per empty square a knight can step to and relay a friend from
    "knight_outpost": (0, 0),         # knightrelay: per rank a knight stands beyond the board's middle
    "centre": {"N": (4, 4), "B": (2, 2), "R": (0, 0), "Q": (1, 2), "C": (2, 2), "A": (3, 3)},  # cp per step towards the centre
    # grand: pawn d = 0..3 ranks from (or in) the promotion zone whose side has lost nothing it may promote to
    "unpromotable": ((-40, -80), (-20, -45), (-10, -20), (0, 0)),
    "tempo": 10,                      # side to move is ahead by about a tempo (mg and eg)
    # king safety (mg): a piece close to the enemy king threatens mating attacks; heavy pieces most
    "king_attack": {"N": 6, "B": 5, "R": 8, "Q": 14, "C": 14, "A": 12},
    # quadratic king danger, Stockfish 11's units: (zone-attacker weight, safe-check weight) per type;
    # the marshal (R+N) and cardinal (B+N) take their slider's attacker weight and the larger check
    "king_danger_weights": {"N": (81, 790), "B": (52, 635), "R": (44, 1080), "Q": (10, 780), "C": (44, 1080),
                            "A": (52, 790)},
}


def _settings(variant) -> dict:
    w = {k: (dict(v) if isinstance(v, dict) else v) for k, v in DEFAULTS.items()}
    for k, v in variant.eval_weights.items():
        if isinstance(v, dict) and isinstance(w.get(k), dict):
            w[k].update(v)
        else:
            w[k] = v
    return w


def _geometry(v):
    """Per (type, white-relative square (f, r)): the PST basis as a list of (feature, coefficient)."""
    W, H = v.width, v.height
    cf, cr = (W - 1) / 2.0, (H - 1) / 2.0
    ds = v.double_step_rank
    out = {}
    for p in v.pieces:
        ty = LETTER_TYPE[p.letter]
        for r in range(H):
            for f in range(W):
                dc = int(max(abs(f - cf), abs(r - cr)))   # centre distance, half-steps rounded down
                df = abs(f - cf)
                b = []
                if ty == PAWN:
                    b = [(F_MAT + ty, 1), (F_PAWN_RANK + r, 1)]
                    if df < 1.5 and r >= ds + 1:
                        b.append((F_PAWN_CENTRAL, 1))
                elif ty == KING:
                    b = [(F_KING_RANK + min(r, 3), 1), (F_KING_DC, dc)]
                    if df < 2:
                        b.append((F_KING_CFILE, 1))
                else:
                    b = [(F_MAT + ty, 1), (F_CENTRE + ty, dc)]
                    if ty == KNIGHT and r - H // 2 + 1 > 0:
                        b.append((F_KNIGHT_BEYOND, r - H // 2 + 1))
                    if ty == L.ROOK and r == H - 2:
                        b.append((F_ROOK_7TH, 1))
                b.append((pst_index(ty, min(f, W - 1 - f), r), 1))
                out[ty, f, r] = [(i, c) for i, c in b if c != 0]
    return out


def _file_sliders(v):
    """Types that slide along files (rook, queen, marshal...)."""
    return {LETTER_TYPE[p.letter] for p in v.pieces if (0, 1) in p.slides}


def hand_weights(name: str):
    """The hand-set weights ``(w_mg, w_eg)``, ``int32[NF]`` each, of variant ``name``.

    These reproduce the evaluation as it was before tuning: material from the
    variant record (or ``eval_weights["values"]``), the generated piece-square
    terms, mobility, pawn structure, king safety and relay terms of
    :data:`DEFAULTS`; features added for the tuner start at 0.
    """
    from variants import get
    v = get(name)
    s = _settings(v)
    mg = np.zeros(NF, np.int32)
    eg = np.zeros(NF, np.int32)
    ds = v.double_step_rank
    for p in v.pieces:
        ty = LETTER_TYPE[p.letter]
        mg[F_MAT + ty], eg[F_MAT + ty] = s["values"].get(p.letter, p.value)
        c = s["centre"].get(p.letter, (0, 0))
        mg[F_CENTRE + ty], eg[F_CENTRE + ty] = -c[0], -c[1]
        mg[F_MOB + ty], eg[F_MOB + ty] = s["mobility"].get(p.letter, (0, 0))
        mg[F_KATT + ty] = s["king_attack"].get(p.letter, 0)
    mg[F_MAT + KING] = eg[F_MAT + KING] = 0
    for r in range(16):
        adv = r - ds + 1                          # ranks advanced from the start rank
        mg[F_PAWN_RANK + r], eg[F_PAWN_RANK + r] = 3 * adv, 6 * adv
    mg[F_PAWN_CENTRAL] = 8
    for r in range(4):
        mg[F_KING_RANK + r] = -12 * r             # stay home
    mg[F_KING_CFILE] = -6                         # away from the centre files
    eg[F_KING_DC] = -8                            # centralise in the endgame
    mg[F_KNIGHT_BEYOND], eg[F_KNIGHT_BEYOND] = s["knight_outpost"]
    mg[F_ROOK_7TH] = eg[F_ROOK_7TH] = 10          # rook on the 7th presses pawns and king
    for i, x in enumerate(s["passed_mg"][:16]):
        mg[F_PASSED + i] = x
    for i, x in enumerate(s["passed_eg"][:16]):
        eg[F_PASSED + i] = x
    mg[F_DOUBLED], eg[F_DOUBLED] = s["doubled"]
    mg[F_ISOLATED], eg[F_ISOLATED] = s["isolated"]
    mg[F_SHIELD] = s["king_shield"]
    mg[F_RELAY], eg[F_RELAY] = s["relay_bonus"]
    mg[F_REACH], eg[F_REACH] = s["relay_reach"]
    mg[F_TEMPO] = eg[F_TEMPO] = s["tempo"]
    if v.promotion_limits:
        # a pawn in or next to the zone with nothing to promote to is stuck (grand): its passed bonus,
        # which counts on promotion, is largely void
        for d, (a, b) in enumerate(s["unpromotable"]):
            mg[F_UNPROMO + d], eg[F_UNPROMO + d] = a, b
    return mg, eg


def feature_used(name: str) -> np.ndarray:
    """``bool[NF]``: the features that can be nonzero in variant ``name`` (the tuner fits only these)."""
    from variants import get
    v = get(name)
    u = np.zeros(NF, bool)
    for (ty, f, r), b in _geometry(v).items():
        for i, _ in b:
            u[i] = True
    u[F_MAT + KING] = False
    types = [LETTER_TYPE[p.letter] for p in v.pieces]
    for ty in types:
        if ty not in (PAWN, KING):
            u[F_MOB + ty] = u[F_MOBLOW + ty] = True
        if ty not in (PAWN, KING):
            u[F_KATT + ty] = True
            u[F_KZONE + ty] = not (v.knights_passive and ty == KNIGHT)
    for ty in _file_sliders(v):
        u[F_OPEN + ty] = u[F_SEMI + ty] = True
    for d in range(min(16, v.height)):
        u[F_PASSED + d] = True
    if v.promotion_limits:
        u[F_UNPROMO:F_UNPROMO + 4] = True
    u[[F_DOUBLED, F_ISOLATED, F_SHIELD, F_KING_OPEN, F_TEMPO, F_PAWN_STORM]] = True
    u[F_BISHOP_PAIR] = LETTER_TYPE["B"] in types
    u[[F_PHALANX, F_SUPPORTED, F_CONN_NEAR, F_WEAK_ATT, F_MOB_PAWN, F_KDANGER, F_KD2]] = True
    for ty in types:
        if ty not in (PAWN, KING):
            u[F_PTHREAT + ty] = u[F_LTHREAT + ty] = u[F_CHECK + ty] = not (v.knights_passive and ty == KNIGHT)
    if v.relay:
        u[[F_RELAY, F_REACH, F_RELAY_KZONE, F_RELAY_MOB]] = True
    return u


def feature_bounds(name: str):
    """Sign constraints for the tuner: a list of ``(lo, hi)`` (``None`` = free) in feature order.

    A pawn that cannot promote is never worth more for that: ``unpromotable_*`` <= 0.
    Material is positive, and so are the knight-relay terms (a relay only adds moves).
    """
    b = [(None, None)] * NF
    for d in range(4):
        b[F_UNPROMO + d] = (None, 0)
    for t in range(1, 9):
        b[F_MAT + t] = (0, None)
    # a relay only adds moves (knight leaps) to a piece: never a penalty
    for i in (F_RELAY, F_RELAY_MOB, F_RELAY_KZONE, F_REACH):
        b[i] = (0, None)
    return b


def weights_path(name: str) -> str:
    """``variants/weights/<name>.json``: the tuned weights of variant ``name``."""
    return os.path.join(WEIGHTS_DIR, f"{name}.json")


def load_weights(name: str, path: str | None = None):
    """``(w_mg, w_eg)`` ``int32[NF]``: the hand weights overlaid by the weights file if it exists.

    Raises ``ValueError`` for a file of another format version or variant, or naming
    an unknown feature (a weights file must match the code that reads it).
    """
    mg, eg = hand_weights(name)
    path = path or weights_path(name)
    if not os.path.exists(path):
        return mg, eg
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if data.get("version") != WEIGHTS_VERSION or data.get("variant") != name:
        raise ValueError(f"{path}: weights version {data.get('version')!r} for {data.get('variant')!r}, "
                         f"expected version {WEIGHTS_VERSION} for {name!r}")
    for key, arr in (("mg", mg), ("eg", eg)):
        for fname, val in data.get(key, {}).items():
            if fname not in FEATURE_INDEX:
                raise ValueError(f"{path}: unknown feature {fname!r}")
            arr[FEATURE_INDEX[fname]] = int(val)
    return mg, eg


def write_weights(name: str, w_mg, w_eg, meta: dict, path: str | None = None) -> str:
    """Write ``variants/weights/<name>.json`` (or ``path``): ``{"version", "variant", "meta",
    "mg": {feature: int}, "eg": {feature: int}}``, the features this variant uses only,
    by way of ``PATH.tmp`` renamed over it. Returns the path; raises ``OSError`` naming it."""
    path = path or weights_path(name)
    used = feature_used(name)
    data = {"version": WEIGHTS_VERSION, "variant": name, "meta": meta,
            "mg": {FEATURES[i]: int(w_mg[i]) for i in range(NF) if used[i]},
            "eg": {FEATURES[i]: int(w_eg[i]) for i in range(NF) if used[i]}}
    tmp = path + ".tmp"
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1)
            fh.write("\n")
        os.replace(tmp, path)
    except OSError as e:        # named by the weights file, not by the temporary one, which is removed
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise OSError(e.errno, e.strerror or str(e), path) from None
    return path


def phase_total(name: str) -> int:
    """The start position's phase (``total`` of the taper) of variant ``name``."""
    return int(build_eval(name)[EV_W + W_PHASE_TOTAL])


@lru_cache(maxsize=None)
def build_eval(name: str) -> np.ndarray:
    """The evaluation table ``int32[EV_SIZE]`` for variant ``name`` (read-only), from :func:`load_weights`."""
    return make_eval(name, *load_weights(name))


def make_eval(name: str, w_mg, w_eg) -> np.ndarray:
    """The evaluation table ``int32[EV_SIZE]`` of variant ``name`` with the given weights (read-only)."""
    from variants import get
    v = get(name)
    s = _settings(v)
    w_mg = np.asarray(w_mg, np.int64)
    w_eg = np.asarray(w_eg, np.int64)
    H = v.height
    ev = np.zeros(EV_SIZE, dtype=np.int32)
    ev[EV_PB:] = -1
    ev[EV_PB + 1::2] = 0
    total_phase = 0
    start_counts = {}
    for ch in v.start_fen.split()[0]:
        if ch.isalpha():
            start_counts[ch] = start_counts.get(ch, 0) + 1
    for p in v.pieces:
        ty = LETTER_TYPE[p.letter]
        ph = s["phase"].get(p.letter, 0)
        ev[EV_PHASE + ty] = ph
        ev[EV_KDW + ty], ev[EV_KDC + ty] = s["king_danger_weights"].get(p.letter, (0, 0))
        total_phase += ph * (start_counts.get(p.letter, 0) + start_counts.get(p.letter.lower(), 0))
    for (ty, f, r), basis in _geometry(v).items():
        assert len(basis) <= PB_K
        mg = sum(int(w_mg[i]) * c for i, c in basis)
        eg = sum(int(w_eg[i]) * c for i, c in basis)
        for code, sq in ((ty, L.square(f, r)), (ty | 16, L.square(f, H - 1 - r))):
            ev[EV_PST_MG + code * NSQ + sq] = mg
            ev[EV_PST_EG + code * NSQ + sq] = eg
            for k, (i, c) in enumerate(basis):
                ev[EV_PB + ((code * NSQ + sq) * PB_K + k) * 2] = i
                ev[EV_PB + ((code * NSQ + sq) * PB_K + k) * 2 + 1] = c
    ev[EV_W + W_PHASE_TOTAL] = max(1, total_phase)
    ev[EV_W + W_CHK_ON] = int(any(w_mg[F_CHECK + i] != 0 or w_eg[F_CHECK + i] != 0 for i in range(16))
                              or w_mg[F_KD2] != 0 or w_eg[F_KD2] != 0)
    vt = compile_variant(name)
    for ty in range(1, L.NTYPES):
        if ty in (PAWN, KING):
            continue
        sm = int(vt[V_SLIDEMASK + ty])
        cm = (2 if sm & 15 else 0) | (4 if sm & 240 else 0)
        if any(int(vt[V_LEAP + ty * 16 + k]) == 2 * STRIDE + 1 for k in range(int(vt[V_LEAP_N + ty]))):
            cm |= 1
        ev[EV_CHKM + ty] = cm
    ev[EV_WMG:EV_WMG + NF] = w_mg
    ev[EV_WEG:EV_WEG + NF] = w_eg
    ev.setflags(write=False)
    return ev


# king zone test: x = t - king + STRIDE + 1 is in this bit set iff t is the king's square or a neighbour
_ZONE_MASK = sum(1 << (dr * STRIDE + df) for dr in range(3) for df in range(3))


@njit(cache=True, nogil=True)
def _in_zone(t, zbase):
    """1 if square ``t`` is in the king zone whose corner is ``zbase`` (king - STRIDE - 1), else 0."""
    x = t - zbase
    if (x >> 5) == 0:        # 0 <= x < 32 (the mask spans 2 * STRIDE + 3 = 27 bits)
        return (_ZONE_MASK >> x) & 1
    return 0


@njit(cache=True, nogil=True)
def _mark_checks(board, ws, k, shift, n):
    """Mark in ``ws[WS_CHK + sq]`` the squares from which a piece would check the king on ``k``: bit
    ``shift`` a knight's leap away, ``shift + 1`` on a file or rank ray from ``k``, ``shift + 2`` on a
    diagonal ray (empty squares up to and including the first piece). Appends the cells to the list
    at ``ws[WS_LIST + n]`` and returns its new length; the evaluation zeroes the listed cells at its end."""
    for o in KNIGHT_OFFSETS:
        ws[nowrap(WS_CHK + k + o)] |= 1 << shift
        ws[nowrap(WS_LIST + n)] = k + o
        n += 1
    for d in range(8):
        off = LINE_OFFSETS[d]
        b = (1 << (shift + 1)) if d < 4 else (1 << (shift + 2))
        t = k + off
        while board[nowrap(t)] != OFF:
            ws[nowrap(WS_CHK + t)] |= b
            ws[nowrap(WS_LIST + n)] = t
            n += 1
            if board[nowrap(t)] != EMPTY:
                break
            t += off
    return n


@njit(cache=True, nogil=True)
def _slider_zone(board, vt, s, ty, zbase):
    """Squares of the king zone at ``zbase`` (see ``_ZONE_MASK``) that the slides of the type-``ty``
    piece on ``s`` attack (empty squares and the first blocker of each ray)."""
    z = 0
    for k in range(vt[nowrap(V_SLIDE_N + ty)]):
        off = vt[nowrap(V_SLIDE + ty * 8 + k)]
        t = s + off
        while board[nowrap(t)] != OFF:
            z += _in_zone(t, zbase)
            if board[nowrap(t)] != EMPTY:
                break
            t += off
    return z


@njit(cache=True, nogil=True)
def psq_sums(board, st, vt, ev):
    """The material + piece-square sums ``(mg, eg)`` (White's point of view) of the position,
    from scratch: the values :func:`psq_delta` keeps up to date move by move."""
    mg = 0
    eg = 0
    for wi in range(4):
        x = st[S_OCC + wi]
        while x != 0:
            s = vt[V_SQUARES + 64 * (wi & 1) + trailing_zeros(x)]
            x &= x - 1
            p = board[nowrap(s)]
            sign = 1 - 2 * (p >> 4)
            mg += sign * ev[nowrap(EV_PST_MG + p * NSQ + s)]
            eg += sign * ev[nowrap(EV_PST_EG + p * NSQ + s)]
    return mg, eg


@njit(cache=True, nogil=True)
def psq_delta(board, st, vt, ev, m):
    """The change ``(dmg, deg)`` of :func:`psq_sums` that the pseudo-legal move ``m`` of the
    side to move makes (before it is made): the piece leaves its square and arrives (promoted)
    on its target, a captured piece (en passant: the pawn behind the target) leaves, a castling
    rook moves."""
    frm = m & SQ_MASK
    to = (m >> MOVE_TO_SHIFT) & SQ_MASK
    promo = (m >> MOVE_PROMO_SHIFT) & 0xF
    flags = (m >> MOVE_FLAGS_SHIFT) & 0xF
    us = st[S_SIDE]
    sign = 1 - 2 * us
    p = board[nowrap(frm)]
    np_ = p if promo == 0 else promo | (us << 4)
    dmg = sign * (ev[nowrap(EV_PST_MG + np_ * NSQ + to)] - ev[nowrap(EV_PST_MG + p * NSQ + frm)])
    deg = sign * (ev[nowrap(EV_PST_EG + np_ * NSQ + to)] - ev[nowrap(EV_PST_EG + p * NSQ + frm)])
    capsq = to
    if (flags & F_EP) != 0:
        capsq = to - (STRIDE if us == 0 else -STRIDE)
    capt = board[nowrap(capsq)]
    if capt != EMPTY:
        # the captured piece is the opponent's: it counted with -sign
        dmg += sign * ev[nowrap(EV_PST_MG + capt * NSQ + capsq)]
        deg += sign * ev[nowrap(EV_PST_EG + capt * NSQ + capsq)]
    if (flags & F_CASTLE) != 0:
        c = castle_index(vt, us, to)
        rf = vt[nowrap(V_CR_FROM + c)]
        rt = vt[nowrap(V_CR_TO + c)]
        r = board[nowrap(rf)]
        dmg += sign * (ev[nowrap(EV_PST_MG + r * NSQ + rt)] - ev[nowrap(EV_PST_MG + r * NSQ + rf)])
        deg += sign * (ev[nowrap(EV_PST_EG + r * NSQ + rt)] - ev[nowrap(EV_PST_EG + r * NSQ + rf)])
    return dmg, deg


@njit(cache=True, nogil=True)
def taper(mg, eg, phase, total):
    """The tapered score ``(mg * phase + eg * (total - phase)) / total``, rounded towards zero
    (so White's and Black's views differ only in sign): the evaluation's last step, from White's
    side. ``phase`` in ``0..total`` (``total``: the variant's full phase, > 0)."""
    s = mg * phase + eg * (total - phase)
    if s >= 0:
        return s // total
    return -((-s) // total)


@njit(cache=True, nogil=True, inline='always')
def _piece_attacks(board, vt, ev, ws, f, trace, s, ty, col, sign, cm, look, near, zbase, passive):
    """Scan the squares the non-pawn, non-king piece of type ``ty`` and colour ``col`` on ``s``
    attacks (its leaps, and its slides up to and including the first blocker) for the mobility
    and threat terms of :func:`_piece_terms`. ``look``: pawn-attacked and check squares are
    looked up (``cm``: the check-square bits of ``ws[WS_CHK + t]`` that apply to this piece,
    see :func:`_mark_checks`); ``near``: king-zone squares (corner ``zbase``, :func:`_in_zone`)
    are counted; ``passive``: knightrelay's knights capture nothing. Adds the threats by a less valuable piece (``F_LTHREAT``, Stockfish 11's
    ``ThreatByMinor``/``ThreatByRook``, on the variant table's fixed exchange values) to the
    returned sums and, with ``trace``, to ``f`` (``int32[NF]``). Returns ``(mg, eg, cnt,
    unsafe, chk, weak, zone)``: the sums, mobility squares (empty or enemy-occupied), those of
    them an enemy pawn attacks, those not pawn-attacked from which the piece would check, the
    attacks on enemy pieces no enemy pawn defends, and the king-zone squares attacked."""
    mg = 0
    eg = 0
    cnt = 0
    unsafe = 0      # of cnt: squares an enemy pawn attacks
    chk = 0         # of cnt: squares not attacked by an enemy pawn from which this piece would check
    zone = 0
    weak = 0        # attacks on enemy pieces that no enemy pawn defends
    own = col << 4
    myval = vt[V_SEE + ty]     # threats: by the fixed exchange values (variant table)
    epw = PAWN | ((1 - col) << 4)             # an enemy pawn defends t from t + edef +- 1
    edef = STRIDE if col == 0 else -STRIDE
    attacker = not (passive and ty == KNIGHT)   # (knightrelay: a knight captures nothing)
    for k in range(vt[V_LEAP_N + ty]):
        t = s + vt[V_LEAP + ty * 16 + k]
        q = board[nowrap(t)]
        if q != OFF:
            if q == EMPTY or (q & 0x30) != own:
                cnt += 1
                if look:
                    if board[nowrap(t + edef - 1)] == epw or board[nowrap(t + edef + 1)] == epw:
                        unsafe += 1
                    elif (ws[nowrap(WS_CHK + t)] & cm) != 0:
                        chk += 1
                qt = q & 15
                if q != EMPTY and attacker and qt != KING and qt != PAWN and not (passive and qt == KNIGHT):
                    if vt[V_SEE + qt] > myval:
                        fi = F_LTHREAT + qt
                        mg += sign * ev[EV_WMG + fi]
                        eg += sign * ev[EV_WEG + fi]
                        if trace:
                            f[fi] += sign
                    if board[nowrap(t + edef - 1)] != epw and board[nowrap(t + edef + 1)] != epw:
                        weak += 1
            if near:
                zone += _in_zone(t, zbase)
    for k in range(vt[V_SLIDE_N + ty]):
        off = vt[V_SLIDE + ty * 8 + k]
        t = s + off
        while board[nowrap(t)] == EMPTY:
            cnt += 1
            if look:
                if board[nowrap(t + edef - 1)] == epw or board[nowrap(t + edef + 1)] == epw:
                    unsafe += 1
                elif (ws[nowrap(WS_CHK + t)] & cm) != 0:
                    chk += 1
            t += off
        q = board[nowrap(t)]
        if q != OFF and (q & 0x30) != own:
            cnt += 1
            if look:
                if board[nowrap(t + edef - 1)] == epw or board[nowrap(t + edef + 1)] == epw:
                    unsafe += 1
                elif (ws[nowrap(WS_CHK + t)] & cm) != 0:
                    chk += 1
            qt = q & 15
            if qt != KING and qt != PAWN and not (passive and qt == KNIGHT):
                if vt[V_SEE + qt] > myval:
                    fi = F_LTHREAT + qt
                    mg += sign * ev[EV_WMG + fi]
                    eg += sign * ev[EV_WEG + fi]
                    if trace:
                        f[fi] += sign
                if board[nowrap(t + edef - 1)] != epw and board[nowrap(t + edef + 1)] != epw:
                    weak += 1
    if near and vt[V_SLIDE_N + ty] != 0:
        zone += _slider_zone(board, vt, s, ty, zbase)
    return mg, eg, cnt, unsafe, chk, weak, zone


@njit(cache=True, nogil=True, inline='always')
def _relay_terms(board, vt, ev, f, trace, s, ty, own, zbase, sign):
    """Knightrelay's terms of the piece of type ``ty`` on ``s`` (colour bits ``own``; ``zbase``:
    the enemy king zone's corner, :func:`_in_zone`): a knight's relay potential (``F_REACH``:
    empty squares it can step to from which it would relay a friend), and for a relayable piece
    a friendly knight a leap away relays it now (``F_RELAY``), with the enemy king-zone squares
    (``F_RELAY_KZONE``) and the mobility (``F_RELAY_MOB``) of its relayed leaps. Returns ``(mg,
    eg)``; with ``trace``, adds the features to ``f`` (``int32[NF]``). Cardinal's own terms
    (Fairy-Stockfish has none for relays)."""
    mg = 0
    eg = 0
    if ty == KNIGHT:
        # relay potential: empty squares this knight can step to from which it would relay a friend
        reach = 0
        for o in KNIGHT_OFFSETS:
            t = s + o
            if board[nowrap(t)] != EMPTY:
                continue
            for o2 in KNIGHT_OFFSETS:
                q = board[nowrap(t + o2)]
                if q != EMPTY and q != OFF and (q & 0x30) == own and vt[V_RELAYABLE + (q & 15)] != 0:
                    reach += 1
                    break
        mg += sign * reach * ev[EV_WMG + F_REACH]
        eg += sign * reach * ev[EV_WEG + F_REACH]
        if trace:
            f[F_REACH] += sign * reach
    if vt[V_RELAYABLE + ty] != 0:
        kn = KNIGHT | own
        for o in KNIGHT_OFFSETS:
            if board[nowrap(s + o)] == kn:
                mg += sign * ev[EV_WMG + F_RELAY]
                eg += sign * ev[EV_WEG + F_RELAY]
                rz = 0
                rm = 0
                for o2 in KNIGHT_OFFSETS:
                    q = board[nowrap(s + o2)]
                    if q == OFF:
                        continue
                    if q == EMPTY or (q & 0x30) != own:
                        rm += 1
                    rz += _in_zone(s + o2, zbase)
                mg += sign * (rz * ev[EV_WMG + F_RELAY_KZONE] + rm * ev[EV_WMG + F_RELAY_MOB])
                eg += sign * (rz * ev[EV_WEG + F_RELAY_KZONE] + rm * ev[EV_WEG + F_RELAY_MOB])
                if trace:
                    f[F_RELAY] += sign
                    f[F_RELAY_KZONE] += sign * rz
                    f[F_RELAY_MOB] += sign * rm
                break
    return mg, eg


@njit(cache=True, nogil=True, inline='always')
def _piece_terms(board, vt, ev, ws, f, trace, s, p, ek, chk_on, mob_area, relay, passive):
    """The mobility, threat and king-attack terms of the piece ``p`` (not a pawn or a king) on
    ``s``, the enemy king on ``ek`` (0: none): attacked by an enemy pawn (``F_PTHREAT``,
    Stockfish 11's ``ThreatByPawn``), mobility (``F_MOB``, with the hinge ``F_MOBLOW`` below
    ``MOB_LOW`` squares and the pawn-attacked squares ``F_MOB_PAWN``, Stockfish's mobility
    area), king-zone attacks (``F_KZONE``), attacks on undefended pieces (``F_WEAK_ATT``),
    safe checks (``F_CHECK``, Stockfish 11's ``SafeCheck``; ``chk_on``: the check squares are
    marked in ``ws``, ``int32[WS_SIZE]``) and knightrelay's terms (:func:`_relay_terms`).
    ``mob_area``: the pawn-attacked squares are looked up; ``relay``/``passive``: the variant
    relays pieces / its knights capture nothing (knightrelay's ``VF_RELAY``,
    ``VF_KNIGHT_PASSIVE``). Returns ``(mg, eg, zone, kdq)``: the sums (White's point of view),
    the king-zone squares attacked and the piece's share of its side's quadratic king danger
    (Stockfish 11's ``kingDanger``: ``KDC`` per type with a safe check, ``KDW`` per type plus
    ``KD_ZONE`` per zone square when it attacks the zone); with ``trace``, adds the features
    to ``f`` (``int32[NF]``)."""
    mg = 0
    eg = 0
    kdq = 0
    ty = p & 15
    col = p >> 4
    sign = 1 - 2 * col
    # attacked by an enemy pawn (from one rank ahead of it, on the adjacent files)
    if not (passive and ty == KNIGHT):
        ep = PAWN | ((1 - col) << 4)
        pf = s + STRIDE if col == 0 else s - STRIDE
        if board[nowrap(pf - 1)] == ep or board[nowrap(pf + 1)] == ep:
            fi = F_PTHREAT + ty
            mg -= sign * ev[EV_WMG + fi]
            eg -= sign * ev[EV_WEG + fi]
            if trace:
                f[fi] -= sign
    zbase = ek - STRIDE - 1 if ek != 0 else -1000   # king-zone origin (-1000: no king)
    # king-zone attacks are counted for pieces within 3 files and ranks of the enemy king
    # only (a leap of at most 2 squares reaches the zone only from there; a slider further
    # away is rare enough to ignore, and scanning every ray costs ~20% of the evaluation)
    # (knightrelay: knights attack nothing)
    near = (ek != 0 and abs(vt[nowrap(V_FILE + ek)] - vt[nowrap(V_FILE + s)]) <= 3
            and abs(vt[nowrap(V_RANK + ek)] - vt[nowrap(V_RANK + s)]) <= 3
            and not (passive and ty == KNIGHT))
    cm = 0          # the check-square bits that apply to this type and the enemy king
    if chk_on and not (passive and ty == KNIGHT):
        cm = ev[EV_CHKM + ty] << (3 * (1 - col))   # (per type, from the table: no leap scan)
    look = mob_area or cm != 0   # pawn-attacked squares and check squares are looked up
    amg, aeg, cnt, unsafe, chk, weak, zone = _piece_attacks(board, vt, ev, ws, f, trace, s, ty, col, sign, cm, look,
                                                            near, zbase, passive)
    mg += amg
    eg += aeg
    fi = F_MOB + ty
    mg += sign * cnt * ev[EV_WMG + fi]
    eg += sign * cnt * ev[EV_WEG + fi]
    low = MOB_LOW - cnt
    if low > 0:
        fi = F_MOBLOW + ty
        mg += sign * low * ev[EV_WMG + fi]
        eg += sign * low * ev[EV_WEG + fi]
        if trace:
            f[fi] += sign * low
    fi = F_KZONE + ty
    mg += sign * zone * ev[EV_WMG + fi]
    eg += sign * zone * ev[EV_WEG + fi]
    mg += sign * (weak * ev[EV_WMG + F_WEAK_ATT] + unsafe * ev[EV_WMG + F_MOB_PAWN])
    eg += sign * (weak * ev[EV_WEG + F_WEAK_ATT] + unsafe * ev[EV_WEG + F_MOB_PAWN])
    if chk != 0:
        fi = F_CHECK + ty
        mg += sign * chk * ev[EV_WMG + fi]
        eg += sign * chk * ev[EV_WEG + fi]
        if trace:
            f[fi] += sign * chk
        kdq += ev[EV_KDC + ty]
    if zone != 0:
        kdq += ev[EV_KDW + ty] + KD_ZONE * zone
    if trace:
        f[F_MOB_PAWN] += sign * unsafe
        f[F_MOB + ty] += sign * cnt
        f[F_KZONE + ty] += sign * zone
        f[F_WEAK_ATT] += sign * weak
    if relay:
        rmg, reg = _relay_terms(board, vt, ev, f, trace, s, ty, col << 4, zbase, sign)
        mg += rmg
        eg += reg
    return mg, eg, zone, kdq


@njit(cache=True, nogil=True, inline='always')
def _king_danger(ev, f, trace, katt0, kzone0, katt1, kzone1, kdq0, kdq1):
    """The king-danger terms from the attack counts of pass 1 (per attacking side, 0 White, 1
    Black): ``F_KDANGER``, the pieces attacking the enemy king zone times the zone squares they
    attack; ``F_KD2``, Stockfish 11's quadratic ``kingDanger`` (``kdq^2 >> KD_SHIFT`` above
    ``KD_MIN``). Returns ``(mg, eg)`` (White's point of view); with ``trace`` sets the two
    features in ``f`` (``int32[NF]``)."""
    kd = katt0 * kzone0 - katt1 * kzone1
    mg = kd * ev[EV_WMG + F_KDANGER]
    eg = kd * ev[EV_WEG + F_KDANGER]
    if trace:
        f[F_KDANGER] = kd
    q = ((kdq0 * kdq0) >> KD_SHIFT if kdq0 > KD_MIN else 0) - ((kdq1 * kdq1) >> KD_SHIFT if kdq1 > KD_MIN else 0)
    mg += q * ev[EV_WMG + F_KD2]
    eg += q * ev[EV_WEG + F_KD2]
    if trace:
        f[F_KD2] = q
    return mg, eg


@njit(cache=True, nogil=True, inline='always')
def _pawn_structure(st, vt, ev, ws, f, trace):
    """Pass 2, the pawn structure from pass 1's file masks (``ws[col * 12 + file]``, a bit per
    rank holding a pawn of that colour; ``ws``: ``int32[WS_SIZE]``): isolated (``F_ISOLATED``)
    and doubled (``F_DOUBLED``) pawns, connected ones (``F_PHALANX``, ``F_SUPPORTED``, and
    ``F_CONN_NEAR`` near promotion: Stockfish's ``Connected``), passed pawns by the ranks to go
    to the promotion zone (``F_PASSED``) and pawns whose side has nothing to promote to
    (``F_UNPROMO``, grand chess). Returns ``(mg, eg)`` (White's point of view); with
    ``trace``, adds the features to ``f`` (``int32[NF]``)."""
    mg = 0
    eg = 0
    H = vt[V_HEIGHT]
    W = vt[L.V_WIDTH]
    pstart = vt[V_PROMO_START]
    for col in range(2):
        sign = 1 - 2 * col
        # can a pawn of this side promote now? (grand: only to a type it has fewer of than allowed)
        avail = False
        for k in range(vt[V_NPROMO]):
            pt = vt[V_PROMO + k]
            if st[nowrap(S_COUNT + (pt | (col << 4)))] < vt[nowrap(V_PROMO_MAX + pt)]:
                avail = True
        for fl in range(W):
            m = ws[nowrap(col * 12 + fl)]
            if m == 0:
                continue
            left = ws[nowrap(col * 12 + fl - 1)] if fl > 0 else 0
            right = ws[nowrap(col * 12 + fl + 1)] if fl < W - 1 else 0
            if left == 0 and right == 0:
                c = 0
                x = m
                while x != 0:
                    c += 1
                    x &= x - 1
                mg += sign * c * ev[EV_WMG + F_ISOLATED]
                eg += sign * c * ev[EV_WEG + F_ISOLATED]
                if trace:
                    f[F_ISOLATED] += sign * c
            if (m & (m - 1)) != 0:
                mg += sign * ev[EV_WMG + F_DOUBLED]
                eg += sign * ev[EV_WEG + F_DOUBLED]
                if trace:
                    f[F_DOUBLED] += sign
            # blockers: enemy pawns on files fl-1..fl+1
            opp = ws[nowrap((1 - col) * 12 + fl)]
            if fl > 0:
                opp |= ws[nowrap((1 - col) * 12 + fl - 1)]
            if fl < W - 1:
                opp |= ws[nowrap((1 - col) * 12 + fl + 1)]
            # phalanx: a pawn beside on the same rank; supported: an own pawn one rank behind on an
            # adjacent file (Stockfish's connected pawns)
            side = left | right
            phal = m & side
            supp = m & ((side << 1) if col == 0 else (side >> 1))
            conn = phal | supp
            np_ = 0
            x = phal
            while x != 0:
                np_ += 1
                x &= x - 1
            ns = 0
            x = supp
            while x != 0:
                ns += 1
                x &= x - 1
            mg += sign * (np_ * ev[EV_WMG + F_PHALANX] + ns * ev[EV_WMG + F_SUPPORTED])
            eg += sign * (np_ * ev[EV_WEG + F_PHALANX] + ns * ev[EV_WEG + F_SUPPORTED])
            if trace:
                f[F_PHALANX] += sign * np_
                f[F_SUPPORTED] += sign * ns
            x = m
            while x != 0:
                r = trailing_zeros(x)      # the pawn's rank
                x &= x - 1
                if col == 0:
                    ahead = opp >> (r + 1)
                    rel = r
                    own_ahead = m >> (r + 1)
                else:
                    ahead = opp & ((1 << r) - 1)
                    rel = H - 1 - r
                    own_ahead = m & ((1 << r) - 1)
                d = pstart - rel
                if d < 0:
                    d = 0
                if d > 15:
                    d = 15
                if d < 4 and (conn >> r) & 1:
                    mg += sign * (4 - d) * ev[EV_WMG + F_CONN_NEAR]
                    eg += sign * (4 - d) * ev[EV_WEG + F_CONN_NEAR]
                    if trace:
                        f[F_CONN_NEAR] += sign * (4 - d)
                if ahead == 0 and own_ahead == 0:
                    mg += sign * ev[EV_WMG + F_PASSED + d]
                    eg += sign * ev[EV_WEG + F_PASSED + d]
                    if trace:
                        f[F_PASSED + d] += sign
                if not avail and d <= 3:
                    mg += sign * ev[EV_WMG + F_UNPROMO + d]
                    eg += sign * ev[EV_WEG + F_UNPROMO + d]
                    if trace:
                        f[F_UNPROMO + d] += sign
    return mg, eg


@njit(cache=True, nogil=True, inline='always')
def _open_files(board, vt, ev, ws, f, trace, nfs):
    """File sliders (rooks and the like; their squares listed by pass 1 in ``ws[26:26 + nfs]``)
    on open files (``F_OPEN``: no pawn) or half-open ones (``F_SEMI``: no own pawn), by the
    file masks in ``ws`` (``int32[WS_SIZE]``; Stockfish 11's ``RookOnFile``). Returns ``(mg,
    eg)`` (White's point of view); with ``trace``, adds the features to ``f`` (``int32[NF]``)."""
    mg = 0
    eg = 0
    for k in range(nfs):
        s = ws[26 + k]
        p = board[nowrap(s)]
        col = p >> 4
        fl = vt[nowrap(V_FILE + s)]
        if ws[nowrap(col * 12 + fl)] == 0:
            fi = F_OPEN + (p & 15) if ws[nowrap((1 - col) * 12 + fl)] == 0 else F_SEMI + (p & 15)
            sign = 1 - 2 * col
            mg += sign * ev[EV_WMG + fi]
            eg += sign * ev[EV_WEG + fi]
            if trace:
                f[fi] += sign
    return mg, eg


@njit(cache=True, nogil=True, inline='always')
def _king_shelter(board, st, vt, ev, ws, f, trace):
    """King safety from the pawns around each king (Stockfish 11's shelter and storm, simplified):
    own pawns on the three squares one or two ranks in front (``F_SHIELD``), pawnless files at
    the king (``F_KING_OPEN``) and enemy pawns 1-3 ranks in front of it on its file and the
    adjacent ones (``F_PAWN_STORM``), by the file masks in ``ws`` (``int32[WS_SIZE]``).
    Returns ``(mg, eg)`` (White's point of view); with ``trace``, adds the features to ``f``
    (``int32[NF]``)."""
    mg = 0
    eg = 0
    W = vt[L.V_WIDTH]
    for col in range(2):
        k = st[S_KSQ + col]
        if k == 0:
            continue
        sign = 1 - 2 * col
        fwd = STRIDE if col == 0 else -STRIDE
        pw = PAWN | (col << 4)
        c = 0
        for d in (-1, 0, 1):
            if board[nowrap(k + fwd + d)] == pw or board[nowrap(k + 2 * fwd + d)] == pw:
                c += 1
        kf = vt[nowrap(V_FILE + k)]
        kr = vt[nowrap(V_RANK + k)]
        # enemy pawns 1..3 ranks in front of this king (towards the enemy) on its file and the adjacent ones
        storm = ((0b111 << (kr + 1)) if col == 0 else ((0b111 << kr) >> 3)) & 0xFFFF
        o = 0
        ps = 0
        for fl in range(kf - 1, kf + 2):
            if 0 <= fl < W:
                if ws[nowrap(col * 12 + fl)] == 0:
                    o += 1
                x = ws[nowrap((1 - col) * 12 + fl)] & storm
                while x != 0:
                    ps += 1
                    x &= x - 1
        mg -= sign * ps * ev[EV_WMG + F_PAWN_STORM]
        eg -= sign * ps * ev[EV_WEG + F_PAWN_STORM]
        if trace:
            f[F_PAWN_STORM] -= sign * ps
        mg += sign * (c * ev[EV_WMG + F_SHIELD] + o * ev[EV_WMG + F_KING_OPEN])
        eg += sign * (c * ev[EV_WEG + F_SHIELD] + o * ev[EV_WEG + F_KING_OPEN])
        if trace:
            f[F_SHIELD] += sign * c
            f[F_KING_OPEN] += sign * o
    return mg, eg


@njit(cache=True, nogil=True)
def _eval_core(board, st, vt, ev, ws, f, trace, mg0, eg0):
    """The evaluation, and with ``trace`` its features: the one implementation.

    Without ``trace`` the material + piece-square sums are given (``mg0``, ``eg0``:
    :func:`psq_sums`, kept incrementally by the search); with it they are added up here,
    piece by piece, with their features.

    ``ws``: ``int32[WS_SIZE]`` scratch (pawn rank bitmasks per file and colour in 0..23,
    the phase in 24, file sliders' squares from 26, check-square marks in ``WS_CHK .. WS_LIST - 1``,
    left all zero, the list of marked cells from ``WS_LIST``); ``f``: ``int32[NF]``, written
    only when ``trace`` (zeroed first, then white-minus-black feature counts).
    Returns the score in centipawns for the side to move; ``ws[24]`` holds the
    clamped phase afterwards.

    The term groups are helpers (numba inlines them: one compiled evaluation): pass 1 over the
    pieces (material, phase, pawn file masks, king proximity, then :func:`_piece_terms`),
    :func:`_king_danger`, :func:`_pawn_structure`, :func:`_open_files`, :func:`_king_shelter`,
    bishop pair and tempo, then :func:`taper`.
    """
    mg = 0 if trace else mg0
    eg = 0 if trace else eg0
    phase = 0
    relay = (vt[V_FLAGS] & VF_RELAY) != 0
    passive = (vt[V_FLAGS] & VF_KNIGHT_PASSIVE) != 0
    if trace:
        for i in range(NF):
            f[i] = 0
    for i in range(26):
        ws[i] = 0
    nfs = 0
    # mobility squares attacked by enemy pawns: looked up only when weighted (or traced)
    mob_area = trace or ev[EV_WMG + F_MOB_PAWN] != 0 or ev[EV_WEG + F_MOB_PAWN] != 0
    # king danger per attacking side: pieces attacking the enemy king zone, zone squares attacked
    katt0 = 0
    katt1 = 0
    kdq0 = 0      # quadratic king danger (F_KD2), by the attacking side
    kdq1 = 0
    kzone0 = 0
    kzone1 = 0
    # check squares around both kings, marked only when weighted (or traced)
    chk_on = trace or ev[EV_W + W_CHK_ON] != 0
    nmark = 0
    if chk_on:
        for c in range(2):
            if st[S_KSQ + c] != 0:
                nmark = _mark_checks(board, ws, st[S_KSQ + c], 3 * c, nmark)
    # pass 1: material + PST, king proximity, mobility and king-zone attacks, pawn file masks, relay;
    # over the pieces: the set bits of the four occupancy words (S_OCC), white's then black's
    for wi in range(4):
        x = st[S_OCC + wi]
        while x != 0:
            s = vt[V_SQUARES + 64 * (wi & 1) + trailing_zeros(x)]
            x &= x - 1
            p = board[nowrap(s)]
            ty = p & 15
            col = p >> 4
            sign = 1 - 2 * col
            if trace:
                mg += sign * ev[nowrap(EV_PST_MG + p * NSQ + s)]
                eg += sign * ev[nowrap(EV_PST_EG + p * NSQ + s)]
                base = EV_PB + (p * NSQ + s) * (PB_K * 2)
                for k in range(PB_K):
                    fi = ev[nowrap(base + 2 * k)]
                    if fi >= 0:
                        f[fi] += sign * ev[nowrap(base + 2 * k + 1)]
            phase += ev[EV_PHASE + ty]
            if ty == PAWN:
                ws[nowrap(col * 12 + vt[nowrap(V_FILE + s)])] |= 1 << vt[nowrap(V_RANK + s)]
                continue
            if (vt[L.V_SLIDEMASK + ty] & 12) != 0 and nfs < 38:   # slides along files: open-file terms below
                ws[nowrap(26 + nfs)] = s
                nfs += 1
            ek = st[nowrap(S_KSQ + 1 - col)]
            if ek != 0 and ty != KING:
                df = vt[nowrap(V_FILE + s)] - vt[nowrap(V_FILE + ek)]
                dr = vt[nowrap(V_RANK + s)] - vt[nowrap(V_RANK + ek)]
                if -2 <= df <= 2 and -2 <= dr <= 2:
                    fi = F_KATT + ty
                    mg += sign * ev[EV_WMG + fi]
                    eg += sign * ev[EV_WEG + fi]
                    if trace:
                        f[fi] += sign
            if ty == KING:
                continue
            pmg, peg, zone, kdq = _piece_terms(board, vt, ev, ws, f, trace, s, p, ek, chk_on, mob_area, relay,
                                             passive)
            mg += pmg
            eg += peg
            if col == 0:
                kdq0 += kdq
                if zone != 0:
                    katt0 += 1
                    kzone0 += zone
            else:
                kdq1 += kdq
                if zone != 0:
                    katt1 += 1
                    kzone1 += zone
    for i in range(nmark):      # clear the marks: every cell from WS_CHK to WS_LIST is zero again
        ws[nowrap(WS_CHK + ws[nowrap(WS_LIST + i)])] = 0
    # king danger: attackers times attacked zone squares, and the quadratic one, per side
    dmg, deg = _king_danger(ev, f, trace, katt0, kzone0, katt1, kzone1, kdq0, kdq1)
    mg += dmg
    eg += deg
    # pass 2: pawn structure (passed / doubled / isolated / connected / unpromotable), from the file masks
    dmg, deg = _pawn_structure(st, vt, ev, ws, f, trace)
    mg += dmg
    eg += deg
    # rooks (file sliders) on open / half-open files
    dmg, deg = _open_files(board, vt, ev, ws, f, trace, nfs)
    mg += dmg
    eg += deg
    # king shelter: own pawns in front of the king, pawnless files at it, enemy pawn storm
    dmg, deg = _king_shelter(board, st, vt, ev, ws, f, trace)
    mg += dmg
    eg += deg
    # bishop pair
    bp = (1 if st[S_COUNT + BISHOP] >= 2 else 0) - (1 if st[S_COUNT + (BISHOP | 16)] >= 2 else 0)
    mg += bp * ev[EV_WMG + F_BISHOP_PAIR]
    eg += bp * ev[EV_WEG + F_BISHOP_PAIR]
    # tempo: the side to move is ahead by about a tempo
    ts = 1 - 2 * st[S_SIDE]
    mg += ts * ev[EV_WMG + F_TEMPO]
    eg += ts * ev[EV_WEG + F_TEMPO]
    if trace:
        f[F_BISHOP_PAIR] = bp
        f[F_TEMPO] = ts
    total = ev[EV_W + W_PHASE_TOTAL]
    if phase > total:
        phase = total
    ws[24] = phase
    s = taper(mg, eg, phase, total)
    return -s if st[S_SIDE] == 1 else s


@njit(cache=True, nogil=True)
def evaluate(board, st, vt, ev, ws):
    """Static score in centipawns for the side to move (``int64``).

    ``board``/``st``/``vt``: a position's mailbox, state vector and variant table;
    ``ev``: :func:`build_eval`'s table; ``ws``: ``int32[WS_SIZE]`` scratch, its cells
    ``WS_CHK .. WS_LIST - 1`` zero (as every evaluation leaves them),
    so nothing is allocated.
    """
    mg, eg = psq_sums(board, st, vt, ev)
    return _eval_core(board, st, vt, ev, ws, ws, False, mg, eg)


@njit(cache=True, nogil=True)
def evaluate_inc(board, st, vt, ev, ws, mg0, eg0):
    """:func:`evaluate` with the material + piece-square sums given (``mg0``, ``eg0``, as
    :func:`psq_sums` would return them): the search keeps them up to date with
    :func:`psq_delta` instead of adding them up at every node. Same result."""
    return _eval_core(board, st, vt, ev, ws, ws, False, mg0, eg0)


@njit(cache=True, nogil=True)
def eval_features(board, st, vt, ev, ws, f):
    """Fill ``f`` (``int32[NF]``) with the position's features (white minus black) and return
    the clamped phase; ``evaluate`` equals the tapered dot products with ``ev``'s weights."""
    _eval_core(board, st, vt, ev, ws, f, True, 0, 0)
    return ws[24]


def eval_terms(name: str, board, st, vt):
    """The evaluation of a position split by :data:`TERMS`, White's point of view:
    ``(rows, phase, total)``, ``rows`` a list of ``(term, mg, eg)`` (centipawns, ints; the
    terms that are zero in both phases left out), ``phase`` the clamped phase in
    ``0..total``. The rows' mg and eg add up to the position's mg and eg sums, and
    ``taper(sum mg, sum eg, phase, total)`` is :func:`evaluate` from White's side."""
    ev = build_eval(name)
    f = np.zeros(NF, np.int32)
    phase = int(eval_features(board, st, vt, ev, np.zeros(WS_SIZE, np.int32), f))
    mg = np.zeros(len(TERMS), np.int64)
    eg = np.zeros(len(TERMS), np.int64)
    for i in np.flatnonzero(f):
        mg[TERM_OF[i]] += int(ev[EV_WMG + i]) * int(f[i])
        eg[TERM_OF[i]] += int(ev[EV_WEG + i]) * int(f[i])
    rows = [(TERMS[t][0], int(mg[t]), int(eg[t])) for t in range(len(TERMS)) if mg[t] or eg[t]]
    return rows, phase, int(ev[EV_W + W_PHASE_TOTAL])
