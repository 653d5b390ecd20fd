"""Search driver: iterative deepening in Python around the numba search (one call per iteration).

Public API: :class:`Limits`, :class:`Searcher`.

Threads: :meth:`Searcher.start` runs the search in a worker thread; a watcher
thread sets the shared stop flag at the hard deadline (numba releases the GIL,
``nogil=True``) and posts a progress ``info`` once a second during long
iterations. ``on_info`` is called from the worker or the watcher (never at the
same time: a lock serialises the callbacks); ``on_done`` exactly once, from the
worker.
"""
from __future__ import annotations

import sys
import threading
import time

import numpy as np

from engine.rules import layout as L
from engine.rules import movegen as G
from engine.rules.position import Position
import variants as _variants
from . import core as C
from .core import SearchCtx, search_root
from .eval import build_eval
from . import skill as SK
from .limits import Limits, MAX_DEPTH  # noqa: F401  (re-exported: search.driver.Limits is the public name)
from .timeman import allocate, MOVE_OVERHEAD_DEFAULT
from .tt import HASH_MIN_MB, HASH_MAX_MB, hashfull, tt_alloc

MAX_MULTIPV = 5
BOUND_INFO_AFTER_MS = 3000   # aspiration fail-high/low info lines only in long searches (as Stockfish)


class SearchState:
    """Preallocated buffers for the numba search (shapes in :mod:`search.core`)."""

    def __init__(self, hash_mb: int = 16):
        self.tt = tt_alloc(hash_mb)
        self.moves = np.zeros(C.MAX_PLY * G.MAX_MOVES, dtype=np.int32)
        self.scores = np.zeros(C.MAX_PLY * G.MAX_MOVES, dtype=np.int32)
        self.pv = np.zeros((C.MAX_PLY + 1, C.MAX_PLY + 1), dtype=np.int32)
        self.pvlen = np.zeros(C.MAX_PLY + 2, dtype=np.int32)
        self.killers = np.zeros((C.MAX_PLY + 1, 2), dtype=np.int32)
        self.hist_h = np.zeros((32, L.NSQ), dtype=np.int32)
        self.cont = np.zeros((C.CMH_SIZE, C.CMH_SIZE), dtype=np.int16)
        self.counter = np.zeros(C.CMH_SIZE, dtype=np.int32)
        self.info = np.zeros(C.INFO_SIZE, dtype=np.int64)
        self.stop = np.zeros(1, dtype=np.int64)
        self.excl = np.zeros(8, dtype=np.int32)
        self.ws = np.zeros(64, dtype=np.int32)
        self.gen = 0

    def clear(self):
        self.tt[:] = np.zeros(1, dtype=self.tt.dtype)
        self.hist_h[:] = 0
        self.cont[:] = 0
        self.counter[:] = 0
        self.killers[:] = 0
        self.gen = 0

    def iterate(self, pos, ev, alpha: int, beta: int, depth: int) -> int:
        """One numba iteration on ``pos`` (its arrays are modified and restored)."""
        ctx = SearchCtx(pos.board, pos.st, pos.stack, pos.hist, pos.vt, pos.zob, self.tt, ev,
                        self.moves, self.scores, self.pv, self.pvlen, self.killers, self.hist_h,
                        self.info, self.stop, self.excl, self.ws, self.cont, self.counter)
        return int(search_root(ctx, alpha, beta, depth))


def score_tuple(s: int):
    """Engine score -> ``('cp', cp)`` or ``('mate', moves)`` (negative moves: getting mated)."""
    if s > C.MATE_BOUND:
        return ("mate", (C.MATE - s + 1) // 2)
    if s < -C.MATE_BOUND:
        return ("mate", -((C.MATE + s) // 2))
    return ("cp", int(s))


class Searcher:
    """Owns the TT and buffers; runs one search at a time in a worker thread."""

    def __init__(self, hash_mb: int = 16):
        self.multipv = 1
        self.skill_level = SK.FULL          # UCI Skill Level: below FULL, shallower and a seeded pick
        self._skill_rng = SK.rng()
        self.move_overhead = MOVE_OVERHEAD_DEFAULT
        self.bound_info_after_ms = BOUND_INFO_AFTER_MS
        self._hash_mb = hash_mb
        self._state = None
        self._thread = None
        self._watch = None
        self._lock = threading.RLock()         # serialises on_info / on_done callbacks
        self._wake = threading.Event()         # stop or ponderhit happened
        self._done = threading.Event()
        self._done.set()
        self._stopped = False
        self._pondering = False
        self._t0 = 0.0
        self._t_search = 0.0
        self._soft = None
        self._hard = None
        self._progress = None
        if not HASH_MIN_MB <= hash_mb <= HASH_MAX_MB:
            raise ValueError(f"hash size {hash_mb!r} MiB out of range {HASH_MIN_MB}..{HASH_MAX_MB}")

    # ------------------------------------------------------------ settings
    @property
    def state(self) -> SearchState:
        if self._state is None:
            self._state = SearchState(self._hash_mb)
        return self._state

    def resize_hash(self, mb: int) -> None:
        """Reallocate the TT to ``mb`` MiB (1..4096, else ``ValueError``); waits for a running search."""
        tt = tt_alloc(mb)
        self.stop()
        self.wait()
        self._hash_mb = mb
        if self._state is not None:
            self._state.tt = tt

    def clear_hash(self) -> None:
        """Empty the TT, history and killers (UCI ``ucinewgame``)."""
        self.stop()
        self.wait()
        if self._state is not None:
            self._state.clear()

    def warm_up(self) -> None:
        """Compile/load every numba function the search uses (a tiny search per variant)."""
        st = SearchState(1)
        for v in _variants.names():
            pos = Position.from_fen(None, v)
            st.info[:] = 0
            st.info[C.I_NODELIMIT] = 1 << 40
            st.info[C.I_MAXPLY] = 64
            for d in (1, 2, 3):
                st.iterate(pos, build_eval(v), -32000, 32000, d)
        Position.from_fen(None, "grand").status()  # used by the protocol after every move

    # ------------------------------------------------------------ control
    @property
    def running(self) -> bool:
        return not self._done.is_set()

    def wait(self, timeout: float | None = None) -> None:
        self._done.wait(timeout)

    def stop(self) -> None:
        """Set the stop flag; ``on_done`` follows within ~20 ms."""
        self._stopped = True
        if self._state is not None:
            self._state.stop[0] = 1
        self._wake.set()

    def ponderhit(self) -> None:
        """The pondered move was played: the clock starts now and normal limits apply."""
        if not self._pondering:
            return
        self._t0 = time.perf_counter()
        self._set_deadlines(self._limits)
        self._pondering = False
        self._wake.set()

    def start(self, pos, limits: Limits, on_info, on_done) -> None:
        """Search a copy of ``pos`` in a worker thread; returns at once (see the module contract)."""
        if self.running and threading.current_thread() is not self._thread:
            self.stop()
            self.wait()
        st = self.state
        st.stop[0] = 0
        self._stopped = False
        self._wake.clear()
        done = threading.Event()   # one per search: an old worker finishing late cannot end a new search
        self._done = done
        self._limits = limits
        self._cur_side = pos.turn        # the clock of the side to move (before the watcher starts)
        self._pondering = bool(limits.ponder)
        self._t0 = self._t_search = time.perf_counter()
        self._soft = self._hard = None
        if not self._pondering:
            self._set_deadlines(limits)
        self._progress = None
        work = pos.copy()
        # Locals, not attributes, are started: a fast search whose on_done starts the next
        # search replaces self._thread/self._watch before this call returns.
        worker = threading.Thread(target=self._run, args=(work, limits, on_info, on_done, done),
                                  name="cardinal-search", daemon=True)
        watch = threading.Thread(target=self._watcher, args=(on_info, done), name="cardinal-watch",
                                 daemon=True)
        self._thread, self._watch = worker, watch
        watch.start()
        worker.start()

    # ------------------------------------------------------------ internals
    def _set_deadlines(self, limits):
        side = self._side
        soft, hard = allocate(limits, side, self.move_overhead)
        self._soft, self._hard = soft, hard

    @property
    def _side(self):
        return getattr(self, "_cur_side", 0)

    def _elapsed_ms(self) -> float:
        """Milliseconds on the clock: since go, or since ponderhit when pondering."""
        return (time.perf_counter() - self._t0) * 1000.0

    def _search_ms(self) -> float:
        """Milliseconds since the search started (pondering included): info time and nps."""
        return (time.perf_counter() - self._t_search) * 1000.0

    def _watcher(self, on_info, done):
        """Set the stop flag at the hard deadline; post progress info once a second."""
        next_info = 1000.0
        st = self._state
        while not done.is_set():
            el = self._elapsed_ms()
            hard = self._hard
            if hard is not None and not self._pondering and el >= hard:
                st.stop[0] = 1
            wait = 50.0
            if hard is not None and not self._pondering:
                wait = min(wait, max(0.5, hard - el))
            if el >= next_info:
                prog = self._progress
                if prog is not None:
                    info = dict(prog)
                    nodes = int(st.info[C.I_NODES])
                    ms = self._search_ms()
                    info.update(nodes=nodes, time=int(ms), nps=int(nodes * 1000 / max(ms, 1.0)),
                                hashfull=self._hashfull())
                    with self._lock:
                        if not done.is_set():
                            try:
                                on_info(info)
                            except Exception:
                                pass
                next_info += 1000.0
            done.wait(wait / 1000.0)

    def _hashfull(self) -> int:
        return hashfull(self._state.tt, self._state.gen)

    def _wait_for_release(self):
        """Infinite / ponder searches do not end by themselves: wait for stop() (or ponderhit -> return)."""
        while not self._stopped and (self._pondering or self._limits.infinite):
            self._wake.wait(0.05)
            self._wake.clear()

    def _run(self, pos, limits, on_info, on_done, done):
        best, ponder = None, None
        try:
            best, ponder = self._think(pos, limits, on_info)
        except Exception as e:  # never kill the engine: fall back to any legal move
            print(f"info string search error: {e!r}", file=sys.stderr)
            try:
                lm = pos.legal_moves()
                best = lm[0] if lm else None
            except Exception:
                best = None
            ponder = None
        try:
            self._wait_for_release()
        finally:
            with self._lock:
                try:
                    on_done(best, ponder)
                finally:
                    done.set()   # after on_done: wait() returning means the result was delivered

    def _think(self, pos, limits, on_info):
        st = self._state
        # the side not to move is in check: capture the king at once
        if pos.opponent_in_check():
            them = 1 - pos.turn
            ksq = int(pos.st[L.S_KSQ + them])
            n = G.gen_pseudo(pos.board, pos.st, pos.vt, pos.buf, 0, G.GEN_ALL)
            for m in pos.buf[:n]:
                if L.move_to(int(m)) == ksq:
                    return int(m), None
        legal = pos.legal_moves()
        if not legal:
            return None, None
        ev = build_eval(pos.variant.name)
        st.gen = (st.gen + 1) & 63
        info = st.info
        info[:] = 0
        info[C.I_NODELIMIT] = limits.nodes if limits.nodes else (1 << 62)
        info[C.I_GEN] = st.gen
        info[C.I_MAXPLY] = max(2, min(C.MAX_PLY, L.MAX_GAME_PLIES - pos.ply - 4))
        st.killers[:] = 0
        st.hist_h //= 2
        maxd = min(MAX_DEPTH, C.MAX_PLY - 2)
        if limits.depth is not None:
            maxd = max(1, min(int(limits.depth), maxd))
        npv = max(1, min(int(self.multipv), MAX_MULTIPV, len(legal)))
        shown = npv                         # lines reported; a weak level searches more
        level = self.skill_level if SK.valid(self.skill_level) else SK.FULL
        if level < SK.FULL:
            maxd = min(maxd, SK.depth_cap(level))
            npv = max(1, min(SK.multipv(level, npv), MAX_MULTIPV, len(legal)))
        done_lines = []
        timed = limits.movetime is not None or (limits.wtime if pos.turn == 0 else limits.btime) is not None
        best, ponder = legal[0], None
        prev = [0] * npv
        for d in range(1, maxd + 1):
            lines = []
            aborted = False
            for k in range(npv):
                excl = [ln[1][0] for ln in lines]
                info[C.I_NEXCL] = k
                for j, m in enumerate(excl):
                    st.excl[j] = m
                info[C.I_SELDEPTH] = 0
                # aspiration window around the previous score of this line
                delta = 18  # about a fifth of a pawn: typical iteration-to-iteration change
                if d >= 4 and abs(prev[k]) < C.MATE_BOUND:
                    alpha, beta = max(prev[k] - delta, -C.INF), min(prev[k] + delta, C.INF)
                else:
                    alpha, beta = -C.INF, C.INF
                while True:
                    sc = st.iterate(pos, ev, alpha, beta, d)
                    if info[C.I_ABORT]:
                        aborted = True
                        break
                    if (sc <= alpha and alpha > -C.INF) or (sc >= beta and beta < C.INF):
                        self._bound_info(pos, on_info, d, k, sc, "upper" if sc <= alpha else "lower")
                    if sc <= alpha and alpha > -C.INF:
                        alpha = max(sc - delta, -C.INF)
                        beta = (alpha + beta) // 2 if beta < C.INF else beta
                    elif sc >= beta and beta < C.INF:
                        beta = min(sc + delta, C.INF)
                    else:
                        break
                    delta *= 2
                    if delta > 600:
                        alpha, beta = -C.INF, C.INF
                if aborted:
                    break
                pv = self._root_pv(pos)
                if not pv:
                    pv = [legal[0]] if k == 0 else [m for m in legal if m not in excl][:1]
                lines.append((sc, pv))
                prev[k] = sc
            if aborted and not lines:
                if d == 1:
                    # stopped before depth 1 finished: take the partial root PV if any
                    if st.pvlen[0] > 0 and int(st.pv[0, 0]) in legal:
                        best = int(st.pv[0, 0])
                break
            el = self._search_ms()
            nodes = int(info[C.I_NODES])
            lines.sort(key=lambda t: -t[0])
            for k, (sc, pv) in enumerate(lines[:shown]):
                inf = dict(depth=d, seldepth=int(max(info[C.I_SELDEPTH], d)), multipv=k + 1,
                           score=score_tuple(sc), nodes=nodes, nps=int(nodes * 1000 / max(el, 1.0)),
                           time=int(el), hashfull=self._hashfull(), pv=[pos.uci(m) for m in pv], bound=None)
                if k == 0:
                    self._progress = inf
                with self._lock:
                    try:
                        on_info(inf)
                    except Exception:  # a broken callback must not cost the move
                        pass
            best = lines[0][1][0]
            ponder = lines[0][1][1] if len(lines[0][1]) > 1 else None
            if aborted:
                break
            done_lines = lines
            # stop conditions between iterations
            if self._stopped or st.stop[0]:
                break
            sc0 = lines[0][0]
            if limits.mate and sc0 > C.MATE_BOUND and (C.MATE - sc0 + 1) // 2 <= limits.mate:
                break
            if not self._pondering and not limits.infinite:
                if timed and len(legal) == 1:
                    break
                soft = self._soft
                if soft is not None and self._elapsed_ms() >= 0.6 * soft:
                    break  # the next iteration takes about twice as long as all before it
                if timed and abs(sc0) > C.MATE_BOUND and d >= 2 * (C.MATE - abs(sc0)) + 4:
                    break  # a mate is proven well inside the horizon
        if level < SK.FULL and len(done_lines) > 1:
            pv = done_lines[SK.pick([sc for sc, _ in done_lines], level, self._skill_rng)][1]
            best, ponder = pv[0], (pv[1] if len(pv) > 1 else None)
        return best, ponder

    def _root_pv(self, pos):
        st = self._state
        return self._clean_pv(pos, [int(x) for x in st.pv[0, :st.pvlen[0]]])

    def _bound_info(self, pos, on_info, d, k, sc, bound):
        """An ``info`` for a failed aspiration window (``bound`` 'lower' on a fail high, 'upper'
        on a fail low), in searches longer than ``bound_info_after_ms``, as Stockfish does."""
        el = self._search_ms()
        if el < self.bound_info_after_ms:
            return
        st = self._state
        nodes = int(st.info[C.I_NODES])
        pv = self._root_pv(pos)
        inf = dict(depth=d, seldepth=int(max(st.info[C.I_SELDEPTH], d)), multipv=k + 1,
                   score=score_tuple(sc), nodes=nodes, nps=int(nodes * 1000 / max(el, 1.0)),
                   time=int(el), hashfull=self._hashfull(), pv=[pos.uci(m) for m in pv], bound=bound)
        with self._lock:
            try:
                on_info(inf)
            except Exception:  # a broken callback must not cost the move
                pass

    @staticmethod
    def _clean_pv(pos, pv):
        """Truncate the PV at the first move that is not legal (a truncated or colliding line)."""
        out = []
        p = pos.copy()
        for m in pv:
            if m == 0 or m not in p.legal_moves():
                break
            p.push(m)
            out.append(m)
        return out
