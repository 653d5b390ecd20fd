"""One game on the browser board: position, move list, clocks, result.

Everything the page shows comes from Cardinal's rules (:class:`engine.Position`):
legal moves, SAN, check and game-end status. Methods that change the game
validate their input first and raise :class:`GameError` (a ``ValueError``)
with a message for the page; the game is unchanged when they raise.
"""
from __future__ import annotations

import datetime as _dt
import itertools
import time
from types import SimpleNamespace

import variants
from engine.rules import layout as L
from engine.rules.fen import FenError, square_name
from engine.rules.position import Position

STATUS_TEXT = {"checkmate": "checkmate", "stalemate": "stalemate", "repetition": "draw by threefold repetition",
               "fifty": "draw by the 50-move rule", "insufficient": "draw by insufficient material"}
SIDES = ("white", "black", "both", "none")   # which side(s) the human plays
MAX_DEPTH = 30
MAX_MOVETIME_MS = 600_000
MAX_CLOCK_S = 24 * 3600


# Game versions are unique across games, so an engine reply computed for one game
# (or an earlier state of it) is never applied to another.
_VERSIONS = itertools.count(1)


class GameError(ValueError):
    """Bad input from the page (message shown to the user)."""


def variant_info(name: str) -> dict:
    v = variants.get(name)
    return {"name": v.name, "width": v.width, "height": v.height, "start_fen": v.start_fen,
            "pieces": [{"letter": p.letter, "name": p.name} for p in v.pieces],
            "promotion_types": v.promotion_types, "relay": v.relay, "knights_passive": v.knights_passive,
            "aliases": list(v.aliases)}


def parse_limits(d) -> dict:
    """Validated engine limits: ``{"kind": "depth"|"movetime"|"clock", ...}``."""
    if d is None:
        d = {}
    if not isinstance(d, dict):
        raise GameError("limits must be an object")
    kind = d.get("kind", "movetime")

    def num(key, lo, hi, default):
        v = d.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            raise GameError(f"{key} must be a number from {lo} to {hi}")
        return v

    if kind == "depth":
        return {"kind": "depth", "depth": int(num("depth", 1, MAX_DEPTH, 6))}
    if kind == "movetime":
        return {"kind": "movetime", "movetime": int(num("movetime", 10, MAX_MOVETIME_MS, 1000))}
    if kind == "clock":
        return {"kind": "clock", "base": float(num("base", 1, MAX_CLOCK_S, 300)),
                "inc": float(num("inc", 0, 600, 2))}
    raise GameError(f"unknown limit kind {kind!r} (depth, movetime or clock)")


class Game:
    """A game: start FEN, moves played, who the human is, limits and clocks."""

    def __init__(self, variant: str = "chess", fen: str | None = None, human: str = "white",
                 limits: dict | None = None, skill: int | None = None):
        try:
            canonical = variants.get(variant if isinstance(variant, str) else "").name
        except KeyError as e:
            raise GameError(e.args[0]) from None
        if human not in SIDES:
            raise GameError(f"side must be one of {', '.join(SIDES)}")
        self.limits = parse_limits(limits)
        if skill is not None and (isinstance(skill, bool) or not isinstance(skill, int) or not 0 <= skill <= 20):
            raise GameError("skill must be an integer from 0 to 20")
        self.skill = skill
        self.variant = canonical
        self.human = human
        self.pos = self._position(fen)
        self.result: str | None = None
        self.reason = ""
        self.sans: list[str] = []
        self.ucis: list[str] = []
        self.fens: list[str] = [self.pos.fen()]
        self.white, self.black = ("You", "Cardinal") if human == "white" else \
            ("Cardinal", "You") if human == "black" else ("White", "Black") if human == "both" else \
            ("Cardinal", "Cardinal")
        self.version = next(_VERSIONS)
        self._reset_clocks()

    # ------------------------------------------------------------------ set-up
    def _position(self, fen):
        if fen is not None and not isinstance(fen, str):
            raise GameError("fen must be a string")
        try:
            pos = Position.from_fen(fen.strip() if fen else None, self.variant)
        except FenError as e:
            raise GameError(f"bad FEN: {e}") from None
        except ValueError as e:
            raise GameError(f"bad FEN: {e}") from None
        if pos.opponent_in_check():
            raise GameError("bad FEN: the side not to move is in check")
        return pos

    def _reset_clocks(self):
        lim = self.limits
        self.clock = [lim["base"], lim["base"]] if lim["kind"] == "clock" else None
        self.clock_started = time.monotonic()

    def set_fen(self, fen: str) -> None:
        pos = self._position(fen)
        self.pos, self.sans, self.ucis, self.fens = pos, [], [], [pos.fen()]
        self.result, self.reason = None, ""
        self._reset_clocks()
        self._bump()

    def _bump(self):
        self.version = next(_VERSIONS)

    # ------------------------------------------------------------------ queries
    @property
    def start_fen(self) -> str:
        return self.pos.start_fen or self.fens[0]

    @property
    def ply(self) -> int:
        return len(self.sans)

    def engine_to_move(self) -> bool:
        if self.result is not None:
            return False
        side = ("white", "black")[self.pos.turn]
        return self.human not in (side, "both")

    def move_info(self, mv: int) -> dict:
        pos = self.pos
        frm, to = L.move_from(mv), L.move_to(mv)
        letter = pos.piece_at(frm).upper()
        relay = False
        if pos.variant.relay and letter != "N":
            df, dr = L.file_of(to) - L.file_of(frm), L.rank_of(to) - L.rank_of(frm)
            relay = (abs(df), abs(dr)) in ((1, 2), (2, 1)) and (df, dr) not in pos.variant.piece(letter).leaps
        promo = L.move_promo(mv)
        return {"uci": pos.uci(mv), "from": square_name(frm), "to": square_name(to),
                "promo": L.TYPE_LETTERS[promo].lower() if promo else None,
                "piece": letter, "capture": pos.piece_at(to) is not None or bool(L.move_flags(mv) & L.F_EP),
                "relay": relay}

    def legal(self) -> list[dict]:
        if self.result is not None:
            return []
        out = []
        legal = self.pos.legal_moves()
        from engine.rules.notation import san
        for mv in legal:
            d = self.move_info(mv)
            d["san"] = san(self.pos, mv, legal)
            out.append(d)
        return out

    def promotions(self, frm: str, to: str) -> dict:
        """The choices for a pawn move ``frm``-``to``: promotion letters allowed
        and whether staying a pawn is also legal."""
        if not all(isinstance(x, str) for x in (frm, to)):
            raise GameError("from and to must be square names")
        moves = [m for m in self.legal() if m["from"] == frm and m["to"] == to]
        if not moves:
            raise GameError(f"no legal move from {frm} to {to}")
        return {"choices": [m["promo"] for m in moves if m["promo"]],
                "optional": any(m["promo"] is None for m in moves)}

    def clocks(self) -> list[float] | None:
        if self.clock is None:
            return None
        c = list(self.clock)
        if self.result is None:
            c[self.pos.turn] -= time.monotonic() - self.clock_started
        return [max(0.0, x) for x in c]

    def status(self) -> dict:
        s = self.pos.status()
        return {"status": s, "check": self.pos.is_check(), "result": self.result, "reason": self.reason}

    def state(self) -> dict:
        st = self.status()
        return {"variant": self.variant, "fen": self.pos.fen(), "start_fen": self.fens[0],
                "turn": "wb"[self.pos.turn], "human": self.human, "limits": self.limits, "skill": self.skill,
                "moves": list(self.sans), "ucis": list(self.ucis), "fens": list(self.fens), "legal": self.legal(),
                "clocks": self.clocks(), "version": self.version, "white": self.white, "black": self.black,
                **st}

    # ------------------------------------------------------------------ changes
    def _finish_if_over(self):
        s = self.pos.status()
        if s == "ongoing":
            return
        self.result = self.pos.result()
        if s == "checkmate":
            winner = "Black" if self.pos.turn == 0 else "White"
            self.reason = f"{winner} mates"
        else:
            self.reason = STATUS_TEXT[s].capitalize()

    def _tick(self):
        """Charge the mover's clock; a flag ends the game."""
        if self.clock is None:
            return
        now = time.monotonic()
        side = self.pos.turn
        self.clock[side] -= now - self.clock_started
        self.clock_started = now
        if self.clock[side] <= 0:
            self.clock[side] = 0.0
            self.result = "0-1" if side == 0 else "1-0"
            self.reason = f"{'White' if side == 0 else 'Black'} loses on time"
            return
        self.clock[side] += self.limits["inc"]

    def check_flag(self) -> bool:
        """End the game if the side to move has run out of time; True if it did."""
        if self.result is None and self.clock is not None:
            c = self.clocks()
            if c[self.pos.turn] <= 0:
                self._tick()
                self._bump()
                return True
        return False

    def play(self, uci) -> dict:
        """Play a move given in coordinates (``e2e4``, ``g9g10q``); returns its info."""
        if not isinstance(uci, str) or not uci or len(uci) > 12:
            raise GameError("move must be a coordinate string such as e2e4")
        if self.result is not None:
            raise GameError(f"the game is over ({self.result}, {self.reason})")
        try:
            mv = self.pos.parse_uci(uci)
        except ValueError:
            raise GameError(f"illegal move {uci}") from None
        info = self.move_info(mv)
        san = self.pos.san(mv)
        self._tick()
        if self.result is not None:
            self._bump()
            return info
        self.pos._push(mv)
        self.sans.append(san)
        self.ucis.append(info["uci"])
        self.fens.append(self.pos.fen())
        self._finish_if_over()
        self._bump()
        info["san"] = san
        return info

    def takeback(self, plies: int = 1) -> None:
        if isinstance(plies, bool) or not isinstance(plies, int) or plies < 1:
            raise GameError("plies must be a positive integer")
        if plies > len(self.sans):
            raise GameError("no move to take back")
        for _ in range(plies):
            self.pos.pop()
            self.sans.pop()
            self.ucis.pop()
            self.fens.pop()
        self.result, self.reason = None, ""
        self.clock_started = time.monotonic()
        self._bump()

    def resign(self, side: str | None = None) -> None:
        if self.result is not None:
            raise GameError("the game is already over")
        if side is None:
            side = self.human if self.human in ("white", "black") else ("white", "black")[self.pos.turn]
        if side not in ("white", "black"):
            raise GameError("side must be white or black")
        self.result = "0-1" if side == "white" else "1-0"
        self.reason = f"{side.capitalize()} resigns"
        self._bump()

    # ------------------------------------------------------------------ PGN
    def pgn(self) -> str:
        from bench.pgn import pgn_text
        start = self.fens[0]
        std = start == variants.get(self.variant).start_fen
        fields = start.split()
        result = self.result or "*"
        rec = SimpleNamespace(
            date=_dt.date.today().strftime("%Y.%m.%d"), round=1, white=self.white, black=self.black,
            result=result, standard_start=std, start_fen=start, variant=self.variant,
            termination="normal" if self.result and "time" not in self.reason else
            ("time forfeit" if self.result else "unterminated"),
            plies=len(self.sans), first_fullmove=int(fields[5]), first_turn=0 if fields[1] == "w" else 1,
            san=list(self.sans), comments=[""] * len(self.sans), reason=self.reason)
        return pgn_text(rec, event="Cardinal browser board", site="cardinal serve")

    @classmethod
    def from_pgn(cls, text, human: str = "both", limits: dict | None = None) -> "Game":
        from bench.pgn_reader import read_games, replay
        if not isinstance(text, str) or not text.strip():
            raise GameError("PGN text is empty")
        games = read_games(text)
        if not games:
            raise GameError("no game found in the PGN")
        g = games[0]
        if variants.canonical(g.variant) is None:
            raise GameError(f"unknown variant {g.variant!r} in the Variant tag")
        game = cls(g.variant, g.start_fen, human=human, limits=limits)
        try:
            _, moves = replay(g)
        except ValueError as e:
            raise GameError(f"bad PGN: {e}") from None
        for mv in moves:
            game.sans.append(game.pos.san(mv))
            game.ucis.append(game.pos.uci(mv))
            game.pos._push(mv)
            game.fens.append(game.pos.fen())
        game.white, game.black = g.tags.get("White", "?"), g.tags.get("Black", "?")
        game._finish_if_over()
        if game.result is None and g.result in ("1-0", "0-1", "1/2-1/2"):
            game.result, game.reason = g.result, (g.tags.get("Termination") or "result from the PGN")
        game._bump()
        return game
