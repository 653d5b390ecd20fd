"""PGN of a finished match game, written as Cute Chess writes it."""
from __future__ import annotations


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"')


def pgn_text(g, event: str = "Cardinal match", site: str = "?", tc="") -> str:
    """PGN of one :class:`bench.referee.GameRecord`: the seven-tag roster, then FEN/SetUp,
    Variant (omitted for chess, as Cute Chess does), TimeControl, Termination, PlyCount;
    SAN moves with ``{score/depth time}`` comments; the last comment ends with the reason.
    ``tc`` is one TimeControl text, or a pair of texts by engine index (time odds): when
    they differ the tags are ``WhiteTimeControl`` and ``BlackTimeControl``, as Cute Chess
    writes them."""
    tags = [("Event", event), ("Site", site), ("Date", g.date), ("Round", str(g.round)),
            ("White", g.white), ("Black", g.black), ("Result", g.result)]
    if not g.standard_start:
        tags += [("FEN", g.start_fen), ("SetUp", "1")]
    if g.variant != "chess":
        tags.append(("Variant", g.variant))
    if isinstance(tc, (list, tuple)):
        if tc[0] == tc[1]:
            tc = tc[0]
        else:
            w, b = tc[g.white_index], tc[1 - g.white_index]
            tags += [("WhiteTimeControl", w), ("BlackTimeControl", b)]
            tc = ""
    if tc:
        tags.append(("TimeControl", tc))
    tags += [("Termination", g.termination), ("PlyCount", str(g.plies))]
    out = [f'[{k} "{_escape(v)}"]' for k, v in tags]
    words = []
    num, turn = g.first_fullmove, g.first_turn
    for i, s in enumerate(g.san):
        if turn == 0:
            words.append(f"{num}.")
        elif i == 0:
            words.append(f"{num}...")
        words.append(s)
        c = g.comments[i]
        if i == len(g.san) - 1:
            c = f"{c}, {g.reason}" if c else g.reason
        if c:
            words.append("{" + c.replace("}", ")") + "}")
        if turn == 1:
            num += 1
        turn ^= 1
    if not g.san:
        words.append("{" + g.reason + "}")
    words.append(g.result)
    lines, cur = [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > 79:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return "\n".join(out) + "\n\n" + "\n".join(lines) + "\n\n"
