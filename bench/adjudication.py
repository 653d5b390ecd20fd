"""Draw and resign adjudication by the engines' own scores, as cutechess-cli does it.

``--draw movenumber=N movecount=N score=N``: once the game has reached full move
``movenumber`` and the scores of the last ``movecount`` moves of *both* engines
(``2 * movecount`` consecutive engine moves) were within ``score`` centipawns of
zero, the game is a draw.

``--resign movecount=N score=N [twosided=true]``: an engine whose own score was at or
below ``-score`` centipawns for ``movecount`` consecutive moves of its own loses; with
``twosided=true`` only if its opponent's score was also at or above ``+score`` for its
last ``movecount`` moves.

A move without a score (a book move, or an engine that reports none) resets the
counts, like Cute Chess ``GameAdjudicator::addEval`` (``projects/lib/src/
gameadjudicator.cpp``). The game's PGN Termination is ``adjudication``.
"""
from __future__ import annotations

from dataclasses import dataclass

MATE_CP = 30000          # a mate score counts as this many centipawns (minus the moves to mate)


def score_cp(score) -> int | None:
    """Centipawns of an engine score ``("cp", v)`` or ``("mate", n)`` (None: no score)."""
    if not score:
        return None
    kind, v = score
    if kind == "mate":
        return (MATE_CP - abs(v)) * (1 if v > 0 else -1)
    return int(v)


def _parse_kv(flag: str, items: list[str], keys: dict) -> dict:
    out = {}
    for it in (t for x in items for t in x.split()):
        k, sep, v = it.partition("=")
        if not sep or k not in keys:
            raise ValueError(f"{flag}: bad item {it!r} (expected {', '.join(k + '=N' for k in keys)})")
        try:
            out[k] = keys[k](v)
        except ValueError:
            raise ValueError(f"{flag}: bad value in {it!r}") from None
    return out


def _bool(v: str) -> bool:
    if v.lower() in ("true", "1", "yes", "on"):
        return True
    if v.lower() in ("false", "0", "no", "off"):
        return False
    raise ValueError(v)


@dataclass(frozen=True)
class Adjudication:
    """Thresholds; 0 / None turns that rule off (the default: no adjudication)."""
    draw_movenumber: int = 0
    draw_movecount: int = 0
    draw_score: int = 0
    resign_movecount: int = 0
    resign_score: int = 0
    resign_twosided: bool = False

    @property
    def draw(self) -> bool:
        return self.draw_movenumber > 0

    @property
    def resign(self) -> bool:
        return self.resign_movecount > 0

    @property
    def active(self) -> bool:
        return self.draw or self.resign

    @classmethod
    def parse(cls, draw: list[str] | None, resign: list[str] | None) -> "Adjudication":
        """From ``--draw`` and ``--resign`` items (raises ``ValueError`` naming the bad one)."""
        kw = {}
        if draw:
            d = _parse_kv("--draw", draw, {"movenumber": int, "movecount": int, "score": int})
            for k in ("movenumber", "movecount", "score"):
                if k not in d:
                    raise ValueError(f"--draw needs movenumber=N movecount=N score=N (missing {k})")
            if d["movenumber"] < 1 or d["movecount"] < 1 or d["score"] < 0:
                raise ValueError("--draw: movenumber and movecount must be >= 1 and score >= 0")
            kw.update(draw_movenumber=d["movenumber"], draw_movecount=d["movecount"], draw_score=d["score"])
        if resign:
            r = _parse_kv("--resign", resign, {"movecount": int, "score": int, "twosided": _bool})
            for k in ("movecount", "score"):
                if k not in r:
                    raise ValueError(f"--resign needs movecount=N score=N (missing {k})")
            if r["movecount"] < 1 or r["score"] < 1:
                raise ValueError("--resign: movecount and score must be >= 1")
            kw.update(resign_movecount=r["movecount"], resign_score=r["score"],
                      resign_twosided=r.get("twosided", False))
        return cls(**kw)


class Adjudicator:
    """The running counts of one game. :meth:`add` after each engine move returns None
    or the verdict: ``"draw"`` or the winning side (0 = White, 1 = Black)."""

    def __init__(self, cfg: Adjudication):
        self.cfg = cfg
        self.draw_count = 0
        self.resign_count = [0, 0]
        self.win_count = [0, 0]

    def add(self, side: int, score, depth, plies: int):
        """``side`` just moved with its reported ``score`` (see :func:`score_cp`) at
        ``depth``; ``plies`` is the game's length after the move (book moves included)."""
        c = self.cfg
        cp = score_cp(score)
        if cp is None or not depth or depth <= 0:
            self.draw_count = 0
            self.resign_count[side] = 0
            self.win_count[side] = 0
            return None
        if c.draw:
            self.draw_count = self.draw_count + 1 if abs(cp) <= c.draw_score else 0
            if plies // 2 >= c.draw_movenumber and self.draw_count >= 2 * c.draw_movecount:
                return "draw"
        if c.resign:
            self.resign_count[side] = self.resign_count[side] + 1 if cp <= -c.resign_score else 0
            self.win_count[side] = self.win_count[side] + 1 if cp >= c.resign_score else 0
            if self.resign_count[side] >= c.resign_movecount and \
                    (not c.resign_twosided or self.win_count[1 - side] >= c.resign_movecount):
                return 1 - side
        return None
