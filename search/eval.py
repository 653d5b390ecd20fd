"""Static evaluation: tables built in Python from the variant record, one njit ``evaluate``.

``build_eval(variant_name) -> int32[EV_SIZE]`` turns the variant's piece values
(:class:`variants.base.Piece` ``value``) and ``Variant.eval_weights`` overrides
into one flat table; :func:`evaluate` reads only that table and the board.
Scores are centipawns from the side to move's point of view, tapered between
middlegame (mg) and endgame (eg) by a material phase (PeSTO-style tapering).

Table layout (``int32``)::

    EV_PST_MG + code*NSQ + sq   material + piece-square value (mg) for piece code (white 1..8, black 17..24)
    EV_PST_EG + code*NSQ + sq   same, endgame
    EV_PHASE + type             phase weight of a piece type
    EV_MOB_MG/EG + type         mobility weight per reachable square (cp)
    EV_PASSED_MG/EG + d         passed-pawn bonus, d = ranks to go to the promotion zone (0 = in the zone)
    EV_KATT + type              king attack (mg): per piece within two squares (Chebyshev) of the enemy king
    EV_W + W_*                  scalar weights (see W_* below)
    EV_SEE + type               exchange value for SEE (engine.rules.see): middlegame material, king 0

Evaluation terms: material, piece-square tables generated for the board size
(centralisation, pawn advance, king shelter/centralisation, knight outposts),
mobility (sliders: empty + enemy squares along rays; leapers: non-own squares),
pawn structure (passed pawns by distance to the promotion zone, doubled,
isolated), king shelter (own pawns in front of the king, mg) and king attack
(pieces within two squares of the enemy king, mg), tempo, and for Knight Relay
the number of pieces relayed now (a knight's move from a friendly knight), the
squares a knight could step to and relay a friend from, and the knight outpost
bonus (an immune knight cannot be chased away).

Symmetric by construction: black tables are the rank mirror of white's and the
taper rounds towards zero, so eval(p) == eval(flip(p)) (tested).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from engine.rules.jit import njit

from engine.rules import layout as L
from engine.rules.layout import (NSQ, STRIDE, PAWN, KNIGHT, KING, NTYPES, EMPTY, OFF, S_SIDE, S_KSQ,
                           V_HEIGHT, V_FLAGS, V_PROMO_START, V_LEAP_N, V_SLIDE_N, V_LEAP, V_SLIDE,
                           V_NSQUARES, V_SQUARES, V_FILE, V_RANK, V_RELAYABLE, VF_RELAY, KNIGHT_OFFSETS)

EV_PST_MG = 0
EV_PST_EG = 32 * NSQ
EV_PHASE = 64 * NSQ
EV_MOB_MG = EV_PHASE + 16
EV_MOB_EG = EV_MOB_MG + 16
EV_PASSED_MG = EV_MOB_EG + 16
EV_PASSED_EG = EV_PASSED_MG + 16
EV_KATT = EV_PASSED_EG + 16
EV_W = EV_KATT + 16
EV_SEE = EV_W + 16        # EV_SEE + type: exchange value of the type for SEE (mg material; king 0)
W_PHASE_TOTAL = 0
W_DOUBLED_MG, W_DOUBLED_EG = 1, 2
W_ISOLATED_MG, W_ISOLATED_EG = 3, 4
W_SHIELD_MG = 5
W_RELAY_MG, W_RELAY_EG = 6, 7
W_TEMPO = 8
W_REACH_MG, W_REACH_EG = 9, 10
EV_SIZE = EV_SEE + 16

LETTER_TYPE = {c: i for i, c in enumerate(L.TYPE_LETTERS) if c != "."}

# Defaults; a variant overrides any key through Variant.eval_weights.
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
    "tempo": 10,                      # side to move is ahead by about a tempo
    # king safety (mg): a piece close to the enemy king threatens mating attacks; heavy pieces most
    "king_attack": {"N": 6, "B": 5, "R": 8, "Q": 14, "C": 14, "A": 12},
}


def _weights(variant) -> dict:
    w = {k: (dict(v) if isinstance(v, dict) else v) for k, v in DEFAULTS.items()}
    for k, v in variant.eval_weights.items():
        if isinstance(v, dict) and isinstance(w.get(k), dict):
            w[k].update(v)
        else:
            w[k] = v
    return w


@lru_cache(maxsize=None)
def build_eval(name: str) -> np.ndarray:
    """The evaluation table ``int32[EV_SIZE]`` for variant ``name`` (read-only)."""
    from variants import get
    v = get(name)
    w = _weights(v)
    W, H = v.width, v.height
    ev = np.zeros(EV_SIZE, dtype=np.int32)
    cf, cr = (W - 1) / 2.0, (H - 1) / 2.0
    total_phase = 0
    start_counts = {}
    for ch in v.start_fen.split()[0]:
        if ch.isalpha():
            start_counts[ch] = start_counts.get(ch, 0) + 1
    for p in v.pieces:
        ty = LETTER_TYPE[p.letter]
        mg0, eg0 = w["values"].get(p.letter, p.value)
        ph = w["phase"].get(p.letter, 0)
        ev[EV_PHASE + ty] = ph
        ev[EV_SEE + ty] = 0 if ty == KING else mg0
        total_phase += ph * (start_counts.get(p.letter, 0) + start_counts.get(p.letter.lower(), 0))
        ev[EV_KATT + ty] = w["king_attack"].get(p.letter, 0)
        mob = w["mobility"].get(p.letter, (0, 0))
        ev[EV_MOB_MG + ty], ev[EV_MOB_EG + ty] = mob
        for r in range(H):
            for f in range(W):
                # centre distance (Chebyshev-like, in half-steps rounded down)
                dc = int(max(abs(f - cf), abs(r - cr)))
                df = abs(f - cf)
                mg, eg = mg0, eg0
                if ty == PAWN:
                    adv = r - v.double_step_rank + 1      # ranks advanced from the start rank
                    mg += 3 * adv + (8 if df < 1.5 and r >= v.double_step_rank + 1 else 0)
                    eg += 6 * adv
                elif ty == KING:
                    mg += -12 * r - (6 if df < 2 else 0)  # stay home, away from the centre files
                    eg += -8 * dc                          # centralise in the endgame
                else:
                    c = w["centre"].get(p.letter, (0, 0))
                    mg -= c[0] * dc
                    eg -= c[1] * dc
                    if ty == KNIGHT:
                        beyond = r - H // 2 + 1
                        if beyond > 0:
                            mg += w["knight_outpost"][0] * beyond
                            eg += w["knight_outpost"][1] * beyond
                    if ty == L.ROOK and r == H - 2:
                        mg += 10   # rook on the 7th (9th in grand) presses pawns and king
                        eg += 10
                sq_w = L.square(f, r)
                sq_b = L.square(f, H - 1 - r)
                ev[EV_PST_MG + ty * NSQ + sq_w] = mg
                ev[EV_PST_EG + ty * NSQ + sq_w] = eg
                ev[EV_PST_MG + (ty | 16) * NSQ + sq_b] = mg
                ev[EV_PST_EG + (ty | 16) * NSQ + sq_b] = eg
    for i, x in enumerate(w["passed_mg"][:16]):
        ev[EV_PASSED_MG + i] = x
    for i, x in enumerate(w["passed_eg"][:16]):
        ev[EV_PASSED_EG + i] = x
    ev[EV_W + W_PHASE_TOTAL] = max(1, total_phase)
    ev[EV_W + W_DOUBLED_MG], ev[EV_W + W_DOUBLED_EG] = w["doubled"]
    ev[EV_W + W_ISOLATED_MG], ev[EV_W + W_ISOLATED_EG] = w["isolated"]
    ev[EV_W + W_SHIELD_MG] = w["king_shield"]
    ev[EV_W + W_RELAY_MG], ev[EV_W + W_RELAY_EG] = w["relay_bonus"]
    ev[EV_W + W_TEMPO] = w["tempo"]
    ev[EV_W + W_REACH_MG], ev[EV_W + W_REACH_EG] = w["relay_reach"]
    ev.setflags(write=False)
    return ev


@njit(cache=True, nogil=True)
def evaluate(board, st, vt, ev, ws):
    """Static score in centipawns for the side to move.

    ``ws`` is ``int32[64]`` scratch (pawn rank bitmasks per file and colour),
    so nothing is allocated.
    """
    mg = 0
    eg = 0
    phase = 0
    nsq = vt[V_NSQUARES]
    H = vt[V_HEIGHT]
    relay = (vt[V_FLAGS] & VF_RELAY) != 0
    for i in range(24):
        ws[i] = 0
    # pass 1: material + PST, mobility, pawn file masks, relay
    for i in range(nsq):
        s = vt[V_SQUARES + i]
        p = board[s]
        if p == EMPTY:
            continue
        ty = p & 15
        col = p >> 4
        sign = 1 - 2 * col
        mg += sign * ev[EV_PST_MG + p * NSQ + s]
        eg += sign * ev[EV_PST_EG + p * NSQ + s]
        phase += ev[EV_PHASE + ty]
        if ty == PAWN:
            f = vt[V_FILE + s]
            r = vt[V_RANK + s]
            ws[col * 12 + f] |= 1 << r
            continue
        ek = st[S_KSQ + 1 - col]
        if ek != 0:
            df = vt[V_FILE + s] - vt[V_FILE + ek]
            dr = vt[V_RANK + s] - vt[V_RANK + ek]
            if -2 <= df <= 2 and -2 <= dr <= 2:
                mg += sign * ev[EV_KATT + ty]
        mw = ev[EV_MOB_MG + ty]
        ew = ev[EV_MOB_EG + ty]
        if mw != 0 or ew != 0:
            cnt = 0
            own = col << 4
            for k in range(vt[V_LEAP_N + ty]):
                q = board[s + vt[V_LEAP + ty * 16 + k]]
                if q != OFF and (q == EMPTY or (q & 0x30) != own):
                    cnt += 1
            for k in range(vt[V_SLIDE_N + ty]):
                off = vt[V_SLIDE + ty * 8 + k]
                q = s + off
                while board[q] == EMPTY:
                    cnt += 1
                    q += off
                if board[q] != OFF and (board[q] & 0x30) != own:
                    cnt += 1
            mg += sign * mw * cnt
            eg += sign * ew * cnt
        if relay and ty == KNIGHT:
            # relay potential: empty squares this knight can step to from which it would relay a friend
            own = col << 4
            reach = 0
            for o in KNIGHT_OFFSETS:
                t = s + o
                if board[t] != EMPTY:
                    continue
                for o2 in KNIGHT_OFFSETS:
                    q = board[t + o2]
                    if q != EMPTY and q != OFF and (q & 0x30) == own and vt[V_RELAYABLE + (q & 15)] != 0:
                        reach += 1
                        break
            mg += sign * reach * ev[EV_W + W_REACH_MG]
            eg += sign * reach * ev[EV_W + W_REACH_EG]
        if relay and vt[V_RELAYABLE + ty] != 0:
            kn = KNIGHT | (col << 4)
            for o in KNIGHT_OFFSETS:
                if board[s + o] == kn:
                    mg += sign * ev[EV_W + W_RELAY_MG]
                    eg += sign * ev[EV_W + W_RELAY_EG]
                    break
    # pass 2: pawn structure (passed / doubled / isolated), from the file masks
    pstart = vt[V_PROMO_START]
    for col in range(2):
        sign = 1 - 2 * col
        for f in range(10):
            m = ws[col * 12 + f]
            if m == 0:
                continue
            left = ws[col * 12 + f - 1] if f > 0 else 0
            right = ws[col * 12 + f + 1] if f < 9 else 0
            if left == 0 and right == 0:
                c = 0
                x = m
                while x != 0:
                    c += 1
                    x &= x - 1
                mg += sign * c * ev[EV_W + W_ISOLATED_MG]
                eg += sign * c * ev[EV_W + W_ISOLATED_EG]
            if (m & (m - 1)) != 0:
                mg += sign * ev[EV_W + W_DOUBLED_MG]
                eg += sign * ev[EV_W + W_DOUBLED_EG]
            # blockers: enemy pawns on files f-1..f+1
            opp = ws[(1 - col) * 12 + f]
            if f > 0:
                opp |= ws[(1 - col) * 12 + f - 1]
            if f < 9:
                opp |= ws[(1 - col) * 12 + f + 1]
            x = m
            while x != 0:
                low = x & (-x)
                x ^= low
                r = 0
                while (1 << r) != low:
                    r += 1
                if col == 0:
                    ahead = opp >> (r + 1)
                    rel = r
                    own_ahead = m >> (r + 1)
                else:
                    ahead = opp & ((1 << r) - 1)
                    rel = H - 1 - r
                    own_ahead = m & ((1 << r) - 1)
                if ahead == 0 and own_ahead == 0:
                    d = pstart - rel
                    if d < 0:
                        d = 0
                    if d > 15:
                        d = 15
                    mg += sign * ev[EV_PASSED_MG + d]
                    eg += sign * ev[EV_PASSED_EG + d]
    # king shelter (mg): own pawns on the three squares one and two ranks in front
    sh = ev[EV_W + W_SHIELD_MG]
    for col in range(2):
        k = st[S_KSQ + col]
        if k == 0:
            continue
        fwd = STRIDE if col == 0 else -STRIDE
        pw = PAWN | (col << 4)
        c = 0
        for d in (-1, 0, 1):
            if board[k + fwd + d] == pw or board[k + 2 * fwd + d] == pw:
                c += 1
        mg += (1 - 2 * col) * sh * c
    total = ev[EV_W + W_PHASE_TOTAL]
    if phase > total:
        phase = total
    s = mg * phase + eg * (total - phase)
    if st[S_SIDE] == 1:
        s = -s
    if s >= 0:
        r = s // total
    else:
        r = -((-s) // total)
    return r + ev[EV_W + W_TEMPO]
