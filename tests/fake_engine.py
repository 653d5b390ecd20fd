"""A scripted fake engine for the match-runner tests: ``python fake_engine.py MODE``.

UCI modes (answer the handshake normally unless said otherwise):
  illegal   on ``go`` answer ``bestmove e1e8`` (never legal at the start)
  none      on ``go`` answer ``bestmove (none)``
  crash     on ``go`` exit with status 3
  slow      on ``go`` sleep 1.5 s, then ``bestmove e2e4``
  silent    never write anything (no ``uciok``); with FAKE_PIDFILE set, first start a
            grandchild ``sleep 300`` and write its pid there (process-group test)
  noready   ``uciok`` but never ``readyok``
  novariant ``uciok`` without a UCI_Variant option
  legal[:CP[:MS]] plays legal chess (python-chess): a mate in one if there is one, else a
            capture, else a move chosen from the position's CRC (the same game again for the
            same position); reports ``info depth 1 score cp CP`` (default: the material
            balance from its own side, in centipawns) and ``info string go ARGS``; with MS,
            it thinks MS milliseconds per move; ``legal:CP:MS:hangwhite`` never answers a ``go``
            as White (the second game of a pair when it is the second engine)
Every UCI mode declares a string option ``Style`` and refuses every value but ``calm``
with an ``info string error:`` line.
XBoard modes (``protover 2`` -> features with usermove=1 ping=1):
  xb-claim  answer every ``usermove`` with ``Illegal move: M``; plays e7e5/g8f6 as Black
  xb-resign on ``go`` or ``usermove`` answer ``resign``
"""
import os
import subprocess
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "illegal"


def out(s):
    sys.stdout.write(s + "\n")
    sys.stdout.flush()


if mode == "silent" and os.environ.get("FAKE_PIDFILE"):
    child = subprocess.Popen(["sleep", "300"])
    with open(os.environ["FAKE_PIDFILE"], "w") as fh:
        fh.write(str(child.pid))

black_moves = iter(["e7e5", "g8f6", "b8c6", "f8c5"])
board = None
fixed_score = None
if mode.startswith("legal"):
    import zlib

    import chess
    board = chess.Board()
    parts = mode.split(":")
    if len(parts) > 1 and parts[1]:
        fixed_score = int(parts[1])
    delay = int(parts[2]) / 1000 if len(parts) > 2 and parts[2] else 0.0
    hang_white = parts[3:4] == ["hangwhite"]
    VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500, chess.QUEEN: 900}


def legal_move():
    moves = sorted(board.legal_moves, key=lambda m: m.uci())
    for m in moves:
        board.push(m)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return m
    caps = [m for m in moves if board.is_capture(m)]
    pool = caps or moves
    return pool[zlib.crc32(board.fen().encode()) % len(pool)]


def material():
    sc = 0
    for sq, pc in board.piece_map().items():
        sc += VALUES.get(pc.piece_type, 0) * (1 if pc.color == board.turn else -1)
    return sc
for line in sys.stdin:
    tok = line.split()
    if not tok or mode == "silent":
        continue
    cmd = tok[0]
    if cmd == "quit":
        break
    if cmd == "uci":
        out("id name Fake " + mode)
        if mode != "novariant":
            out("option name UCI_Variant type combo default chess var chess var standard")
        out("option name Style type string default calm")
        out("uciok")
    elif cmd == "setoption" and tok[2:3] == ["Style"] and tok[-1] != "calm":
        out("info string error: setoption Style: no such style " + tok[-1])
    elif cmd == "isready":
        if mode != "noready":
            out("readyok")
    elif cmd == "protover":
        out('feature done=0')
        out('feature myname="Fake ' + mode + '" ping=1 usermove=1 setboard=1 variants="normal"')
        out('feature done=1')
    elif cmd == "ping":
        out("pong " + tok[1])
    elif board is not None and cmd == "position":
        if tok[1] == "startpos":
            board = chess.Board()
            rest = tok[2:]
        else:
            i = tok.index("moves") if "moves" in tok else len(tok)
            board = chess.Board(" ".join(tok[2:i]))
            rest = tok[i:]
        for u in rest[1:]:
            board.push_uci(u)
    elif board is not None and cmd == "go":
        out("info string go " + " ".join(tok[1:]))
        if hang_white and board.turn == chess.WHITE:
            continue
        if delay:
            time.sleep(delay)
        m = legal_move()
        board.push(m)
        sc = fixed_score if fixed_score is not None else -material()
        board.pop()
        out(f"info depth 1 score cp {sc} nodes 1 pv {m.uci()}")
        out("bestmove " + m.uci())
    elif cmd == "go" and mode in ("illegal", "none", "crash", "slow"):
        if mode == "illegal":
            out("bestmove e1e8")
        elif mode == "none":
            out("bestmove (none)")
        elif mode == "crash":
            sys.exit(3)
        else:
            time.sleep(1.5)
            out("bestmove e2e4")
    elif mode == "xb-claim" and cmd == "usermove":
        out("Illegal move: " + tok[1])
    elif mode == "xb-claim" and cmd == "go":
        out("move " + next(black_moves))
    elif mode == "xb-resign" and cmd in ("go", "usermove"):
        out("resign")
