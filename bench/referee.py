"""One game between two engines with Cardinal's rules as referee.

:class:`GameState` is the game as the runner sees it (Cardinal position and the
moves in UCI, CECP and SAN); :func:`play_game` drives two started engines
(:mod:`bench.engines`) move by move, keeps the clocks and adjudicates the end.

Game ends (the PGN ``Termination`` tag follows Cute Chess): checkmate,
stalemate, threefold repetition, the 50-move rule and insufficient material
by Cardinal's rules, and resignation (``normal``); an illegal or unparsable
move (``illegal move``), a flag fall (``time forfeit``), an engine that
exits or closes its pipe (``abandoned``), an engine that does not answer
``isready``/``ping`` or never moves in a game without clock (``stalled
connection``), and an XBoard engine calling a legal move illegal
(``adjudication``) lose. Draw and resign adjudication by the engines' scores
(:mod:`bench.adjudication`, off by default) ends a game with ``adjudication``.

Each engine may have its own time control (time odds, a node or depth limit):
``play_game`` takes one :class:`TimeControl` or a pair indexed by engine.
"""
from __future__ import annotations

import datetime as _dt
import threading
from dataclasses import dataclass

from bench.adjudication import Adjudication, Adjudicator
from bench.engines import Died, Forfeit, NoReply, uci_from_cecp
from bench.openings import Opening
from bench.timecontrol import TimeControl
from engine.rules.position import Position


def _same_fen(a: str, b: str) -> bool:
    return a.split()[:4] == b.split()[:4]


class GameState:
    """The game as the runner sees it: Cardinal position, start FEN and the moves in each notation."""

    def __init__(self, variant: str, start_fen: str | None):
        self.variant = variant
        self.pos = Position.from_fen(start_fen, variant)
        self.height = self.pos.variant.height
        self.standard_start = start_fen is None or _same_fen(self.pos.fen(), self.pos.variant.start_fen)
        self.start_fen = self.pos.fen()
        self.first_fullmove = int(self.start_fen.split()[5])
        self.first_turn = self.pos.turn
        self.moves: list[int] = []
        self.uci: list[str] = []       # 1-based coordinates
        self.uci0: list[str] = []      # CECP coordinates (0-based ranks on 10-rank boards)
        self.san: list[str] = []
        self.comments: list[str] = []

    def push(self, mv: int, comment: str = "") -> None:
        self.uci.append(self.pos.uci(mv))
        self.uci0.append(self.pos.uci(mv, zero_based=self.height == 10))
        self.san.append(self.pos.san(mv))
        self.comments.append(comment)
        self.moves.append(mv)
        self.pos.push(mv)

    def parse(self, text: str, zero_based: bool) -> int:
        """Legal move from engine text: coordinates (``zero_based`` ranks on 10-rank boards) or SAN.
        Raises ``ValueError``."""
        t = text.strip()
        if zero_based and self.height == 10:
            t = uci_from_cecp(t)
        try:
            return self.pos.parse_uci(t)
        except ValueError:
            pass
        if t in ("", "(none)", "0000", "none", "null"):
            raise ValueError(f"no move ({text!r})")
        return self.pos.parse_san(t)

    def fen_for_xboard(self) -> str:
        """Start FEN for ``setboard``: e.p. square in 0-based ranks on 10-rank boards (XBoard's own form)."""
        f = self.start_fen.split()
        if self.height == 10 and f[3] != "-":
            f[3] = f[3][0] + str(int(f[3][1:]) - 1)
        return " ".join(f)


@dataclass
class GameRecord:
    """A finished game. ``result`` is '1-0', '0-1' or '1/2-1/2'; ``termination`` is the PGN
    Termination value; ``fault`` is the engine index (0/1 in the match) that forfeited, or None."""
    round: int
    white: str
    black: str
    white_index: int
    variant: str
    start_fen: str
    standard_start: bool
    first_fullmove: int
    first_turn: int
    san: list
    uci: list
    comments: list
    result: str
    termination: str
    reason: str
    fault: int | None = None
    date: str = ""

    @property
    def plies(self) -> int:
        return len(self.san)

    def score_for(self, engine_index: int) -> float:
        """1, 0.5 or 0 for match engine ``engine_index`` (0 = first --engine)."""
        if self.result == "1/2-1/2":
            return 0.5
        white_won = self.result == "1-0"
        return 1.0 if white_won == (engine_index == self.white_index) else 0.0


_SIDE = ("White", "Black")
_RULE_REASON = {"stalemate": "Draw by stalemate", "fifty": "Draw by fifty moves rule",
                "repetition": "Draw by 3-fold repetition",
                "insufficient": "Draw by insufficient mating material"}


def play_game(engines: list, white_index: int, variant: str, opening: Opening, tc,
              round_no: int, timemargin_ms: float = 20.0, move_timeout: float = 60.0,
              stop: threading.Event | None = None,
              adjudication: Adjudication | None = None) -> GameRecord | None:
    """Play one game between ``engines[white_index]`` (White) and the other one.

    ``opening`` gives the start FEN (None: the variant's start) and moves played
    first. Clock (like Cute Chess): an engine's time runs from the moment its
    ``go``/move is written until its move is read; the increment is added after
    the move; a move more than ``timemargin_ms`` after the clock reached zero (or
    after the movetime) loses on time. Returns the record, or None if ``stop`` was
    set (game abandoned by the user). ``tc`` is one :class:`TimeControl` for both or a
    pair ``[tc of engines[0], tc of engines[1]]``.
    """
    game = GameState(variant, opening.fen)
    for u in opening.moves:
        game.push(game.pos.parse_uci(u), "book")
    side_eng = [engines[white_index], engines[1 - white_index]]
    tcs = list(tc) if isinstance(tc, (list, tuple)) else [tc, tc]
    side_tc = [tcs[white_index], tcs[1 - white_index]]
    margin = timemargin_ms / 1000.0
    clocks = [t.base * 1000.0 if t.clock else 0.0 for t in side_tc]
    incs = [t.inc if t.clock else 0.0 for t in side_tc]
    result = termination = reason = None
    fault = None
    adj = Adjudicator(adjudication) if adjudication is not None and adjudication.active else None
    verdict = None

    def lose(side: int, term: str, why: str):
        nonlocal result, termination, reason, fault
        result = "0-1" if side == 0 else "1-0"
        termination, reason = term, why
        fault = white_index if side == 0 else 1 - white_index

    for side in (0, 1):
        try:
            side_eng[side].new_game(game, side_tc[side])
        except Died:
            lose(side, "abandoned", f"{_SIDE[side]} disconnects")
            break
        except NoReply:
            lose(side, "stalled connection", f"{_SIDE[side]}'s connection stalls")
            break
    while result is None:
        if stop is not None and stop.is_set():
            return None
        status = game.pos.status()
        if status != "ongoing":
            if status == "checkmate":
                winner = 1 - game.pos.turn
                result = "1-0" if winner == 0 else "0-1"
                reason = f"{_SIDE[winner]} mates"
            else:
                result, reason = "1/2-1/2", _RULE_REASON[status]
            termination = "normal"
            break
        if verdict is not None:
            termination = "adjudication"
            if verdict == "draw":
                result, reason = "1/2-1/2", "Draw by adjudication"
            else:
                result = "1-0" if verdict == 0 else "0-1"
                reason = f"{_SIDE[verdict]} wins by adjudication"
            break
        side = game.pos.turn
        eng = side_eng[side]
        tc = side_tc[side]
        try:
            t_go = eng.go(game, tc, clocks, incs)
        except Died:
            lose(side, "abandoned", f"{_SIDE[side]} disconnects")
            break
        except NoReply:
            lose(side, "stalled connection", f"{_SIDE[side]}'s connection stalls")
            break
        if tc.clock:
            deadline = t_go + clocks[side] / 1000.0 + margin
        elif tc.movetime:
            deadline = t_go + tc.movetime / 1000.0 + margin
        else:
            deadline = t_go + move_timeout
        try:
            t_move, text = eng.wait_move(deadline)
        except Died:
            lose(side, "abandoned", f"{_SIDE[side]} disconnects")
            break
        except NoReply:
            if tc.clock or tc.movetime:
                lose(side, "time forfeit", f"{_SIDE[side]} loses on time")
            else:
                lose(side, "stalled connection", f"{_SIDE[side]}'s connection stalls")
            break
        except Forfeit as f:
            if f.kind == "resign":
                result = "0-1" if side == 0 else "1-0"
                termination, reason = "normal", f"{_SIDE[side]} resigns"
            else:
                lose(side, "adjudication", f"{_SIDE[side]} claims a legal move is illegal ({f.text})")
            break
        elapsed = t_move - t_go
        if tc.clock:
            clocks[side] -= elapsed * 1000.0
            if clocks[side] < -timemargin_ms:
                lose(side, "time forfeit", f"{_SIDE[side]} loses on time")
                break
            clocks[side] += tc.inc * 1000.0
        elif tc.movetime and elapsed * 1000.0 > tc.movetime + timemargin_ms:
            lose(side, "time forfeit", f"{_SIDE[side]} loses on time")
            break
        try:
            mv = game.parse(text, zero_based=eng.proto == "xboard")
        except ValueError:
            lose(side, "illegal move", f"{_SIDE[side]} makes an illegal move: {text or '(none)'}")
            break
        game.push(mv, eng.move_comment(elapsed))
        if adj is not None:
            verdict = adj.add(side, eng.info.get("score"), eng.info.get("depth"), len(game.san))
    # tell the engines the game is over (XBoard: force/result/ping); a failure here changes nothing
    for s in (0, 1):
        e = side_eng[s]
        if fault is not None and e is engines[fault]:
            continue
        try:
            e.end_game(result, reason)
        except (Died, NoReply):
            pass
    return GameRecord(round=round_no, white=side_eng[0].label, black=side_eng[1].label,
                      white_index=white_index, variant=variant, start_fen=game.start_fen,
                      standard_start=game.standard_start, first_fullmove=game.first_fullmove,
                      first_turn=game.first_turn, san=list(game.san), uci=list(game.uci),
                      comments=list(game.comments), result=result, termination=termination,
                      reason=reason, fault=fault, date=_dt.date.today().strftime("%Y.%m.%d"))
