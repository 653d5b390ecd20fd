"""Watch mode: follow a running ``cardinal match`` through its PGN file (and a
results journal of JSON lines when there is one) and push summaries to the page.

The Elo of the first engine (White in the first game) against the second,
with its 95 % error from :mod:`bench.stats`, is computed after every finished
game; an SPRT LLR is plotted when the journal's ``pair`` lines carry one
(``totals.llr``, written by ``cardinal match --sprt``).
"""
from __future__ import annotations

import asyncio
import json
import math
import os

import variants
from bench import stats
from bench.pgn_reader import read_games, replay

POLL_S = 0.25
PLOT_CLIP = 800.0


def _num(x):
    return None if x is None or math.isnan(x) or math.isinf(x) else round(x, 1)


def journal_path(pgn_path: str) -> str | None:
    stem = os.path.splitext(pgn_path)[0]
    for p in (stem + ".jsonl", pgn_path + ".jsonl"):     # cardinal match's default, then FILE.pgn.jsonl
        if os.path.isfile(p):
            return p
    return None


def read_journal(path: str | None) -> list[dict]:
    if not path or not os.path.isfile(path):
        return []
    out = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                d = json.loads(line)
            except ValueError:
                continue        # a line still being written
            if isinstance(d, dict):
                out.append(d)
    return out


def summary(pgn_text: str, journal: list[dict]) -> dict:
    games = read_games(pgn_text)
    finished = [g for g in games if g.complete and g.result in ("1-0", "0-1", "1/2-1/2")]
    first = finished[0].tags.get("White", "?") if finished else (games[0].tags.get("White", "?") if games else "?")
    second = "?"
    w = d = l = 0
    series = []
    # the journal's 'pair' lines carry running totals: games played and (with --sprt) the LLR
    llrs = {}
    for j in journal:
        t = j.get("totals") if j.get("type") == "pair" else None
        if isinstance(t, dict) and isinstance(t.get("games"), int) and isinstance(t.get("llr"), (int, float)):
            llrs[t["games"]] = t["llr"]
    for i, g in enumerate(finished):
        white, black = g.tags.get("White", "?"), g.tags.get("Black", "?")
        if second == "?":
            second = black if white == first else white
        if g.result == "1/2-1/2":
            d += 1
        elif (g.result == "1-0") == (white == first):
            w += 1
        else:
            l += 1
        elo, err = stats.elo_with_error(w, d, l)
        # a perfect score has an infinite Elo: the plot shows it clipped at +-PLOT_CLIP
        series.append({"games": i + 1, "elo": _num(elo), "error": _num(err),
                       "elo_plot": None if math.isnan(elo) else max(-PLOT_CLIP, min(PLOT_CLIP, round(elo, 1))),
                       "llr": round(llrs[i + 1], 3) if i + 1 in llrs else None})
    elo, err = stats.elo_with_error(w, d, l) if finished else (math.nan, math.nan)
    cur = games[-1] if games else None
    current = None
    if cur is not None:
        try:
            start, moves = replay(cur)
            pos = start.copy()
            for mv in moves:
                pos._push(mv)
            fen, error = pos.fen(), None
        except ValueError as e:
            fen, error = None, str(e)
        try:
            v = variants.get(cur.variant)
            size, start_fen = (v.width, v.height), cur.start_fen or v.start_fen
        except KeyError:
            size, start_fen = (8, 8), cur.start_fen
        # start_fen: the move numbers ("1... d7 2. Qxj8" when Black moves first)
        current = {"width": size[0], "height": size[1], "white": cur.tags.get("White", "?"), "black": cur.tags.get("Black", "?"),
                   "round": cur.tags.get("Round", "?"), "variant": cur.variant, "moves": cur.moves,
                   "result": cur.result if cur.complete else "*", "fen": fen, "start_fen": start_fen, "error": error}
    return {"type": "watch", "games": len(finished), "first": first, "second": second,
            "wins": w, "draws": d, "losses": l, "elo": _num(elo), "error": _num(err),
            "error_infinite": bool(finished) and math.isinf(err), "series": series, "current": current,
            "journal": len(journal)}


def _stat(path):
    try:
        st = os.stat(path)
        return st.st_mtime_ns, st.st_size
    except OSError:
        return None


async def follow(ws, path: str | None, journal: str | None) -> None:
    """Send a summary now and whenever the PGN (or journal) changes, until the page leaves."""
    if not path:
        await ws.send_json({"type": "error", "message": "no PGN file to watch (give a path)"})
        return
    path = os.path.abspath(os.path.expanduser(path))
    if not path.lower().endswith(".pgn"):
        await ws.send_json({"type": "error", "message": f"{path}: Watch follows a .pgn file"})
        return
    if os.path.isdir(path):
        await ws.send_json({"type": "error", "message": f"{path} is a directory, not a PGN file"})
        return
    last = object()
    waiting_sent = False
    while True:
        jpath = journal or journal_path(path)
        key = (_stat(path), _stat(jpath) if jpath else None)
        if key != last:
            last = key
            if key[0] is None:
                if not waiting_sent:
                    await ws.send_json({"type": "watch", "waiting": True, "path": path, "games": 0, "series": []})
                    waiting_sent = True
            else:
                try:
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        text = fh.read()
                    msg = summary(text, read_journal(jpath))
                except OSError as e:
                    msg = {"type": "error", "message": f"cannot read {path}: {e.strerror}"}
                msg["path"] = path
                msg["journal_path"] = jpath
                await ws.send_json(msg)
        try:
            await asyncio.wait_for(ws.receive_text(), timeout=POLL_S)
        except asyncio.TimeoutError:
            pass
