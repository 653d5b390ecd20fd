"""What both protocol front ends share: warm-up, the Searcher, engine options, formatting.

:class:`Backend` owns the :class:`search.driver.Searcher` (built lazily in a
warm-up thread, so nothing heavy is imported before the protocol's first
answer) and the engine options (Hash in MiB, Move Overhead in ms, MultiPV,
Clear Hash, Threads, Use NNUE, EvalFile). Options set while a search runs are applied when the
next search starts, so the worker never sees a hash table resized under it.

The NNUE network (:meth:`Backend.select_net`) is chosen for the variant being played when the
GUI asks whether the engine is ready (``isready``, ``ping``) and when a search starts: with
``Use NNUE`` on, the file ``EvalFile`` names, or by default the variant's shipped net
``variants/weights/<variant>.nnue`` (a variant without one keeps the linear evaluation, with a
note). A file that cannot be used (missing, truncated, corrupt, made for another variant) is
one error line and the linear evaluation; it is read again only when an option or the variant
changes. A change of network clears the hash table (it caches static evaluations).

Warm-up runs in two steps, each ending in an event:

1. ``core_ready``: the rules core (numba move generator) is loaded and every
   function a :class:`engine.rules.position.Position` needs has been compiled or
   loaded from the cache, for each variant;
2. ``ready``: the Searcher exists and ``warm_up()`` has returned (the engine
   can search; UCI ``isready`` answers ``readyok``).

If the search cannot be built (an import error, say), ``ready`` is still set
and :meth:`start_search` falls back to the first legal move with an
``error`` note, so a GUI is never left waiting for a move.

Cold and warm starts (:mod:`engine.rules.cache`): with a warm numba cache
(:func:`~engine.rules.cache.is_warm`) loading takes about a second, so the
protocol answers at once and the warm-up runs behind it. With a cold cache the
warm-up compiles for 15-35 s; it holds :func:`~engine.rules.cache.compile_lock`
meanwhile (a second cold engine waits for it, then loads the cache instead of
compiling the same code), and marks the cache warm when done. :attr:`Backend.cold`
tells a front end to hold its handshake answer (UCI ``uciok``, XBoard ``feature
done=1``) until the warm-up is done, for at most :data:`HANDSHAKE_WAIT` seconds
from the start: GUIs allow far longer for the handshake (Cute Chess 35 s) than
for a ``readyok``/``pong`` (15 s), and whatever compiling is left after the
handshake answer still has the whole ping window. If even that is not enough (a
machine with every core busy), :meth:`Backend.wait_ping` answers once the rules
core is loaded and :data:`PING_WAIT` seconds have passed, and a search asked for
before the search is compiled waits for it as long as its clock allows (the wait
is taken off the clock), then plays a quick one-ply move (:func:`quick_move`):
a weak first move rather than a forfeit on a ping or clock timeout. A search
asked for while a warm cache is still loading (a ``go`` right after ``uci``,
with no ``isready`` between) waits for the load and searches: the quick move is
only for a compile that cannot end in time (see ``_compile_wait_budget``).
"""
from __future__ import annotations

import dataclasses
import os
import threading
import time

from .common import log, log_exception

import variants as _variants   # plain data: cheap to import before the protocol's first answer
from engine.rules import cache as _cache   # plain Python, no numba: chooses the numba cache directory
from engine.rules import layout as L   # plain Python constants, no numpy
from search.limits import Limits   # plain Python, no numba
from search.timeman import MOVE_OVERHEAD_DEFAULT, allocate   # plain Python, no numba

VARIANTS = _variants.names()

HASH_MIN, HASH_MAX, HASH_DEFAULT = 1, 4096, 16          # MiB (Searcher.resize_hash accepts 1..4096)
OVERHEAD_MIN, OVERHEAD_MAX, OVERHEAD_DEFAULT = 0, 5000, MOVE_OVERHEAD_DEFAULT   # ms (search.timeman)
MULTIPV_MIN, MULTIPV_MAX = 1, 5
SKILL_MIN, SKILL_MAX = 0, 20      # UCI Skill Level (20: full strength; see search/skill.py)
THREADS_MIN, THREADS_MAX, THREADS_DEFAULT = 1, 64, 1   # search threads (Searcher.threads accepts 1..64)
STOP_TIMEOUT = 10.0   # s to wait for on_done after stop() before giving up on a search
HANDSHAKE_WAIT = 28.0   # s from the start, at most, that a cold start holds uciok / done=1 (Cute Chess: 35 s)
PING_WAIT = 10.0        # s, at most, that readyok / pong waits for a compiling search (Cute Chess: 15 s)
COMPILE_WAIT_SHARE = 0.5   # share of a move's time budget a search may wait for the compile to end
USE_NNUE_DEFAULT = False   # no variant's network has passed its SPRT yet
EVALFILE_DEFAULT = "<default>"   # EvalFile: the variant's shipped net, variants/weights/<variant>.nnue
_EVALFILE_DEFAULTS = ("", EVALFILE_DEFAULT, "<empty>")   # values that mean the default (<empty>: Stockfish's)


def canonical_variant(name: str) -> str | None:
    """The canonical variant name for a protocol variant name or alias (``standard`` and
    ``normal`` are chess), or ``None`` if unsupported. Case-sensitive on purpose:
    Cute Chess sends exact lower-case names."""
    return _variants.canonical(name)


def _default_factory(hash_mb: int):
    spec = os.environ.get("CARDINAL_SEARCHER")
    if spec:   # testing hook: "module:callable"
        import importlib   # lazy: only for this testing hook
        mod, _, attr = spec.partition(":")
        return getattr(importlib.import_module(mod), attr or "Searcher")(hash_mb=hash_mb)
    from search.driver import Searcher   # lazy, for start-up speed: imports numba (after `uciok`)
    return Searcher(hash_mb=hash_mb)


class Backend:
    """Warm-up thread, Searcher and options shared by the UCI and XBoard handlers."""

    def __init__(self, out, inp, searcher_factory=None):
        self.out = out
        self.inp = inp
        self.factory = searcher_factory or _default_factory
        self.core_ready = threading.Event()
        self.ready = threading.Event()
        self.core_error: str | None = None
        self.search_error: str | None = None
        self.searcher = None
        self._thread = None
        self._lock = threading.Lock()
        # options (applied at the next search start)
        self.hash_mb = HASH_DEFAULT
        self.move_overhead = OVERHEAD_DEFAULT
        self.multipv = 1
        self.skill_level = SKILL_MAX
        self.threads = THREADS_DEFAULT
        self.params: dict = {}          # tunable search constants set (name: value), applied at the next search
        self._params_changed = False
        self.use_nnue = USE_NNUE_DEFAULT
        self.eval_file = EVALFILE_DEFAULT
        self.net = None                 # the network chosen by select_net (None: the linear evaluation)
        self.net_path = None            # ... and the file it came from
        self._net_key = None            # (use_nnue, eval_file, variant, _net_gen) of that choice
        self._net_gen = 0               # bumped by set_eval_file: the same file is read again
        self._applied_hash = None
        self._clear_pending = False
        self.t_start = time.monotonic()
        self.warmup_seconds: float | None = None
        # A fake searcher (tests, CARDINAL_SEARCHER) compiles nothing: it must not mark the cache warm.
        self._real_search = searcher_factory is None and not os.environ.get("CARDINAL_SEARCHER")
        self._cold: bool | None = None
        _ = self.cold   # decided now, in one thread, before the warm-up thread exists
        self._stop_wait = threading.Event()   # stop() while a search waits for the compile

    @property
    def cold(self) -> bool:
        """True if the numba cache was not known to be warm at the start: the warm-up compiles."""
        if self._cold is None:
            try:
                self._cold = not _cache.is_warm()
            except Exception:
                log_exception("numba cache check")
                self._cold = True
        return self._cold

    # ------------------------------------------------------------ warm-up
    def start_warmup(self) -> None:
        """Start the warm-up thread (once; later calls do nothing)."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._warm, name="cardinal-warmup", daemon=True)
            self._thread.start()

    def _warm(self) -> None:
        t0 = time.monotonic()
        try:
            if not self.cold:
                self._warm_core()
                self._warm_search()
            else:
                # One cold engine compiles at a time; the next one loads what it wrote. Two
                # locks, one per stage, so a second engine gets the rules core (and can answer
                # isready, take positions and play a quick move) while the first one is still
                # compiling the search.
                with _cache.compile_lock(_cache.CORE_LOCK):
                    self._warm_core()
                with _cache.compile_lock():
                    self._warm_search()
                if self._real_search and self.core_error is None and self.search_error is None:
                    _cache.mark_warm()
        except Exception:
            log_exception("warm-up")
        finally:
            self.warmup_seconds = time.monotonic() - t0
            self.core_ready.set()
            self.ready.set()

    def _warm_core(self) -> None:
        try:
            from engine.rules.position import Position   # lazy, for start-up speed: numba
            for v in VARIANTS:
                p = Position.from_fen(None, v)
                mv = p.legal_moves()
                p.push(mv[0])
                p.status()
                p.fen()
                p.pop()
                p.is_check()
                p.opponent_in_check()
        except Exception as e:
            self.core_error = f"rules core failed to load: {e}"
            log_exception("warm-up (rules core)")
        finally:
            self.core_ready.set()

    def _warm_search(self) -> None:
        try:
            if self.core_error is None:
                s = self.factory(hash_mb=self.hash_mb)
                self._applied_hash = self.hash_mb
                s.warm_up()
                self.searcher = s
        except Exception as e:
            self.search_error = f"search unavailable: {e}"
            log_exception("warm-up (search)")
        finally:
            self.ready.set()

    def _wait(self, ev: threading.Event) -> bool:
        # Commands are carried out in order, also those before a `quit` or end of input
        # (`printf 'uci\nisready\ngo perft 4\nquit\n' | cardinal` must work on a cold cache).
        self.start_warmup()
        ev.wait()
        return True

    def wait_core(self) -> bool:
        """Block until the rules core is loaded; False if it failed to load."""
        return self._wait(self.core_ready) and self.core_error is None

    def wait_ready(self) -> bool:
        """Block until the engine can search (or the search failed to load)."""
        return self._wait(self.ready)

    def wait_ping(self) -> bool:
        """For ``isready``/``ping``: block until the engine can search, or, while a cold
        start is still compiling the search, until the rules core is loaded and
        :data:`PING_WAIT` seconds have passed (moves meanwhile: see :meth:`start_search`)."""
        self.start_warmup()
        if not self.ready.wait(PING_WAIT):
            self.core_ready.wait()
            if not self.ready.is_set():
                log("search still compiling: answering the ping; a move needed before it is done is a quick one")
        return True

    def hold_handshake(self) -> None:
        """On a cold start, wait for the warm-up before the handshake answer, but no
        longer than :data:`HANDSHAKE_WAIT` seconds after the engine started."""
        self.start_warmup()
        if self.cold and not self.ready.is_set():
            log("cold numba cache: compiling before the handshake answer (once per install or upgrade)")
            self.ready.wait(max(0.0, HANDSHAKE_WAIT - (time.monotonic() - self.t_start)))

    # ------------------------------------------------------------ options
    def set_eval_file(self, value) -> None:
        """The ``EvalFile`` option: a network file's path (``None``, empty, ``<default>`` or
        ``<empty>``: the variant's shipped net). Read at the next ``isready``/``ping`` or search."""
        v = (value or "").strip()
        self.eval_file = EVALFILE_DEFAULT if v in _EVALFILE_DEFAULTS else v
        self._net_gen += 1

    def select_net(self, variant: str) -> None:
        """Choose the network for ``variant`` (see the module docstring) unless nothing changed
        since the last choice; a note or one error line says what happened. Applied to the
        searcher at the next search start (:meth:`_apply_options`)."""
        key = (self.use_nnue, self.eval_file, variant, self._net_gen)
        if key == self._net_key:
            return
        self._net_key = key
        self.net, self.net_path = None, None
        if not self.use_nnue:
            return
        try:
            from search import nnue as N   # lazy, for start-up speed: numpy and numba
            default = self.eval_file == EVALFILE_DEFAULT
            path = N.net_path(variant) if default else os.path.expanduser(self.eval_file)
            if default and not os.path.exists(path):
                self.out_note(f"no network for {variant} ({path}): the linear evaluation")
                return
            self.net = N.read_net(path, variant)
            self.net_path = path
            self.out_note(f"NNUE evaluation using {path} ({variant}, {N.net_summary(self.net)})")
        except Exception as e:   # NnueError is one line naming the file; anything else too
            self.net = None
            if not isinstance(e, ValueError):
                log_exception("loading the network")
            self.out_error(f"{e}; using the linear evaluation")

    def request_clear(self) -> None:
        """Clear the hash table before the next search (ucinewgame, Clear Hash, new)."""
        self._clear_pending = True

    def apply_pending(self, variant: str | None = None) -> None:
        """Resize/clear the hash now if a change is pending and no search runs; with
        ``variant``, choose its network first (:meth:`select_net`).

        Called on ``isready``/``ping``/``ucinewgame``/``new``, so that clearing a
        large table (about 0.5 s per GiB) or reading a network is not charged to the
        engine's clock at the next ``go``.
        """
        if variant is not None:
            self.select_net(variant)
        s = self.searcher
        if s is None or getattr(s, "running", False):
            return
        self._apply_options_safely(s)

    def _apply_options_safely(self, s) -> None:
        """Apply options; a failure (e.g. no memory for the hash) is reported, never raised."""
        try:
            self._apply_options(s)
        except Exception as e:
            log_exception("applying options")
            self.out_error(f"option not applied: {e}")

    def _apply_options(self, s) -> None:
        if self._applied_hash != self.hash_mb:
            s.resize_hash(self.hash_mb)
            self._applied_hash = self.hash_mb
            self._clear_pending = False
        if self._clear_pending:
            s.clear_hash()
            self._clear_pending = False
        if getattr(s, "net", None) is not self.net and hasattr(s, "set_net"):
            s.set_net(self.net)      # (a change of network clears the hash table)
        s.multipv = self.multipv
        s.skill_level = self.skill_level
        s.move_overhead = self.move_overhead
        s.threads = self.threads
        if self._params_changed and hasattr(s, "params"):
            for k, v in self.params.items():
                s.params.set(k, v)
            self._params_changed = False

    def set_param(self, name: str, value) -> None:
        """A tunable search constant (checked by the caller), for the next search."""
        self.params[name] = value
        self._params_changed = True

    # ------------------------------------------------------------ search
    def start_search(self, pos, limits, on_info, on_done) -> None:
        """Start a search of ``pos`` (the caller passes a copy it will not touch).

        ``on_info(info)`` and ``on_done(best, ponder)`` are called from the
        search worker (the Search API of :class:`search.driver.Searcher`). Without a working
        Searcher, ``on_done`` gets the first legal move at once.
        """
        self.select_net(pos.variant.name)
        s = self.searcher
        if s is None and not self.ready.is_set():
            # a cold start still compiling the search: wait for it in a thread, then search
            # or play a quick move (the command loop stays free for stop/isready)
            self._stop_wait.clear()
            threading.Thread(target=self._search_when_ready, args=(pos, limits, on_info, on_done),
                             name="cardinal-compile-wait", daemon=True).start()
            return
        if s is None:
            if self.search_error:
                self.out_error(self.search_error)
            moves = pos.legal_moves()
            on_done(moves[0] if moves else None, None)
            return
        self._apply_options_safely(s)
        s.start(pos, limits, on_info, on_done)

    def _search_when_ready(self, pos, limits, on_info, on_done) -> None:
        t0 = time.monotonic()
        try:
            budget = self._compile_wait_budget(pos, limits)
            while not self.ready.is_set() and not self._stop_wait.is_set():
                if budget is not None and time.monotonic() - t0 >= budget:
                    break
                self.ready.wait(0.01)
            s = self.searcher
            if s is not None and not self._stop_wait.is_set():
                self._apply_options_safely(s)
                s.start(pos, _minus_elapsed(limits, (time.monotonic() - t0) * 1000.0, pos.turn), on_info, on_done)
                if self._stop_wait.is_set():   # a stop that came while the search was being started
                    s.stop()
                return
            if not self._stop_wait.is_set():   # (a stop or quit asked for a move now: no error)
                self.out_error("search still compiling (first start): playing a quick move" if self.cold
                               else "search still loading from the numba cache: playing a quick move")
            on_done(quick_move(pos), None)
        except Exception:
            log_exception("search after the compile")
            legal = pos.legal_moves()
            on_done(legal[0] if legal else None, None)

    def _compile_wait_budget(self, pos, limits) -> float | None:
        """Seconds a search asked for before the warm-up is done may wait for it (``None``: as
        long as it takes). A cold compile (15-35 s) may take a share of the move's time; a warm
        cache loads in about a second, so the search waits for it (at most :data:`PING_WAIT`
        seconds, and on a clock at most a share of what is left of it) and then searches."""
        if limits.infinite or limits.ponder:
            return None
        soft, hard = allocate(limits, pos.turn, self.move_overhead)
        limit = soft if soft is not None else hard    # (movetime: no soft limit, the whole time)
        if limit is None:
            return None                                # depth, nodes, mate: no clock to lose on
        cold_budget = limit * COMPILE_WAIT_SHARE / 1000.0
        if self.cold:
            return cold_budget
        clock = None if limits.movetime is not None else (limits.wtime if pos.turn == 0 else limits.btime)
        if clock is None:
            return max(cold_budget, PING_WAIT)
        return max(cold_budget, min(PING_WAIT, (clock - self.move_overhead) * COMPILE_WAIT_SHARE / 1000.0))

    def make_limits(self, **kw):
        """A :class:`search.limits.Limits` (times in ms)."""
        return Limits(**kw)

    def out_error(self, msg: str) -> None:
        """Overridden per protocol (UCI: ``info string error``; XBoard: ``# error``)."""
        log(msg)

    def out_note(self, msg: str) -> None:
        """Overridden per protocol (UCI: ``info string``; XBoard: ``#``)."""
        log(msg)

    def stop(self) -> None:
        self._stop_wait.set()
        if self.searcher is not None:
            self.searcher.stop()

    def ponderhit(self) -> None:
        if self.searcher is not None:
            self.searcher.ponderhit()


# ------------------------------------------------------------------ formatting helpers
def board_lines(pos) -> list[str]:
    """ASCII diagram of ``pos`` (top rank first), Stockfish's ``d`` style."""
    w, h = pos.variant.width, pos.variant.height
    sep = "  +" + "---+" * w
    lines = [sep]
    for r in range(h - 1, -1, -1):
        cells = []
        for f in range(w):
            c = pos.piece_at(L.square(f, r))
            cells.append(c if c else " ")
        lines.append("  | " + " | ".join(cells) + f" | {r + 1}")
        lines.append(sep)
    lines.append("    " + "   ".join("abcdefghij"[:w]))
    return lines


def static_eval(pos) -> int:
    """Static evaluation in centipawns for the side to move (search/eval.py), or
    the material balance from the variant's piece values if that is missing."""
    try:
        import numpy as np   # lazy, for start-up speed: numpy and numba
        from search.eval import build_eval, evaluate, WS_SIZE
        return int(evaluate(pos.board, pos.st, pos.vt, build_eval(pos.variant.name), np.zeros(WS_SIZE, np.int32)))
    except ImportError:
        total = 0
        for sq in range(L.NSQ):
            c = pos.piece_at(sq)
            if c is None or c.upper() == "K":
                continue
            v = pos.variant.piece(c).value[0]
            total += v if c.isupper() else -v
        return total if pos.turn == 0 else -total


def nnue_eval(net, pos) -> int:
    """The network's static evaluation of ``pos`` (cp, side to move), clamped as in the search."""
    from search import nnue as N   # lazy, for start-up speed: numpy and numba
    from search.core import NNUE_EVAL_MAX
    return max(-NNUE_EVAL_MAX, min(NNUE_EVAL_MAX, N.evaluate_position(net, pos)))


def eval_table(pos) -> list[str]:
    """The static evaluation of ``pos`` by term (:func:`search.eval.eval_terms`) as text lines:
    a header, one line per nonzero term (mg, eg and tapered cp, White's view), the total
    and the phase; an empty list if the search package is missing."""
    try:
        from search.eval import eval_terms, taper
    except ImportError:
        return []
    rows, phase, total = eval_terms(pos.variant.name, pos.board, pos.st, pos.vt)
    out = [f"{'term':<13}{'mg':>7}{'eg':>7}{'total':>7}   (cp, white's view; each row's total rounded)"]
    for name, mg, eg in rows:
        out.append(f"{name:<13}{mg:>7}{eg:>7}{taper(mg, eg, phase, total):>7}")
    smg, seg = sum(r[1] for r in rows), sum(r[2] for r in rows)
    out.append(f"{'Total':<13}{smg:>7}{seg:>7}{taper(smg, seg, phase, total):>7}   phase {phase}/{total}")
    return out


def _minus_elapsed(limits, ms: float, side: int):
    """``limits`` with ``ms`` (time spent waiting) taken off the clock of ``side`` (0 white,
    1 black) and off the move time; a move time keeps at least the share of it that the
    wait may not take (:data:`COMPILE_WAIT_SHARE`), so the search still searches."""
    kw = {}
    k = "wtime" if side == 0 else "btime"
    v = getattr(limits, k)
    if v is not None:
        kw[k] = max(0, int(v - ms))
    if limits.movetime is not None:
        kw["movetime"] = max(int(limits.movetime * (1.0 - COMPILE_WAIT_SHARE)), int(limits.movetime - ms), 0)
    return dataclasses.replace(limits, **kw)


def quick_move(pos):
    """A one-ply choice in plain Python over the compiled rules core, for a move needed
    before the search is compiled: a mate in one, else the most valuable capture or
    promotion, else the first legal move. ``None`` if there is no legal move."""
    legal = pos.legal_moves()
    best, best_score = (legal[0] if legal else None), -1
    for m in legal:
        score = 0
        victim = pos.piece_at(L.move_to(m))
        if victim is not None:
            score += pos.variant.piece(victim).value[0]
        promo = L.move_promo(m)
        if promo:
            score += pos.variant.piece(L.TYPE_LETTERS[promo]).value[0]
        pos.push(m)
        try:
            if pos.status() == "checkmate":
                score = 1 << 30
        finally:
            pos.pop()
        if score > best_score:
            best, best_score = m, score
    return best


def king_capture(pos, move: int) -> bool:
    """True if ``move`` lands on the enemy king (the answer to an illegal position
    where the side not to move is in check)."""
    p = int(pos.board[L.move_to(move)])
    return p != L.EMPTY and p != L.OFF and (p & 15) == L.KING


def sane_move(pos, best):
    """``best`` if it is legal in ``pos`` (or captures the enemy king), else the
    first legal move (with a note on stderr); ``None`` if there is none."""
    legal = pos.legal_moves()
    if best is not None and (best in legal or king_capture(pos, best)):
        return best
    if best is not None:
        log(f"search returned an illegal move {best} in {pos.fen()}; playing a legal one")
    return legal[0] if legal else None

