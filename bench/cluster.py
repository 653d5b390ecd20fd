"""``cardinal match --scheduler``: game pairs on a Dask distributed cluster.

The client (:class:`DaskPairs`, driven by :func:`bench.match.run_match`) submits one
task per game pair (:func:`run_pair`, which each worker imports from this module) and
collects the results as they complete; only the client writes the PGN and the
journal. Each worker thread keeps its own two engines (:class:`bench.pairs.EngineSlot`)
from pair to pair, so a worker with ``--nthreads C`` plays ``C`` games at once.

* ``tcp://HOST:PORT``: an existing scheduler (``dask scheduler`` and ``dask worker``);
  ``local:N``: an in-process ``LocalCluster`` of N worker processes, each with
  ``--concurrency`` threads.
* At most ``PREFETCH`` (2) pairs per worker thread are submitted at a time (the
  thread count is re-read as workers come and go): one running, one queued so the
  worker never waits for the client; a stop (SPRT decision) has little to cancel and
  the pairs run roughly in id order.
* Each task logs a start event (topic ``cardinal-match``) to the scheduler; the client
  subscribes to it. A worker that dies mid-pair makes the scheduler run the task again
  elsewhere (Dask's own resubmission, ``distributed.scheduler.allowed-failures``); the
  second start of the same pair id is a re-run, which the journal records. The result of
  a pair id is accepted once.
* Stop (SPRT decided): tasks not yet started are cancelled, started ones finish and are
  recorded. Abort (Ctrl-C, error): everything is cancelled and the workers stop the
  match's games at their next move.
"""
from __future__ import annotations

import asyncio
import atexit
import collections
import logging
import os
import queue
import signal
import threading
import time

import dask
import distributed

# distributed raises asyncio's TimeoutError, which is the built-in one only from Python 3.11 on
TIMEOUTS = (TimeoutError, asyncio.TimeoutError)

from bench.engines import kill_all
from bench.journal import now_iso
from bench.pairs import EngineSlot, GameSettings, PairTask, play_pair

TOPIC = "cardinal-match"
# Dask's housekeeping on an idle 2-worker LocalCluster costs ~8 % of a core by default
# (statistical profiler every 10 ms, memory monitor every 100 ms, event-loop ticks every
# 20 ms); with these ~1.5 %. The engines need that CPU.
# Local workers are forked from this process, which has the engine rules (and their
# numba functions) loaded already: a spawned worker spends ~1.5 s of CPU importing and
# loading them again. At fork time this process runs no engine and no thread but Dask's.
LOCAL_WORKER_CONFIG = {"distributed.worker.multiprocessing-method": "fork",
                       "distributed.worker.profile.enabled": False,
                       "distributed.admin.system-monitor.interval": "2s",
                       "distributed.worker.memory.monitor-interval": "2s",
                       "distributed.admin.tick.interval": "500ms"}
NO_WORKERS_WARNING = 10.0  # s without a worker before the client says it is waiting
PREFETCH = 2          # pairs in flight per worker thread: the next one is queued when one ends

# ---------------------------------------------------------------------------- worker side
_LOCK = threading.Lock()
_SLOTS: dict = {}          # (match_id, thread id) -> EngineSlot
_STOPS: dict = {}          # match_id -> threading.Event (set: abandon the match's games)


def _slot(settings: GameSettings, warnings: list) -> EngineSlot:
    key = (settings.match_id, threading.get_ident())
    with _LOCK:
        slot = _SLOTS.get(key)
        if slot is None:
            for k, s in list(_SLOTS.items()):          # idle engines of matches that are over
                if k[0] != settings.match_id and not s.busy:
                    s.close()
                    del _SLOTS[k]
            slot = _SLOTS[key] = EngineSlot(settings)
        slot.busy = True
    slot.warn = warnings.append
    return slot


def run_pair(settings: GameSettings, task: PairTask):
    """The Dask task: play one game pair on this worker; returns a
    :class:`bench.pairs.PairResult` naming the worker."""
    try:
        worker = distributed.get_worker()
        address = worker.address
        worker.log_event(TOPIC, {"match": settings.match_id, "pair": task.pair, "event": "start",
                                 "worker": address, "pid": os.getpid(), "t": time.time()})
    except ValueError:            # not on a worker (called directly)
        address = "local"
    with _LOCK:
        stop = _STOPS.setdefault(settings.match_id, threading.Event())
    warnings: list = []
    slot = _slot(settings, warnings)
    try:
        res = play_pair(slot, settings, task, stop)
    finally:
        slot.busy = False
        if stop.is_set():              # the match was aborted: its engines are not needed
            with _LOCK:
                _SLOTS.pop((settings.match_id, threading.get_ident()), None)
            slot.close()
    res.worker = address
    res.warnings = warnings
    return res


def stop_match(match_id: str) -> None:
    """On a worker: abandon the match's running games (they end at the next move)."""
    with _LOCK:
        _STOPS.setdefault(match_id, threading.Event()).set()


def close_match(match_id: str) -> int:
    """On a worker: quit the match's idle engines; returns how many slots were closed."""
    n = 0
    with _LOCK:
        for k, s in list(_SLOTS.items()):
            if k[0] == match_id and not s.busy:
                s.close()
                del _SLOTS[k]
                n += 1
        _STOPS.pop(match_id, None)
    return n


@atexit.register
def _exit():
    kill_all()


def _after_fork_in_child():
    # a forked local worker does not inherit the client's Ctrl-C/SIGTERM handling
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except ValueError:
        pass


os.register_at_fork(after_in_child=_after_fork_in_child)


# ---------------------------------------------------------------------------- client side
def parse_scheduler(text: str) -> tuple[str, object]:
    """``("local", N)`` or ``("address", "tcp://host:port")``; raises ``ValueError``."""
    if text.startswith("local:"):
        try:
            n = int(text[6:])
        except ValueError:
            n = 0
        if n < 1:
            raise ValueError(f"--scheduler {text!r}: local:N needs N >= 1 workers")
        return "local", n
    if "://" not in text or text.endswith("://"):
        raise ValueError(f"--scheduler {text!r}: expected tcp://HOST:PORT or local:N")
    return "address", text


def connect(kind: str, target, threads: int, connect_timeout: float) -> tuple:
    """``(client, cluster)`` for the scheduler :func:`parse_scheduler` gave as ``(kind, target)``:
    for ``local`` an in-process ``LocalCluster`` of ``target`` worker processes with ``threads``
    threads each (forked, :data:`LOCAL_WORKER_CONFIG`), else ``cluster`` None and a client of the
    scheduler at the address (``ConnectionError`` if it does not answer). Dask's logging is
    silenced (below CRITICAL)."""
    for name in ("distributed", "distributed.worker", "distributed.scheduler", "distributed.nanny",
                 "distributed.core", "distributed.comm", "distributed.client"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    if kind == "local":
        with dask.config.set(LOCAL_WORKER_CONFIG):
            cluster = distributed.LocalCluster(n_workers=target, threads_per_worker=threads, processes=True,
                                               dashboard_address=None, silence_logs=logging.CRITICAL)
        try:
            return distributed.Client(cluster, timeout=connect_timeout), cluster
        except BaseException:
            close_client(None, cluster)
            raise
    try:
        return distributed.Client(target, timeout=connect_timeout), None
    except (OSError, *TIMEOUTS) as e:
        raise ConnectionError(f"cannot reach the Dask scheduler at {target}: {e}") from None


def close_client(client, cluster) -> None:
    """Close the client, then the local cluster (either may be None), whatever they raise."""
    for c in (client, cluster):
        if c is not None:
            try:
                c.close()
            except Exception:
                pass


class DaskPairs:
    """The client's view of the cluster: :meth:`start`, then :meth:`get` events
    ``("pair", PairResult)``, ``("rerun", dict)``, ``("error", text)`` until
    :meth:`idle`; :meth:`stop_new` (SPRT), :meth:`abort` (Ctrl-C) and :meth:`close`."""

    def __init__(self, scheduler: str, settings: GameSettings, tasks: list, concurrency: int = 1,
                 connect_timeout: float = 30.0):
        self.kind, self.target = parse_scheduler(scheduler)
        self.settings, self.concurrency = settings, concurrency
        self.pending = collections.deque(tasks)
        self.inflight: dict = {}            # future -> pair id
        self.started: dict = {}             # pair id -> [start events]
        self.events: queue.Queue = queue.Queue()
        self.ready: collections.deque = collections.deque()
        self.stopping = False
        self.client = self.cluster = None
        self.connect_timeout = connect_timeout
        self._slots, self._slots_at = 1, -1e9
        self._no_workers_since: float | None = None
        self._warned_no_workers = False

    # -- life cycle
    def start(self) -> None:
        self.client, self.cluster = connect(self.kind, self.target, self.concurrency, self.connect_timeout)
        self.client.subscribe_topic(TOPIC, self._on_event)

    def add(self, tasks: list) -> None:
        """More pairs to play (SPSA makes them as results come in)."""
        self.pending.extend(tasks)

    def _on_event(self, event) -> None:
        _, msg = event
        if isinstance(msg, dict) and msg.get("match") == self.settings.match_id:
            self.events.put(msg)

    def slots(self) -> int:
        """Worker threads in the cluster (asked of the scheduler at most once a second)."""
        now = time.monotonic()
        if now - self._slots_at > 1.0:
            try:
                n = sum(self.client.nthreads().values())
                self._slots = max(1, n)
                if n:
                    self._no_workers_since = None
                elif self._no_workers_since is None:
                    self._no_workers_since = now
            except Exception:
                pass
            self._slots_at = now
            if self._no_workers_since is not None and now - self._no_workers_since > NO_WORKERS_WARNING \
                    and not self._warned_no_workers:
                self._warned_no_workers = True
                where = self.target if self.kind == "address" else "SCHEDULER"
                self.ready.append(("warning", f"no Dask worker is connected to the scheduler; waiting "
                                              f"(start one: dask worker {where} --nthreads 1)"))
        return self._slots

    def _fill(self) -> None:
        if self.stopping:
            return
        want = PREFETCH * self.slots() - len(self.inflight)
        while want > 0 and self.pending:
            t = self.pending.popleft()
            f = self.client.submit(run_pair, self.settings, t, pure=False,
                                   key=f"cardinal-pair-{self.settings.match_id}-{t.pair}")
            self.inflight[f] = t.pair
            want -= 1

    def _drain_events(self) -> None:
        while True:
            try:
                msg = self.events.get_nowait()
            except queue.Empty:
                return
            k = msg.get("pair")
            starts = self.started.setdefault(k, [])
            starts.append(msg)
            if len(starts) > 1:
                prev = starts[-2]
                self.ready.append(("rerun", {"pair": k, "attempt": len(starts),
                                             "lost_worker": prev.get("worker"), "worker": msg.get("worker"),
                                             "started": now_iso(msg["t"]) if msg.get("t") else None}))

    def attempts(self, pair: int) -> list:
        self._drain_events()
        return self.started.get(pair, [])

    def get(self, timeout: float = 0.5):
        """The next event, or None after ``timeout`` seconds without one."""
        self._drain_events()
        if self.ready:
            return self.ready.popleft()
        self._fill()
        if not self.inflight:
            time.sleep(min(timeout, 0.05))
            return None
        try:
            distributed.wait(list(self.inflight), timeout=timeout, return_when="FIRST_COMPLETED")
        except TIMEOUTS:
            pass
        for f in [f for f in self.inflight if f.done()]:
            pair = self.inflight.pop(f)
            if f.cancelled():
                continue
            if f.status == "error":
                exc = f.exception()
                self.ready.append(("error", f"pair {pair}: {type(exc).__name__}: {exc}"))
                continue
            self.ready.append(("pair", f.result()))
            f.release()
        self._drain_events()
        return self.ready.popleft() if self.ready else None

    def idle(self) -> bool:
        return not self.inflight and not self.ready and (self.stopping or not self.pending)

    def stop_new(self) -> None:
        """No new pairs: cancel the submitted ones that have not started; started ones finish."""
        self.stopping = True
        self._drain_events()
        for f, pair in list(self.inflight.items()):
            if pair not in self.started:
                f.cancel()
                del self.inflight[f]

    def abort(self) -> None:
        self.stopping = True
        if self.client is None:
            return
        futures = list(self.inflight)
        self.inflight.clear()
        try:
            self.client.cancel(futures)
            self.client.run(stop_match, self.settings.match_id)
        except Exception:
            pass

    def close(self) -> None:
        if self.client is not None:
            try:
                self.client.run(close_match, self.settings.match_id)
            except Exception:
                pass
        close_client(self.client, self.cluster)
