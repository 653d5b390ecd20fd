"""``cardinal bench epd FILE --movetime MS``: solve rate on an EPD test suite.

Each EPD line is a position (the four FEN fields board, side, castling, e.p.;
two move counters may follow) and operations ``opcode operand...;``. Used
operations (EPD, PGN standard section 16.2): ``bm`` (best moves: solved if the
engine plays one of them), ``am`` (avoid moves: solved if it plays none of them),
``id "name"``; others are ignored. Moves may be SAN (``Qxh7+``, ``d9=A``) or
coordinates (``g9g10q``), and are resolved with Cardinal's rules
(:meth:`engine.Position.parse_san`), so grand and knightrelay suites work
(python-chess's EPD parser only knows 8x8 chess).

By default Cardinal searches in-process (:class:`search.driver.Searcher`, a
fresh hash table per position); ``--engine "cmd=... proto=uci"`` runs any UCI
engine instead (e.g. Fairy-Stockfish, to check a grand suite). Suites shipped
in ``bench/suites/``: ``chess.epd``, ``grand.epd``, ``knightrelay.epd``; the
variant is taken from ``--variant``, else from the file name, else chess.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field

from tqdm import tqdm

from bench.engines import PING_TIMEOUT, Died, EngineError, EngineSpec, NoReply, start_engine
from bench.outputs import check_output_path, error_line, write_text
from bench.referee import GameState
from bench.timecontrol import TimeControl
import variants as _variants

SUITES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "suites")

VARIANTS = _variants.names()
# Shipped suites: bench/suites/<variant>.epd for each registered variant that has one.
SUITES = tuple(v for v in VARIANTS if os.path.exists(os.path.join(SUITES_DIR, v + ".epd")))


@dataclass
class EpdEntry:
    """One suite position: ``fen`` (six fields), ``ops`` {opcode: [operands]}, line number."""
    fen: str
    ops: dict = field(default_factory=dict)
    line: int = 0

    @property
    def id(self) -> str:
        v = self.ops.get("id")
        return v[0] if v else f"line {self.line}"


def _split_ops(text: str) -> list[list[str]]:
    """``'bm Qg6; id "WAC.001";'`` -> [['bm', 'Qg6'], ['id', 'WAC.001']] (quotes kept together)."""
    ops, cur, tok, quoted = [], [], "", False
    for ch in text:
        if quoted:
            if ch == '"':
                quoted = False
                cur.append(tok)
                tok = ""
            else:
                tok += ch
        elif ch == '"':
            quoted = True
        elif ch == ";":
            if tok:
                cur.append(tok)
                tok = ""
            if cur:
                ops.append(cur)
            cur = []
        elif ch.isspace():
            if tok:
                cur.append(tok)
                tok = ""
        else:
            tok += ch
    if quoted:
        raise ValueError("unterminated quoted operand")
    if tok:
        cur.append(tok)
    if cur:
        ops.append(cur)
    return ops


def parse_epd_line(line: str, lineno: int = 0) -> EpdEntry | None:
    """Parse one EPD line (None for blank lines and ``#`` comments). Raises ``ValueError``."""
    s = line.strip()
    if not s or s.startswith("#"):
        return None
    f = s.split(None, 4)
    if len(f) < 4:
        raise ValueError(f"line {lineno}: fewer than four FEN fields")
    rest = f[4] if len(f) > 4 else ""
    half, full = "0", "1"
    r = rest.split(None, 2)
    if len(r) >= 2 and r[0].isdigit() and r[1].rstrip(";").isdigit():
        half, full = r[0], r[1].rstrip(";")
        rest = r[2] if len(r) > 2 else ""
    ops = {}
    for op in _split_ops(rest):
        ops[op[0]] = op[1:]
    if "hmvc" in ops and ops["hmvc"]:
        half = ops["hmvc"][0]
    if "fmvn" in ops and ops["fmvn"]:
        full = ops["fmvn"][0]
    return EpdEntry(" ".join(f[:4] + [half, full]), ops, lineno)


def load_suite(path: str) -> list[EpdEntry]:
    with open(path, encoding="utf-8") as fh:
        out = [e for n, line in enumerate(fh, 1) if (e := parse_epd_line(line, n)) is not None]
    if not out:
        raise ValueError(f"{path}: no positions")
    return out


def resolve(pos, moves: list[str]) -> list[int]:
    """Packed moves for SAN/coordinate strings; raises ``ValueError`` naming an unknown move."""
    return [pos.parse_san(m) for m in moves]


def _search_cardinal(pos, movetime: int, hash_mb: int):
    from search.driver import Limits, Searcher
    s = Searcher(hash_mb)
    s.move_overhead = 0
    out = {}

    def on_info(i):
        if i.get("multipv", 1) == 1:
            out["depth"], out["score"], out["nodes"] = i.get("depth"), i.get("score"), i.get("nodes")

    def on_done(best, ponder):
        out["best"] = best

    s.start(pos, Limits(movetime=movetime), on_info, on_done)
    s.wait()
    return out.get("best"), out


class _ExternalEngine:
    """A UCI or XBoard engine searching each suite position for a fixed time."""

    def __init__(self, spec, variant):
        self.eng = start_engine(spec, spec.label, variant,
                                warn=lambda msg: print(f"warning: {msg}", file=sys.stderr))

    def search(self, fen: str, variant: str, movetime: int):
        g = GameState(variant, fen)
        tc = TimeControl(None, 0, movetime=movetime)
        self.eng.new_game(g, tc)
        t = self.eng.go(g, tc, [0, 0])
        _, text = self.eng.wait_move(t + movetime / 1000 + PING_TIMEOUT)
        info = dict(self.eng.info)
        try:
            return g.parse(text, self.eng.proto == "xboard"), info
        except ValueError:
            return None, info

    def close(self):
        self.eng.quit()


def run_suite(entries, variant: str, movetime: int, hash_mb: int = 16, engine=None, progress=True):
    """Search every entry; returns a list of result dicts (id, fen, bm, am, move, solved, depth, score, time_ms)."""
    from engine.rules.position import Position
    results = []
    ext = _ExternalEngine(engine, variant) if engine is not None else None
    it = entries
    bar = None
    if progress:
        # disable=None: a bar only when stderr is a terminal
        bar = tqdm(total=len(entries), unit="pos", file=sys.stderr, desc="epd", disable=None)
    try:
        for e in it:
            pos = Position.from_fen(e.fen, variant)
            bm = resolve(pos, e.ops.get("bm", []))
            am = resolve(pos, e.ops.get("am", []))
            t0 = time.perf_counter()
            if ext is None:
                best, info = _search_cardinal(pos, movetime, hash_mb)
            else:
                best, info = ext.search(e.fen, variant, movetime)
            dt = (time.perf_counter() - t0) * 1000
            solved = best is not None and (not bm or best in bm) and best not in am and (bm or am)
            score = info.get("score")
            results.append({
                "id": e.id, "fen": e.fen,
                "bm": [pos.san(m) for m in bm], "am": [pos.san(m) for m in am],
                "move": pos.san(best) if best is not None else None,
                "solved": bool(solved), "depth": info.get("depth"),
                "score": list(score) if score else None, "time_ms": round(dt, 1)})
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        if ext is not None:
            ext.close()
    return results


def print_table(results, out=None):
    out = out or sys.stdout
    w = max([len(r["id"]) for r in results] + [2])
    out.write(f"{'id':<{w}}  {'expected':<18} {'played':<10} {'ok':<3} {'depth':>5} {'time ms':>8}\n")
    for r in results:
        exp = ("bm " + " ".join(r["bm"])) if r["bm"] else ("am " + " ".join(r["am"]))
        out.write(f"{r['id']:<{w}}  {exp:<18} {r['move'] or '-':<10} {'yes' if r['solved'] else 'no':<3} "
                  f"{r['depth'] if r['depth'] is not None else '-':>5} {r['time_ms']:>8.0f}\n")
    n = sum(r["solved"] for r in results)
    out.write(f"solved {n}/{len(results)} ({100 * n / len(results):.0f} %)\n")


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="cardinal bench epd", description=__doc__.split("\n\n")[0])
    ap.add_argument("file", help=f"EPD file (or the name of a shipped suite: {', '.join(SUITES)})")
    ap.add_argument("--movetime", type=int, default=1000, metavar="MS", help="time per position in ms (default 1000)")
    ap.add_argument("--variant", choices=_variants.all_names(), default=None)
    ap.add_argument("--hash", type=int, default=16, metavar="MB", help="hash size in MiB (default 16)")
    ap.add_argument("--engine", default=None, metavar="SPEC",
                    help='search with an external engine instead: "cmd=... proto=uci|xboard"')
    ap.add_argument("--json", default=None, metavar="FILE", help="also write the results as JSON")
    ap.add_argument("--no-progress", action="store_true")
    a = ap.parse_args(argv)
    err = check_output_path(a.json)
    if err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    path = a.file
    if not os.path.exists(path) and a.file in SUITES:
        path = os.path.join(SUITES_DIR, a.file + ".epd")
    variant = a.variant
    if variant is None:
        base = os.path.basename(path).lower()
        variant = max((v for v in VARIANTS if base.startswith(v)), key=len, default="chess")
    variant = _variants.canonical(variant)
    if a.movetime <= 0:
        print("error: --movetime must be positive", file=sys.stderr)
        return 2
    spec = None
    try:
        entries = load_suite(path)
        if a.engine:
            spec = EngineSpec.parse(a.engine)
        results = run_suite(entries, variant, a.movetime, a.hash, spec, not a.no_progress)
    except OSError as e:
        print(f"error: {path}: {e.strerror}", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"error: {path}: {e}", file=sys.stderr)
        return 2
    except EngineError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Died:
        print(f"error: engine {spec.label!r} exited during the run", file=sys.stderr)
        return 1
    except NoReply:
        print(f"error: engine {spec.label!r} did not answer in time", file=sys.stderr)
        return 1
    print_table(results)
    if a.json:
        n = sum(r["solved"] for r in results)
        try:
            write_text(a.json, json.dumps({"suite": path, "variant": variant, "movetime_ms": a.movetime,
                                           "engine": a.engine or "cardinal", "solved": n, "total": len(results),
                                           "positions": results}, indent=1))
        except OSError as e:           # a full disk, /dev/full: the table above is kept
            print(f"error: {error_line(e)}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
