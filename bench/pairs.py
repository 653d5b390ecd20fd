"""Game pairs: the unit of work and of record of ``cardinal match``.

A pair is one opening played twice with the colours reversed (round ``2k+1``: the
first engine has White; round ``2k+2``: the second one has). Pairs are what the
local thread pool and the Dask workers run (:func:`play_pair`), what the results
journal records, and what the pentanomial statistics count (a pair's two games
share an opening, so they are not independent; the pair is the sample).

:func:`schedule` turns a seed, the openings and the number of games into the
list of :class:`PairTask` (pair ``k`` always gets the same opening for the same
seed, so ``--resume`` finds the same remaining openings).
"""
from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import dataclass, field

from bench import stats
from bench.adjudication import Adjudication
from bench.engines import EngineError, start_engine
from bench.openings import Opening
from bench.referee import GameRecord, play_game

DEFAULT_SEED = None          # no seed: the openings in their order (cutechess-cli's order=sequential)


@dataclass(frozen=True)
class PairTask:
    """Pair ``pair`` (0-based id): ``opening`` and its games ``((round, white_index), ...)``;
    the last pair of an odd ``--games`` has one game. ``options``: empty, or per engine the
    ``((name, value), ...)`` sent by ``setoption`` before each game (SPSA's values)."""
    pair: int
    opening: Opening
    rounds: tuple
    options: tuple = ()


def schedule(openings: list, games: int, seed: int | None) -> list[PairTask]:
    """All pairs of a match of ``games`` games. Without a seed the openings are taken in
    their order (cycling); with one, in a random order drawn from ``seed`` (a fresh
    permutation for each pass through the list)."""
    rng = random.Random(seed) if seed is not None else None
    n_pairs = (games + 1) // 2
    order: list[int] = []
    while len(order) < n_pairs:
        idx = list(range(len(openings)))
        order += rng.sample(idx, len(idx)) if rng is not None else idx
    out = []
    for k in range(n_pairs):
        rounds = tuple((r, r - 2 * k - 1) for r in (2 * k + 1, 2 * k + 2) if r <= games)
        out.append(PairTask(k, openings[order[k]], rounds))
    return out


@dataclass
class GameSettings:
    """What a pair needs besides its task, the same for every pair of a match (and
    sent to every Dask worker): the engines (``specs``, ``names``), each engine's time
    control (``tcs``), the referee's margins and the adjudication."""
    match_id: str
    variant: str
    specs: list
    names: list
    tcs: list
    timemargin_ms: float = 20.0
    move_timeout: float = 60.0
    handshake_timeout: float = 35.0
    ready_timeout: float = 60.0
    adjudication: Adjudication | None = None


@dataclass
class PairResult:
    """A pair as a worker returns it: the finished games (in round order), whether both
    (or the one) were played to the end, and where/when it ran."""
    pair: int
    games: list
    complete: bool
    worker: str = "local"
    pid: int = 0
    started: float = 0.0
    finished: float = 0.0
    warnings: list = field(default_factory=list)


class EngineSlot:
    """The two engines of one game slot (a local thread or a Dask worker thread),
    started once and reused from pair to pair; an engine that forfeited a game is
    restarted before the next one."""

    def __init__(self, settings: GameSettings, warn=None, debug=None):
        self.settings = settings
        self.warn, self.debug = warn, debug
        self.engines: list = [None, None]
        self.busy = False

    def start(self) -> list:
        """Start the engines not running (raises :class:`EngineError`)."""
        s = self.settings
        for i in (0, 1):
            if self.engines[i] is None:
                e = start_engine(s.specs[i], s.names[i], s.variant, debug=self.debug,
                                 handshake_timeout=s.handshake_timeout, ready_timeout=s.ready_timeout,
                                 warn=self.warn)
                e.label = s.names[i]
                e.proc.label = s.names[i]
                self.engines[i] = e
        return self.engines

    def drop(self, i: int) -> None:
        if self.engines[i] is not None:
            self.engines[i].proc.kill()
            self.engines[i] = None

    def close(self) -> None:
        for i, e in enumerate(self.engines):
            if e is not None:
                try:
                    e.quit()
                except Exception:
                    e.proc.kill()
                self.engines[i] = None


def play_pair(slot: EngineSlot, settings: GameSettings, task: PairTask,
              stop: threading.Event | None = None, on_game=None) -> PairResult:
    """Play the games of ``task`` with the slot's engines. ``complete`` is False when
    ``stop`` ended a game early (the user stopped the match: a game that ends after
    ``stop`` was set is dropped, its end may be the stop itself). ``on_game(pair, record)``
    is called for each finished game. Raises :class:`EngineError` when an engine cannot
    be (re)started."""
    res = PairResult(task.pair, [], False, pid=os.getpid(), started=time.time())
    for rnd, white_index in task.rounds:
        if stop is not None and stop.is_set():
            return res
        engines = slot.start()
        for e, opts in zip(engines, task.options):
            for name, value in opts:
                e.set_option(name, value)
        rec = play_game(engines, white_index, settings.variant, task.opening, settings.tcs, rnd,
                        settings.timemargin_ms, settings.move_timeout, stop, settings.adjudication)
        if rec is None or (stop is not None and stop.is_set()):
            return res
        if rec.fault is not None:
            slot.drop(rec.fault)
        res.games.append(rec)
        if on_game is not None:
            on_game(task.pair, rec)
    res.complete = True
    res.finished = time.time()
    return res


class Tally:
    """Running totals from the first engine's point of view: W-D-L over games and the
    pentanomial counts ``[LL, LD, DD+WL, WD, WW]`` over complete two-game pairs."""

    def __init__(self):
        self.wins = self.draws = self.losses = 0
        self.penta = [0, 0, 0, 0, 0]

    def add_scores(self, scores: list[float]) -> None:
        for sc in scores:
            if sc == 1.0:
                self.wins += 1
            elif sc == 0.0:
                self.losses += 1
            else:
                self.draws += 1
        if len(scores) == 2:
            self.penta[stats.pair_cell(*scores)] += 1

    def add(self, games: list[GameRecord]) -> None:
        self.add_scores([g.score_for(0) for g in games])

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def pairs(self) -> int:
        return sum(self.penta)

    def snapshot(self, sprt: stats.SPRT | None = None) -> dict:
        """The totals as the journal writes them (JSON-ready; NaN/inf as null)."""
        def num(x):
            return None if x is None or x != x or x in (float("inf"), float("-inf")) else round(x, 4)
        e3, m3 = stats.elo_with_error(self.wins, self.draws, self.losses)
        e5, m5, nelo, los5 = stats.pair_stats(self.penta)      # None: too few pairs (stats.pentanomial_enough)
        out = {"games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
               "pairs": self.pairs, "pentanomial": list(self.penta),
               "elo": num(e5), "elo_error": num(m5), "nelo": num(nelo),
               "los": num(los5), "elo_trinomial": num(e3), "elo_error_trinomial": num(m3)}
        if sprt is not None:
            out["llr"] = num(sprt.llr_pentanomial(self.penta))
            out["llr_bounds"] = [round(b, 4) for b in sprt.bounds]
        return out
