"""Fuzz FEN input: mutated valid FENs of every variant, fed to every variant, through the
Python API (``Position.from_fen``), UCI ``position fen`` and XBoard ``setboard``.

Each FEN must be either accepted (a usable position: FEN, legal moves and status
work) or rejected with a clear one-line error (``ValueError`` in Python; UCI
``info string error: bad FEN (<variant>): ...``; XBoard ``# setboard: ...`` and
``Error (illegal position): setboard ...``), never a crash, a traceback or a hang.
The protocols must agree with the Python API on which FENs are accepted and on
the position they set up. Seeded: the same FENs every run.
"""
from __future__ import annotations

import random
import re
import threading

import pytest

from engine.rules.fen import FenError
from engine.rules.position import Position
from tests.conftest import VARIANTS, random_positions
from tests.engine_proc import EngineProcess

N_API = 10000         # FENs through Position.from_fen
N_PROTOCOL = 2000     # FENs per protocol, each checked against the API
READY_TIMEOUT = 180.0

PIECES = "pnbrqkcaPNBRQKCA"
TOKENS = ["w", "b", "-", "KQkq", "Kq", "HAha", "e3", "e6", "e7", "a10", "j0", "z9", "0", "1", "-1", "99999999999",
          "1.5", "[-]", "[Qr]", "moves", "e2e4", "\t", "x", "/", "//", "10", "11", "9", "8"]


def base_fens() -> list[tuple[str, str]]:
    """(variant, FEN) pairs: start positions and seeded random playouts of every variant."""
    out = []
    for v in VARIANTS:
        for pos in random_positions(v, 12, seed=len(v) * 7, max_plies=60):
            out.append((v, pos.fen()))
    return out


def mutate(rng: random.Random, fen: str) -> str:
    """One to three random edits of ``fen`` (characters, fields, ranks, counters)."""
    for _ in range(rng.randint(1, 3)):
        kind = rng.randint(0, 11)
        if kind == 0 and fen:                              # replace a character
            i = rng.randrange(len(fen))
            fen = fen[:i] + rng.choice(PIECES + "0123456789/ -wbx[]") + fen[i + 1:]
        elif kind == 1 and fen:                            # delete a character
            i = rng.randrange(len(fen))
            fen = fen[:i] + fen[i + 1:]
        elif kind == 2:                                    # insert a character
            i = rng.randrange(len(fen) + 1)
            fen = fen[:i] + rng.choice(PIECES + "0123456789/ ") + fen[i:]
        elif kind == 3:                                    # truncate
            fen = fen[:rng.randrange(len(fen) + 1)]
        elif kind == 4:                                    # replace a field
            parts = fen.split(" ")
            parts[rng.randrange(len(parts))] = rng.choice(TOKENS)
            fen = " ".join(parts)
        elif kind == 5:                                    # drop or add fields
            parts = fen.split(" ")
            if rng.random() < 0.5 and len(parts) > 1:
                del parts[rng.randrange(len(parts))]
            else:
                parts.insert(rng.randrange(len(parts) + 1), rng.choice(TOKENS))
            fen = " ".join(parts)
        elif kind == 6:                                    # swap, duplicate or drop ranks
            board, _, rest = fen.partition(" ")
            ranks = board.split("/")
            op = rng.randint(0, 2)
            i, j = rng.randrange(len(ranks)), rng.randrange(len(ranks))
            if op == 0:
                ranks[i], ranks[j] = ranks[j], ranks[i]
            elif op == 1:
                ranks.insert(i, ranks[j])
            elif len(ranks) > 1:
                del ranks[i]
            fen = "/".join(ranks) + (" " + rest if rest else "")
        elif kind == 7:                                    # a piece letter swapped for another
            letters = [i for i, c in enumerate(fen.split(" ")[0]) if c.isalpha()]
            if letters:
                i = rng.choice(letters)
                fen = fen[:i] + rng.choice(PIECES) + fen[i + 1:]
        elif kind == 8:                                    # strange counters
            parts = fen.split(" ")
            if len(parts) >= 6:
                parts[rng.choice([4, 5])] = rng.choice(["-1", "0", "1000001", "99999999999999999999", "x", "1e3"])
            fen = " ".join(parts)
        elif kind == 9:                                    # e.p. square anywhere
            parts = fen.split(" ")
            if len(parts) >= 4:
                parts[3] = rng.choice("abcdefghijk") + str(rng.randint(0, 11))
            fen = " ".join(parts)
        elif kind == 10:                                   # castling rights at random
            parts = fen.split(" ")
            if len(parts) >= 3:
                parts[2] = "".join(rng.sample("KQkqABCDEFGHIJabcdefghij-", rng.randint(1, 5)))
            fen = " ".join(parts)
        else:                                              # holdings brackets (XBoard style)
            board, _, rest = fen.partition(" ")
            fen = board + rng.choice(["[-]", "[Qq]", "[", "]", "[xyz]"]) + (" " + rest if rest else "")
    return fen


def cases(seed: int, n: int) -> list[tuple[str, str]]:
    """``n`` (target variant, FEN) pairs: mutated FENs of any variant given to any variant."""
    rng = random.Random(seed)
    bases = base_fens()
    out = []
    while len(out) < n:
        _, fen = rng.choice(bases)
        if rng.random() < 0.85:
            fen = mutate(rng, fen)
        fen = fen.replace("\n", " ").strip()
        if fen:
            out.append((rng.choice(VARIANTS), fen))
    return out


def api(variant: str, fen: str):
    """``(fen_out, None)`` if accepted, ``(None, message)`` if rejected; anything else raises."""
    try:
        pos = Position.from_fen(fen, variant)
    except ValueError as e:
        msg = str(e)
        assert msg and "\n" not in msg and "Traceback" not in msg, (variant, fen, msg)
        return None, msg
    # an accepted FEN gives a usable position
    out = pos.fen()
    assert Position.from_fen(out, variant).fen() == out, (variant, fen, out)
    pos.legal_moves()
    pos.status()
    return out, None


def test_from_fen_accepts_or_rejects_cleanly():
    accepted = rejected = 0
    done = threading.Event()
    failure: list = []

    def work():
        nonlocal accepted, rejected
        try:
            for variant, fen in cases(11, N_API):
                good, _ = api(variant, fen)
                if good is None:
                    rejected += 1
                else:
                    accepted += 1
        except BaseException as e:   # reported below
            failure.append((e, variant, fen))
        finally:
            done.set()

    threading.Thread(target=work, daemon=True).start()
    assert done.wait(600), "Position.from_fen hung"
    assert not failure, failure[0]
    assert accepted > 500 and rejected > 3000, (accepted, rejected)   # the fuzz reaches both sides


def test_fen_error_is_a_value_error():
    with pytest.raises(FenError):
        Position.from_fen("10/10 w - - 0 1", "grand")
    assert issubclass(FenError, ValueError)


def _uci_clean(text: str) -> str:
    # what the protocol echoes of a FEN: split into words and joined by single spaces
    return " ".join(text.split())


def test_uci_position_fen_fuzz():
    with EngineProcess() as e:
        e.send("uci")
        e.expect("uciok", 60)
        e.send("isready")
        e.expect("readyok", READY_TIMEOUT)
        current = None
        for k, (variant, fen) in enumerate(cases(12, N_PROTOCOL)):
            if "moves" in fen.split():
                continue     # `position fen A moves B` is a FEN and a move list, not one FEN
            if variant != current:
                e.send(f"setoption name UCI_Variant value {variant}")
                current = variant
            e.send("position startpos", f"position fen {fen}", "d")
            lines = e.expect(r"Legal moves: .*", 30)
            good, msg = api(variant, _uci_clean(fen))
            errors = [ln for ln in lines if ln.startswith("info string error:")]
            fen_line = [ln for ln in lines if ln.startswith("Fen: ")]
            if good is None:
                assert len(errors) == 1 and errors[0].startswith(f"info string error: bad FEN ({variant}): "), \
                    (variant, fen, lines)
                start = Position.from_fen(None, variant).fen()
                assert fen_line == [f"Fen: {start}"], (variant, fen, lines)     # the last good position kept
            else:
                assert not errors, (variant, fen, lines)
                assert fen_line == [f"Fen: {good}"], (variant, fen, good, lines)
            others = [ln for ln in lines if ln.startswith("info string") and not
                      re.match(r"info string (error|warning): ", ln)]
            assert not others, others
        e.send("isready")
        e.expect("readyok", 30)
        assert not any("Traceback" in ln for ln in e.lines + e.stderr)
        assert e.proc.poll() is None
    assert e.proc.returncode == 0


def test_xboard_setboard_fuzz():
    xb = {v: ("normal" if v == "chess" else v) for v in VARIANTS}
    with EngineProcess() as e:
        e.send("xboard", "protover 2")
        e.expect("feature done=1", READY_TIMEOUT)
        accepted = rejected = 0
        for k, (variant, fen) in enumerate(cases(13, N_PROTOCOL)):
            e.send("new", f"variant {xb[variant]}", "force", f"setboard {fen}", f"ping {k}")
            lines = e.expect(rf"pong {k}", 30)
            good, msg = api(variant, _uci_clean(fen))
            errors = [ln for ln in lines if ln.startswith("Error")]
            if good is None:
                assert len(errors) == 1 and errors[0].startswith("Error (illegal position): setboard "), \
                    (variant, fen, lines)
                assert sum(ln.startswith("# setboard: ") for ln in lines) == 1, (variant, fen, lines)
                rejected += 1
            else:
                assert not errors, (variant, fen, lines)
                accepted += 1
            assert all(ln.startswith(("# ", "Error (illegal position): setboard ", "pong ", "setup ", "piece "))
                       for ln in lines), (variant, fen, lines)
        e.send("ping 999999")
        e.expect("pong 999999", 30)
        assert accepted > 50 and rejected > 300, (accepted, rejected)
        assert not any("Traceback" in ln for ln in e.lines + e.stderr)
        assert e.proc.poll() is None
    assert e.proc.returncode == 0
