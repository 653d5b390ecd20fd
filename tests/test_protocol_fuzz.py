"""Fuzz the protocol layer: thousands of seeded random, malformed and hostile lines.

After the barrage the engine must still answer ``isready`` (UCI) / ``ping``
(XBoard), must never print a traceback (stdout or stderr), and every
``bestmove``/``move`` line it printed must be well formed. Values that would
make the run slow or memory-hungry (hash sizes, perft depths, thinking times)
are kept small, and searches are a small share of the lines (each ``go`` starts
threads and a search), so 10,000 lines per protocol stay fast on 2 cores;
everything else is fair game.
"""
from __future__ import annotations

import random
import re

import pytest

from tests.engine_proc import EngineProcess

READY_TIMEOUT = 180.0
N_LINES = 5000        # per seed: two seeds make 10,000 lines per protocol per run
BATCH = 200           # lines per write (the engine reads them as fast as it can)

FENS = {
    "chess": ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
              "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
              "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
              "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "4k3/8/8/8/8/8/4R3/4K3 w - - 0 1"],
    "grand": ["r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R w - - 0 1",
              "4k5/10/6P3/10/10/10/10/10/1p2K5/10 b - - 0 1", "4k5/10/6P3/10/10/10/10/10/1p2K5/10 w 0 1",
              "r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R[-] w - - 0 1",
              "4k5/10/10/10/10/3pP5/10/10/10/4K5 b - e3 0 1"],
    "knightrelay": ["4k3/8/3R4/1N6/8/8/8/4K3 b - - 0 1", "3qk2r/2p3p1/4P3/8/3N4/8/8/4K2R w Kk - 0 1",
                    "4k3/2r5/1bp2q2/3N4/1p2nP2/2P1p3/8/4K3 w - - 0 1"],
}
ALL_FENS = [f for fs in FENS.values() for f in fs]
WORDS = ["uci", "isready", "go", "stop", "position", "fen", "startpos", "moves", "setoption", "name", "value",
         "new", "force", "usermove", "ping", "level", "st", "sd", "time", "otim", "?", "undo", "remove",
         "result", "variant", "grand", "knightrelay", "chess", "normal", "-", "0", "1", "-1", "9999999999",
         "e2e4", "e3e5", "a10a9", "g9g10q", "b2b1q", "1/2-1/2", "{", "}", "[", "]", "=", "Hash", "ponder",
         "infinite", "perft", "analyze", "exit", ".", "d", "eval", "xboard", "protover", "2", "\t"]


def rint(rng: random.Random) -> str:
    return rng.choice([str(rng.randint(-5, 5)), str(rng.randint(0, 3000)), str(rng.randint(-10**12, 10**12)),
                       "1e3", "0x10", "abc", "", "3.5", "-0", "NaN"])


def rmove(rng: random.Random) -> str:
    f = "abcdefghijk"
    s = (rng.choice(f) + str(rng.randint(0, 11)) + rng.choice(f) + str(rng.randint(0, 11))
         + rng.choice(["", "", "", "q", "c", "a", "n", "k", "x", "="]))
    return rng.choice([s, s, s, rng.choice(WORDS), s.upper(), s[:3]])


def mutate_fen(rng: random.Random, fen: str) -> str:
    kind = rng.randint(0, 6)
    if kind == 0:
        return fen
    if kind == 1:   # random character replaced
        i = rng.randrange(len(fen))
        return fen[:i] + rng.choice("pnbrqkcaPNBRQKCA0123456789/ -wbKQkqxX[]") + fen[i + 1:]
    if kind == 2:   # truncated
        return fen[:rng.randrange(len(fen))]
    if kind == 3:   # fields dropped or duplicated
        parts = fen.split()
        rng.shuffle(parts)
        return " ".join(parts[:rng.randint(0, len(parts) + 1)] + parts[:rng.randint(0, 2)])
    if kind == 4:
        return fen.replace("/", "//", 1)
    if kind == 5:
        return fen + " " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
    return rng.choice(ALL_FENS)


def garbage(rng: random.Random) -> bytes:
    kind = rng.randint(0, 7)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 40))).replace(b"\n", b" ")
    if kind == 1:
        return ("x" * rng.randint(1000, 20000)).encode()
    if kind == 2:
        return b""
    if kind == 3:
        return b"   \t  \r"
    if kind == 4:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))).encode()
    if kind == 5:
        return "".join(chr(rng.randint(32, 0x2FFF)) for _ in range(rng.randint(1, 30))).encode("utf-8", "replace")
    if kind == 6:
        return b"\x00\x01\x02 go \xff\xfe"
    return rng.choice(WORDS).upper().encode()


def uci_line(rng: random.Random) -> bytes:
    r = rng.random()
    if r < 0.12:
        return garbage(rng)
    c = rng.randint(0, 14)
    if c in (6, 7, 8, 10) and rng.random() < 0.7:
        c = 11                       # fewer searches: each go costs threads and a search
    if c == 0:
        return rng.choice([b"uci", b"isready", b"ucinewgame", b"stop", b"ponderhit", b"d", b"eval",
                           b"debug on", b"register later", b"isready extra"])
    if c in (1, 2):
        name = rng.choice(["UCI_Variant", "Hash", "MultiPV", "Move Overhead", "Clear Hash", "Ponder", "Nope",
                           "uci_variant", "", "Threads"])
        if name == "UCI_Variant" or name == "uci_variant":
            val = rng.choice(["chess", "standard", "grand", "knightrelay", "Grand", "shogi", "", "normal"])
        elif name == "Hash":
            val = rng.choice(["1", "2", "8", "16", "0", "-3", "5000", "abc", ""])
        elif name == "Ponder":
            val = rng.choice(["true", "false", "maybe", ""])
        else:
            val = rint(rng)
        form = rng.randint(0, 3)
        if form == 0:
            return f"setoption name {name} value {val}".encode()
        if form == 1:
            return f"setoption name {name}".encode()
        if form == 2:
            return f"setoption {name} {val}".encode()
        return f"setoption name {name} value".encode()
    if c in (3, 4, 5):
        head = rng.choice(["startpos", "startpos", f"fen {mutate_fen(rng, rng.choice(ALL_FENS))}", "fen", "",
                           "moves", "startpos fen"])
        mv = " ".join(rmove(rng) for _ in range(rng.randint(0, 8)))
        return f"position {head} {rng.choice(['moves', 'moves', '', 'move'])} {mv}".encode()
    if c in (6, 7, 8):
        parts = ["go"]
        for _ in range(rng.randint(0, 4)):
            k = rng.choice(["wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "nodes", "mate",
                            "infinite", "ponder", "searchmoves", "bogus"])
            if k in ("infinite", "ponder"):
                parts.append(k)
            elif k in ("depth", "mate"):
                parts += [k, rng.choice(["1", "2", "3", "0", "-1", "x", "200"])]
            elif k == "nodes":
                parts += [k, rng.choice(["1", "500", "20000", "-5", "x"])]
            elif k == "searchmoves":
                parts += [k, rmove(rng), rmove(rng)]
            elif k == "bogus":
                parts.append(rng.choice(WORDS))
            else:
                parts += [k, rng.choice(["0", "1", "50", "300", "1000", "-100", "abc", "99999"])]
        return " ".join(parts).encode()
    if c == 9:
        return f"go perft {rng.choice(['1', '2', '3', '0', '-1', 'x', '', '1 2'])}".encode()
    if c == 10:
        return rng.choice([b"go infinite", b"go ponder wtime 1000 btime 1000", b"go movetime 20", b"go depth 2"])
    if c == 11:
        return rng.choice(WORDS).encode() + b" " + rint(rng).encode()
    if c == 12:
        return b"position startpos moves " + " ".join(rmove(rng) for _ in range(rng.randint(0, 3))).encode()
    return rng.choice([b"stop", b"isready", b"ponderhit"])


def xboard_line(rng: random.Random) -> bytes:
    r = rng.random()
    if r < 0.12:
        return garbage(rng)
    c = rng.randint(0, 20)
    if c == 0:
        return rng.choice([b"new", b"force", b"go", b"?", b"undo", b"remove", b"post", b"nopost", b"hard",
                           b"easy", b"analyze", b"exit", b".", b"xboard", b"protover 2", b"hint", b"bk", b"draw",
                           b"computer", b"random", b"white", b"black", b"edit", b"playother"])
    if c == 1:
        return f"variant {rng.choice(['normal', 'grand', 'knightrelay', 'standard', 'shogi', '', 'Grand'])}".encode()
    if c in (2, 3, 4, 5):
        return f"usermove {rmove(rng)}".encode()
    if c == 6:
        return rmove(rng).encode()
    if c in (7, 8):
        return f"setboard {mutate_fen(rng, rng.choice(ALL_FENS))}".encode()
    if c == 9:
        mps = rng.choice(["0", "40", "1", "-1", "x"])
        base = rng.choice(["0:01", "0:02", "1", "0:00", "x:y", "0.05", ":", "1:2:3"])
        inc = rng.choice(["0", "0.05", "0.1", "1", "-1", "x"])
        return f"level {mps} {base} {inc}".encode()
    if c == 10:
        return f"st {rng.choice(['0.05', '0.1', '0.3', '0', '-1', 'x', '1e9'])}".encode()
    if c == 11:
        return f"sd {rng.choice(['1', '2', '3', '4', '0', '300', 'x'])}".encode()
    if c in (12, 13):
        return f"{rng.choice(['time', 'otim'])} {rng.choice(['0', '10', '100', '500', '-5', 'x', '', '999'])}".encode()
    if c == 14:
        return f"ping {rint(rng)}".encode()
    if c == 15:
        return f"result {rng.choice(['1-0', '0-1', '1/2-1/2', '*'])} {{{rng.choice(WORDS)}}}".encode()
    if c == 16:
        return f"memory {rng.choice(['1', '8', '32', '0', '-1', 'x'])}".encode()
    if c == 17:
        return f"option {rng.choice(['Move Overhead', 'MultiPV', 'Clear Hash', 'Nope', ''])}={rint(rng)}".encode()
    if c == 18:
        return rng.choice([b"accepted ping", b"rejected analyze", b"name Foo Bar", b"rating 1 2", b"cores 2",
                           b"egtpath syzygy /x", b"nps 1000", b"ics -"])
    return rng.choice(WORDS).encode() + b" " + rng.choice(WORDS).encode()


def legal_grand_start() -> list[str]:
    from engine.rules.position import Position
    return Position.from_fen(None, "grand").legal_uci()


def playout(rng: random.Random, variant: str, n: int, zero_based: bool = False) -> list[str]:
    """Coordinate moves of a random legal game of up to ``n`` plies from the variant's start."""
    from engine.rules.position import Position
    pos = Position.from_fen(None, variant)
    out = []
    for _ in range(n):
        legal = pos.legal_moves()
        if not legal:
            break
        m = rng.choice(legal)
        out.append(pos.uci(m, zero_based))
        pos.push(m)
    return out


def uci_segment(rng: random.Random) -> list[bytes]:
    """A coherent stretch of a game (so searches run on varied real positions)."""
    v = rng.choice(["chess", "grand", "knightrelay"])
    moves = " ".join(playout(rng, v, rng.randint(0, 40)))
    go = rng.choice(["go movetime 20", "go depth 2", "go nodes 2000", "go wtime 500 btime 500 winc 10 binc 10",
                     "go infinite", "go ponder wtime 300 btime 300"])
    seg = [f"setoption name UCI_Variant value {v}", "ucinewgame", f"position startpos moves {moves}", "isready", go]
    if go in ("go infinite", "go ponder wtime 300 btime 300") or rng.random() < 0.3:
        seg.append(rng.choice(["stop", "ponderhit", "isready"]))
    return [x.encode() for x in seg]


def xboard_segment(rng: random.Random) -> list[bytes]:
    v = rng.choice(["normal", "grand", "knightrelay"])
    moves = playout(rng, "chess" if v == "normal" else v, rng.randint(0, 40), zero_based=(v == "grand"))
    seg = ["new", f"variant {v}", "force"] + [f"usermove {m}" for m in moves]
    seg += [rng.choice(["st 0.05", "sd 2", "level 0 0:01 0.01", "level 40 0:02 0"]), "time 100", "otim 100",
            rng.choice(["post", "nopost", "hard", "easy"]), "go"]
    if rng.random() < 0.5:
        seg.append("?")
    if rng.random() < 0.3:
        seg += ["analyze", f"usermove {rng.choice(moves) if moves else 'e2e4'}", ".", "undo", "exit"]
    return [x.encode() for x in seg]


def barrage(rng: random.Random, line, segment, n: int) -> list[bytes]:
    out: list[bytes] = []
    while len(out) < n:
        if rng.random() < 0.015:
            out += segment(rng)
        else:
            out.append(line(rng))
    return [ln for ln in out if ln.split()[:1] != [b"quit"]]


def _no_traceback(e: EngineProcess) -> None:
    assert not any("Traceback" in ln for ln in e.lines), [ln for ln in e.lines if "Traceback" in ln][:3]
    assert not any("Traceback" in ln or "exception" in ln for ln in e.stderr), "\n".join(e.stderr[-40:])


@pytest.mark.parametrize("seed", [1, 2])
def test_uci_fuzz(seed):
    rng = random.Random(seed)
    with EngineProcess() as e:
        e.send("uci")
        e.expect("uciok", 30)
        e.send("isready")
        e.expect("readyok", READY_TIMEOUT)
        lines = barrage(rng, uci_line, uci_segment, N_LINES)
        for i in range(0, len(lines), BATCH):
            e.send(*lines[i:i + BATCH])
        e.send("stop", "end_of_fuzz_marker", "isready")     # unknown command: a unique line to wait for
        e.expect(r"info string error: unknown command 'end_of_fuzz_marker'", 600)
        e.expect("readyok", 30)
        e.drain(0.5)      # the bestmove of the stopped search may follow (stop is asynchronous)
        e.send("setoption name UCI_Variant value grand", "position startpos", "go depth 1")
        out = e.expect(r"bestmove .*", 60)
        assert re.fullmatch(r"bestmove [a-j](10|[1-9])[a-j](10|[1-9])( ponder .*)?", out[-1])
        assert out[-1].split()[1] in legal_grand_start()
        e.send("isready")
        e.expect("readyok", 30)
        for ln in e.lines:
            if ln.startswith("bestmove"):
                assert re.fullmatch(r"bestmove ((\(none\))|[a-j](10|[1-9])[a-j](10|[1-9])[qrbnca]?"
                                    r"( ponder [a-j](10|[1-9])[a-j](10|[1-9])[qrbnca]?)?)", ln), ln
        gos = sum(1 for ln in lines + [b"go depth 1"]
                  if ln.split()[:1] == [b"go"] and ln.split()[1:2] != [b"perft"])
        assert sum(1 for ln in e.lines if ln.startswith("bestmove")) == gos
        assert e.proc.poll() is None
        _no_traceback(e)
    assert e.proc.returncode == 0


@pytest.mark.parametrize("seed", [1, 2])
def test_xboard_fuzz(seed):
    rng = random.Random(seed)
    with EngineProcess() as e:
        e.send("xboard", "protover 2")
        e.expect("feature done=1", READY_TIMEOUT)
        e.send("ping 0")
        e.expect("pong 0", READY_TIMEOUT)
        lines = barrage(rng, xboard_line, xboard_segment, N_LINES)
        for i in range(0, len(lines), BATCH):
            e.send(*lines[i:i + BATCH])
        e.send("force", "exit", "easy", "ping 424242")
        e.expect("pong 424242", 600)
        e.send("new", "variant grand", "force", "usermove e2e4", "sd 1", "go")
        out = e.expect(r"move .*", 60)
        assert re.fullmatch(r"move [a-j][0-9][a-j][0-9]", out[-1]), out[-1]
        e.send("ping 424243")
        e.expect("pong 424243", 30)
        for ln in e.lines:
            if ln.startswith("move "):
                assert re.fullmatch(r"move [a-j](10|[0-9])[a-j](10|[0-9])[qrbnca]?", ln), ln
        assert e.proc.poll() is None
        _no_traceback(e)
    assert e.proc.returncode == 0
