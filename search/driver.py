"""Search driver: iterative deepening in Python around the numba search (one call per iteration).

Public API: :class:`Limits`, :class:`Searcher`.

Threads: :meth:`Searcher.start` runs the search in a worker thread; a watcher
thread sets the shared stop flag at the hard deadline (numba releases the GIL,
``nogil=True``) and posts a progress ``info`` once a second during long
iterations. ``on_info`` is called from the worker or the watcher (never at the
same time: a lock serialises the callbacks); ``on_done`` exactly once, from the
worker.

Lazy SMP (:attr:`Searcher.threads` > 1, UCI ``Threads``, XBoard ``cores``): the
worker is search thread 0, the main thread; it runs the iterative deepening,
aspiration windows, ``info`` output and time management below and alone decides
the best move. ``threads - 1`` helper threads search the same root position, each
on its own copy of the position and with its own buffers (a :class:`SearchState`,
its NNUE accumulator stack included, that shares only the transposition table
``tt`` and the ``stop`` flag with the main thread's), in their own iterative deepening loop over the depths that
:func:`helper_skips` leaves them (Stockfish's skip pattern: with two threads
the helper searches every other depth), until the stop flag is set. They help
only through the shared TT: their results fill it with cutoffs and move hints
the main thread finds one iteration later. When the main thread finishes (or
the deadline, ``stop`` or the node limit stops it) it sets the shared stop flag
and joins the helpers before ``on_done``. Node counts in ``info`` (``nodes``,
``nps``) are the sum over the threads, and ``go nodes N`` limits that sum: each
thread gets ``N`` as its own limit, and the threads count their nodes into the shared
``stop`` array and set the stop flag once the sum reaches ``N`` (within one 1024-node poll
per thread, however busy the machine; see ``search.core._tick``). With one thread nothing
of this runs: the search is exactly the single-threaded one (``cardinal bench``
is single-threaded).

The evaluation: the linear one (:mod:`search.eval`), or the NNUE network set by
:meth:`Searcher.set_net` (:mod:`search.nnue`; the same compiled search, switched by
``info[I_NNUE]``); a change of network clears the hash table, whose entries cache
static evaluations.

Races, on purpose: TT entries are written field by field without a lock, so a
thread can read an entry another thread is writing (a torn entry: the key of
one position with the move, score or cached eval of another). The harm is
bounded: a TT move is searched before move generation only once
``is_legal_move`` accepts it in this position, and otherwise it only orders the
generated legal moves (an illegal move is never played); a wrong score, bound or
eval gives at worst a rare wrong cutoff or pruning decision, as a key collision
would. The node counters of the helpers are read while they
count (an ``int64`` read: at worst a count a few nodes old).
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
from .eval import build_eval, WS_SIZE
from . import params as P
from . import skill as SK
from . import nnue as N
from .limits import Limits, MAX_DEPTH  # noqa: F401  (re-exported: search.driver.Limits is the public name)
from .timeman import allocate, next_iteration_ok, CHANGE_DECAY, MOVE_OVERHEAD_DEFAULT
from .tt import HASH_MIN_MB, HASH_MAX_MB, hashfull, tt_alloc

MAX_MULTIPV = 5
THREADS_MIN, THREADS_MAX = 1, 64   # search threads (UCI Threads / XBoard cores)
# Stockfish's helper-depth skip pattern (helper i skips a depth when
# ((depth + game ply + PHASE[i]) // SIZE[i]) is odd), so the helpers spread over the depths.
SKIP_SIZE = (1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4)
SKIP_PHASE = (0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7)
_DEFAULT_PARAMS = P.Params()      # the defaults, for a SearchState used on its own
BOUND_INFO_AFTER_MS = 3000   # aspiration fail-high/low info lines only in long searches (as Stockfish)


class SearchState:
    """Preallocated buffers for the numba search (shapes in :mod:`search.core`)."""

    def __init__(self, hash_mb: int = 16, tt=None):
        self.tt = tt_alloc(hash_mb) if tt is None else tt   # a helper thread's state shares the main one's
        self.moves = np.zeros(C.MAX_PLY * G.MAX_MOVES, dtype=np.int32)
        self.scores = np.zeros(C.MAX_PLY * G.MAX_MOVES, dtype=np.int32)
        self.pv = np.zeros((C.MAX_PLY + 1, C.MAX_PLY + 1), dtype=np.int32)
        self.pvlen = np.zeros(C.MAX_PLY + 2, dtype=np.int32)
        self.ss = C.ss_alloc()      # the search stack: a record per ply (search.core.SS_DTYPE)
        self.hist_h = np.zeros((32, L.NSQ), dtype=np.int32)
        self.cont = np.zeros((C.CMH_SIZE, C.CMH_SIZE), dtype=np.int16)
        self.counter = np.zeros(C.CMH_SIZE, dtype=np.int32)
        self.capt = np.zeros((C.CMH_SIZE, 16), dtype=np.int16)
        self.info = np.zeros(C.INFO_SIZE, dtype=np.int64)
        self.stop = np.zeros(3, dtype=np.int64)   # flag, shared node limit, nodes towards it (search.core)
        self.excl = np.zeros(8, dtype=np.int32)
        self.ws = np.zeros(WS_SIZE, dtype=np.int32)
        self.tried = np.zeros((C.SS_SIZE, C.TRIED_SIZE), dtype=np.int32)   # per ply: moves searched (search.core)
        self.gen = 0
        self.net = N.dummy_net()     # the NNUE network and its accumulator stack (search.core)
        self.acc = np.zeros((C.SS_SIZE, 2, 1), dtype=np.int16)
        self.nnue = C.NNUE_OFF       # info[I_NNUE] of the searches on these buffers
        self.use_params(_DEFAULT_PARAMS.values(None), _DEFAULT_PARAMS.arrays(None))

    def use_params(self, values: dict, arrays) -> None:
        """Search with the tunable constants ``values`` (:mod:`search.params`) and their arrays
        array ``prm`` (:meth:`search.params.Params.arrays`; shared, never written)."""
        self.prm = arrays
        self.asp_delta = int(values["ASP_DELTA"])

    def use_net(self, net) -> None:
        """Evaluate with ``net`` (a :data:`search.nnue.NnueNet`; ``None``: the linear evaluation)
        from the next iteration on (the TT's cached evaluations are the caller's to clear)."""
        if net is None:
            self.net, self.nnue = N.dummy_net(), C.NNUE_OFF
            return
        self.net = N.play_net(net)
        self.nnue = C.NNUE_ON
        shape = (C.SS_SIZE, 2, int(self.net.meta[N.M_H]))
        if self.acc.shape != shape:
            self.acc = np.zeros(shape, dtype=np.int16)

    def clear(self):
        self.tt[:] = np.zeros(1, dtype=self.tt.dtype)
        self.clear_history()
        self.gen = 0

    def clear_history(self):
        """Forget the move-ordering statistics (histories, counter moves, killers)."""
        self.hist_h[:] = 0
        self.cont[:] = 0
        self.counter[:] = 0
        self.capt[:] = 0
        C.ss_clear_killers(self.ss)

    def ctx(self, pos, ev) -> SearchCtx:
        """These buffers and ``pos``'s arrays as the :data:`search.core.SearchCtx` of a search."""
        return SearchCtx(pos.board, pos.st, pos.stack, pos.hist, pos.vt, pos.zob, self.tt, ev,
                         self.moves, self.scores, self.pv, self.pvlen, self.ss, self.hist_h,
                         self.info, self.stop, self.excl, self.ws, self.cont, self.counter, self.capt,
                         self.tried, self.prm, self.net, self.acc)

    def iterate(self, pos, ev, alpha: int, beta: int, depth: int) -> int:
        """One numba iteration on ``pos`` (its arrays are modified and restored), with the
        evaluation chosen by :meth:`use_net`."""
        self.info[C.I_NNUE] = self.nnue
        return int(search_root(self.ctx(pos, ev), alpha, beta, depth))

    def aspiration(self, pos, ev, d: int, prev: int, on_bound=None):
        """Search depth ``d`` in an aspiration window around ``prev`` (from depth 4), widening
        it on a fail; ``on_bound(score, 'upper'|'lower')`` is told of each fail.
        Returns ``(score, aborted)``."""
        # aspiration window around the previous score of this line
        delta = self.asp_delta  # about a fifth of a pawn: typical iteration-to-iteration change
        if d >= 4 and abs(prev) < C.MATE_BOUND:
            alpha, beta = max(prev - delta, -C.INF), min(prev + delta, C.INF)
        else:
            alpha, beta = -C.INF, C.INF
        while True:
            sc = self.iterate(pos, ev, alpha, beta, d)
            if self.info[C.I_ABORT]:
                return sc, True
            if on_bound is not None and ((sc <= alpha and alpha > -C.INF) or (sc >= beta and beta < C.INF)):
                on_bound(sc, "upper" if sc <= alpha else "lower")
            if sc <= alpha and alpha > -C.INF:
                alpha = max(sc - delta, -C.INF)
                beta = (alpha + beta) // 2 if beta < C.INF else beta
            elif sc >= beta and beta < C.INF:
                beta = min(sc + delta, C.INF)
            else:
                return sc, False
            delta *= 2
            if delta > 600:
                alpha, beta = -C.INF, C.INF


def helper_skips(idx: int, depth: int, game_ply: int) -> bool:
    """True if helper thread ``idx`` (1, 2, ...) skips iteration ``depth`` (Stockfish's pattern)."""
    i = (idx - 1) % len(SKIP_SIZE)
    return ((depth + game_ply + SKIP_PHASE[i]) // SKIP_SIZE[i]) % 2 == 1


def _clip_cp(s: int) -> int:
    """A root score for time management: mate scores count as +-1000 cp."""
    return max(-1000, min(1000, int(s)))


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
        self._threads = 1
        self._run_threads = 1          # the thread count of the running (or last) search
        self._helper_states = []       # one SearchState per helper thread, kept between searches
        self._helpers = []             # (thread, state) of the running (or last) search's helpers
        self._last_score = None        # the last move's root score (time management), None after ucinewgame
        self.params = P.Params()       # the tunable constants (search.params): defaults, variant files, set()
        self._net = None               # the NNUE network the searches evaluate with (None: the linear evaluation)
        if not HASH_MIN_MB <= hash_mb <= HASH_MAX_MB:
            raise ValueError(f"hash size {hash_mb!r} MiB out of range {HASH_MIN_MB}..{HASH_MAX_MB}")

    # ------------------------------------------------------------ settings
    @property
    def state(self) -> SearchState:
        if self._state is None:
            self._state = SearchState(self._hash_mb)
        return self._state

    @property
    def threads(self) -> int:
        """Search threads (Lazy SMP, see the module docstring); 1 is the single-threaded search."""
        return self._threads

    @threads.setter
    def threads(self, n: int) -> None:
        """Takes effect at the next search; ``ValueError`` unless ``THREADS_MIN <= n <= THREADS_MAX``."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not THREADS_MIN <= n <= THREADS_MAX:
            raise ValueError(f"thread count {n!r} out of range {THREADS_MIN}..{THREADS_MAX}")
        self._threads = int(n)

    def resize_hash(self, mb: int) -> None:
        """Reallocate the TT to ``mb`` MiB (1..4096, else ``ValueError``); waits for a running search."""
        tt = tt_alloc(mb)
        self.stop()
        self.wait()
        self._hash_mb = mb
        if self._state is not None:
            self._state.tt = tt
        for h in self._helper_states:   # (no reference to the old table may keep it alive)
            h.tt = tt

    @property
    def net(self):
        """The NNUE network of the searches (a :data:`search.nnue.NnueNet`), ``None`` for the
        linear evaluation."""
        return self._net

    def set_net(self, net) -> None:
        """Search with the network ``net`` (``None``: the linear evaluation) from the next search
        on, a net for the variant of the positions searched (the caller checks: ``read_net``
        with the variant). A change of network clears the hash table, which caches static
        evaluations. Waits for a running search."""
        self.stop()
        self.wait()
        changed = net is not self._net
        self._net = net
        if changed:
            self.clear_hash()

    def clear_hash(self) -> None:
        """Empty the TT, history and killers (UCI ``ucinewgame``)."""
        self.stop()
        self.wait()
        if self._state is not None:
            self._state.clear()
        self._last_score = None
        for h in self._helper_states:   # (their tt is the main one's, cleared above)
            h.clear_history()

    def warm_up(self) -> None:
        """Compile/load every numba function the search uses (a tiny search per variant)."""
        st = SearchState(1)
        for v in _variants.names():
            pos = Position.from_fen(None, v)
            st.info[:] = 0
            st.ss[:] = 0
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
        self._run_threads = self._threads
        self._helpers = []
        # go nodes N with helpers: the limit is on the sum over the threads, counted in the search
        st.stop[1] = limits.nodes if (self._run_threads > 1 and limits.nodes) else 0
        st.stop[2] = 0
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

    def search_sync(self, pos, limits: Limits, on_info=None):
        """Search ``pos`` in the calling thread and return ``(best, ponder)`` (moves or None), calling
        ``on_info`` as :meth:`start` does at the end of each iteration.

        For searches that end by themselves without a clock (``nodes``, ``depth``, ``mate`` limits,
        one thread): self-play data, tuning and benchmarks, where the worker and watcher threads
        of :meth:`start` cost about a millisecond a search (a fifth of a 5,000-node grand search).
        The same search as :meth:`start` gives, move for move. Limits with a clock, ``ponder``,
        ``infinite`` or helper threads go through :meth:`start` and :meth:`wait`."""
        on_info = on_info or (lambda d: None)
        if (limits.ponder or limits.infinite or limits.movetime is not None or limits.wtime is not None
                or limits.btime is not None or self._threads > 1):
            out = []
            self.start(pos, limits, on_info, lambda b, p: out.append((b, p)))
            self.wait()
            return out[0] if out else (None, None)
        if self.running:
            self.stop()
            self.wait()
        st = self.state
        st.stop[0] = st.stop[1] = st.stop[2] = 0
        self._stopped = False
        self._limits = limits
        self._cur_side = pos.turn
        self._pondering = False
        self._t0 = self._t_search = time.perf_counter()
        self._soft = self._hard = None
        self._progress = None
        self._run_threads = 1
        self._helpers = []
        work = pos.copy()
        try:
            return self._think(work, limits, on_info)
        except Exception as e:  # as _run: never kill the caller, fall back to any legal move
            print(f"info string search error: {e!r}", file=sys.stderr)
            lm = work.legal_moves()
            return (lm[0] if lm else None), None

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
                    info.pop("thread_nodes", None)
                    per = self._thread_nodes()
                    nodes = sum(per)
                    ms = self._search_ms()
                    info.update(nodes=nodes, time=int(ms), nps=int(nodes * 1000 / max(ms, 1.0)),
                                hashfull=self._hashfull())
                    if len(per) > 1:
                        info["thread_nodes"] = per
                    with self._lock:
                        if not done.is_set():
                            try:
                                on_info(info)
                            except Exception:
                                pass
                next_info += 1000.0
            done.wait(wait / 1000.0)

    def _thread_nodes(self) -> tuple:
        """Nodes of the current search per thread, the main thread first (the ``info`` dicts
        carry it as ``thread_nodes`` when helpers run; their ``nodes`` is the sum)."""
        return (int(self._state.info[C.I_NODES]),) + tuple(int(h.info[C.I_NODES]) for _, h in self._helpers)

    def _start_helpers(self, pos, ev, maxd: int) -> None:
        """Start ``threads - 1`` helper threads on copies of ``pos`` (after the main thread's
        ``info`` limits are set: the helpers take theirs from it)."""
        n = self._run_threads - 1
        if n <= 0:
            return
        st = self._state
        while len(self._helper_states) < n:
            self._helper_states.append(SearchState(tt=st.tt))
        helpers = []
        for idx, h in enumerate(self._helper_states[:n], start=1):
            h.tt, h.stop, h.gen = st.tt, st.stop, st.gen   # shared: the TT and the stop flag
            h.prm, h.asp_delta = st.prm, st.asp_delta   # and the tuned constants
            h.info[:] = 0
            for k in (C.I_NODELIMIT, C.I_GEN, C.I_MAXPLY):
                h.info[k] = st.info[k]
            h.ss[:] = 0             # the search stack, killers included
            h.hist_h //= 2
            h.use_net(self._net)     # its own accumulator stack
            t = threading.Thread(target=self._helper_run, args=(idx, h, pos.copy(), ev, maxd),
                                 name=f"cardinal-helper-{idx}", daemon=True)
            helpers.append((t, h))
        self._helpers = helpers
        for t, _ in helpers:
            t.start()

    @staticmethod
    def _helper_run(idx, h, pos, ev, maxd):
        """A helper thread: iterative deepening over the depths it does not skip, until stopped."""
        try:
            prev = 0
            ply = pos.ply
            for d in range(1, maxd + 1):
                if h.stop[0]:
                    break
                if helper_skips(idx, d, ply):
                    continue
                h.info[C.I_SELDEPTH] = 0
                sc, aborted = h.aspiration(pos, ev, d, prev)
                if aborted:
                    break
                prev = sc
        except Exception as e:   # the main thread's move does not depend on a helper
            print(f"info string search error (helper thread {idx}): {e!r}", file=sys.stderr)

    def _stop_helpers(self) -> None:
        """Set the shared stop flag and join the helper threads (the main thread has finished)."""
        if not self._helpers:
            return
        self._state.stop[0] = 1
        for t, _ in self._helpers:
            t.join()

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
            self._stop_helpers()
        except Exception as e:
            print(f"info string search error: {e!r}", file=sys.stderr)
        self._state.stop[1] = 0   # the shared node limit was this search's: direct iterate() calls have none
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
        tuned = self.params.values(pos.variant.name)
        st.use_params(tuned, self.params.arrays(pos.variant.name))
        st.use_net(self._net)
        st.gen = (st.gen + 1) & 63
        info = st.info
        info[:] = 0
        info[C.I_NODELIMIT] = limits.nodes if limits.nodes else (1 << 62)
        info[C.I_GEN] = st.gen
        info[C.I_MAXPLY] = max(2, min(C.MAX_PLY, L.MAX_GAME_PLIES - pos.ply - 4))
        st.ss[:] = 0               # the search stack, killers included
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
        self._start_helpers(pos, ev, maxd)
        done_lines = []
        timed = limits.movetime is not None or (limits.wtime if pos.turn == 0 else limits.btime) is not None
        best, ponder = legal[0], None
        prev = [0] * npv
        changes, stable, prev_best, prev_sc = 0.0, 0, None, None   # time management's inputs
        for d in range(1, maxd + 1):
            lines = []
            aborted = False
            for k in range(npv):
                excl = [ln[1][0] for ln in lines]
                info[C.I_NEXCL] = k
                for j, m in enumerate(excl):
                    st.excl[j] = m
                info[C.I_SELDEPTH] = 0
                sc, aborted = st.aspiration(pos, ev, d, prev[k],
                                            lambda sc_, bound, k=k: self._bound_info(pos, on_info, d, k, sc_, bound))
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
            per = self._thread_nodes()
            nodes = sum(per)
            lines.sort(key=lambda t: -t[0])
            for k, (sc, pv) in enumerate(lines[:shown]):
                inf = dict(depth=d, seldepth=int(max(info[C.I_SELDEPTH], d)), multipv=k + 1,
                           score=score_tuple(sc), nodes=nodes, nps=int(nodes * 1000 / max(el, 1.0)),
                           time=int(el), hashfull=self._hashfull(), pv=[pos.uci(m) for m in pv], bound=None)
                if len(per) > 1:
                    inf["thread_nodes"] = per
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
            # time management's inputs: best-move changes (decayed), stable iterations, score drop
            changes *= CHANGE_DECAY
            if prev_best is not None and best != prev_best:
                changes += 1.0
                stable = 0
            else:
                stable += 1
            falling = 0
            if prev_sc is not None:
                falling += _clip_cp(prev_sc) - _clip_cp(sc0)
            if self._last_score is not None:
                falling += _clip_cp(self._last_score) - _clip_cp(sc0)
            prev_best, prev_sc = best, sc0
            if not self._pondering and not limits.infinite:
                if timed and len(legal) == 1:
                    break
                soft = self._soft
                if soft is not None and not next_iteration_ok(self._elapsed_ms(), soft, falling, changes, stable,
                                                              tuned):
                    break
                if timed and abs(sc0) > C.MATE_BOUND and d >= 2 * (C.MATE - abs(sc0)) + 4:
                    break  # a mate is proven well inside the horizon
        if done_lines:
            self._last_score = done_lines[0][0]
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
        per = self._thread_nodes()
        nodes = sum(per)
        pv = self._root_pv(pos)
        inf = dict(depth=d, seldepth=int(max(st.info[C.I_SELDEPTH], d)), multipv=k + 1,
                   score=score_tuple(sc), nodes=nodes, nps=int(nodes * 1000 / max(el, 1.0)),
                   time=int(el), hashfull=self._hashfull(), pv=[pos.uci(m) for m in pv], bound=bound)
        if len(per) > 1:
            inf["thread_nodes"] = per
        with self._lock:
            try:
                on_info(inf)
            except Exception:  # a broken callback must not cost the move
                pass

    @staticmethod
    def _clean_pv(pos, pv):
        """Truncate the PV at the first move that is not legal (a truncated or colliding line).

        Called for every ``info`` line: one move generation per PV move
        (:meth:`Position.is_legal`, then the unchecked ``_push``)."""
        out = []
        p = pos.copy()
        for m in pv:
            if m == 0 or not p.is_legal(m):
                break
            p._push(m)
            out.append(m)
        return out
