"""SPSA tuning of the search constants (``cardinal tune spsa``), as fishtest runs it.

The constants are :mod:`search.params`'s (name, default, range, ``c_end``, ``r_end``). With
``N`` iterations (one iteration = one game pair), ``A`` (default ``0.1 * N``), ``alpha``
(0.602) and ``gamma`` (0.101), each parameter gets, as fishtest's ``parse_spsa_params``::

    c     = c_end * N ** gamma
    a_end = r_end * c_end ** 2
    a     = a_end * (A + N) ** alpha
    theta = start

``start`` is the variant's current value (its ``variants/params/<variant>.json``, else the
default). An iteration started when ``k`` iterations have finished (``k + 1`` below, as fishtest's
``iter_local``) draws a random sign ``flip`` per parameter and plays one game pair between
``theta + c_k * flip`` and ``theta - c_k * flip`` (each clipped to the range; fishtest's
``_generate_data``)::

    c_k = c / (k + 1) ** gamma
    R_k = a / (A + k + 1) ** alpha / c_k ** 2

Both games of the pair start from the same opening, the colours reversed (the match
runner's pairs, :mod:`bench.pairs`). With ``result`` = wins - losses of the ``theta +``
engine over the pair, every parameter moves by ``R_k * c_k * result * flip`` (clipped:
fishtest's ``update_spsa_data``). An integer parameter is sent to the engine as
``floor(value + U)`` with ``U`` uniform in [0, 1) (stochastic rounding: its mean is the
value, so steps smaller than 1 still move the engine on average).

Engines: two Cardinal processes per game slot (``CARDINAL_TUNE=1``, so the constants are UCI
options), started once; before every game they get the pair's values by ``setoption``.
Locally ``concurrency`` slots play at once; with ``scheduler`` the pairs run on the Dask
cluster of ``cardinal match --scheduler`` (:mod:`bench.cluster`, a pair lost with its worker
is played again). Pairs are started from the current ``theta`` as slots free up, so with
several slots a pair can be a few updates old when its result comes in (as on fishtest).

Randomness: pair ``j`` (the ``j``-th pair started) draws its flips and rounding from
``Random((seed, j))`` and its opening from the seeded order of the match runner
(:func:`bench.pairs.schedule`), so a run is reproducible given the order results arrive in.

Journal (JSON lines, each fsynced, :class:`bench.journal.Journal`): a ``spsa`` header (the
settings and parameters), then one ``iter`` line per finished pair: its id, the iteration it
was drawn at, flips, ``c_k``, ``R_k``, the values both engines played, the games (round, who
had White, the ``theta +`` engine's score, how it ended), the result and ``theta`` after the
update. Games are adjudicated (``ADJUDICATION``) as this project's SPRT runs. ``--resume`` replays the lines (the same updates, so the same
``theta``) and goes on with new pair ids; pairs in flight when the run stopped are lost.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import random
import shlex
import sys
import time
import uuid
from dataclasses import dataclass, field

import variants as _variants
from bench.adjudication import Adjudication
from search import params as P

FORMAT = "cardinal-spsa-journal"
VERSION = 1
ALPHA = 0.602
GAMMA = 0.101
A_FRACTION = 0.1            # A = 0.1 * iterations (fishtest's default)
DEFAULT_NODES = 10000       # per move: SPSA's games are fixed-node games unless a time control is given
DEFAULT_ITERATIONS = 10000
# Games are adjudicated as this project's SPRT runs are (cardinal match --draw movenumber=40
# movecount=8 score=10 --resign movecount=4 score=800): decided games need not be played out.
ADJUDICATION = Adjudication(draw_movenumber=40, draw_movecount=8, draw_score=10, resign_movecount=4,
                            resign_score=800)


# ---------------------------------------------------------------------------- the algorithm

@dataclass
class SpsaParam:
    """One tuned parameter, with fishtest's per-parameter constants (see the module docstring)."""
    name: str
    start: float
    lo: float
    hi: float
    c_end: float
    r_end: float
    integer: bool = True
    c: float = 0.0
    a_end: float = 0.0
    a: float = 0.0
    theta: float = 0.0

    def clip(self, x: float) -> float:
        return min(max(x, self.lo), self.hi)


@dataclass
class Probe:
    """A game pair's values: ``plus``/``minus`` the values sent (rounded for integer
    parameters), drawn at iteration ``k`` (finished iterations then) with ``flips``, ``c``
    (``c_k`` per parameter) and ``R`` (``R_k``)."""
    pair: int
    k: int
    flips: list
    c: list
    R: list
    plus: list
    minus: list


def stochastic_round(x: float, u: float) -> int:
    """``floor(x + u)`` for ``u`` in [0, 1): ``x`` rounded up with probability ``frac(x)``."""
    return int(math.floor(x + u))


class Spsa:
    """fishtest's SPSA over ``params`` (:class:`search.params.Param` list) for ``iterations``
    pairs. ``k`` is the number of updates made; ``params[i].theta`` the current estimate."""

    def __init__(self, params, iterations: int, A: float | None = None, alpha: float = ALPHA,
                 gamma: float = GAMMA, seed: int = 1, start: dict | None = None):
        if iterations < 1:
            raise ValueError(f"iterations must be at least 1, not {iterations}")
        if not 0 < alpha <= 1 or not 0 < gamma <= 1:
            raise ValueError(f"alpha and gamma must be in (0, 1], not {alpha} and {gamma}")
        self.iterations = int(iterations)
        self.A = A_FRACTION * self.iterations if A is None else float(A)
        if self.A < 0:
            raise ValueError(f"A must not be negative, not {A}")
        self.alpha, self.gamma, self.seed = float(alpha), float(gamma), int(seed)
        self.k = 0
        self.params: list[SpsaParam] = []
        n = self.iterations
        for p in params:
            s = float((start or {}).get(p.name, p.default))
            if not p.lo <= s <= p.hi:
                raise ValueError(f"{p.name}: start value {s:g} out of range {p.lo}..{p.hi}")
            sp = SpsaParam(p.name, s, float(p.lo), float(p.hi), float(p.c), float(p.r_end), p.integer)
            sp.c = sp.c_end * n ** self.gamma
            sp.a_end = sp.r_end * sp.c_end ** 2
            sp.a = sp.a_end * (self.A + n) ** self.alpha
            sp.theta = sp.start
            self.params.append(sp)
        if not self.params:
            raise ValueError("no parameter to tune")

    @property
    def theta(self) -> list:
        return [p.theta for p in self.params]

    @property
    def done(self) -> bool:
        return self.k >= self.iterations

    def schedule(self, k: int) -> tuple[list, list]:
        """``(c_k, R_k)`` per parameter for a pair drawn after ``k`` updates."""
        it = k + 1
        cs, rs = [], []
        for p in self.params:
            c = p.c / it ** self.gamma
            cs.append(c)
            rs.append(p.a / (self.A + it) ** self.alpha / c ** 2)
        return cs, rs

    def probe(self, pair: int) -> Probe:
        """The values of pair ``pair`` around the current ``theta`` (deterministic in ``seed``,
        ``pair`` and ``theta``)."""
        rng = random.Random(f"{self.seed}/{pair}")
        cs, rs = self.schedule(self.k)
        flips, plus, minus = [], [], []
        for p, c in zip(self.params, cs):
            f = rng.choice((-1, 1))
            hi, lo = p.clip(p.theta + c * f), p.clip(p.theta - c * f)
            if p.integer:
                hi, lo = stochastic_round(hi, rng.random()), stochastic_round(lo, rng.random())
            flips.append(f)
            plus.append(hi)
            minus.append(lo)
        return Probe(pair, self.k, flips, cs, rs, plus, minus)

    def update(self, probe: Probe, result: float) -> None:
        """One update from a finished pair: ``result`` = wins - losses of the ``plus`` engine."""
        for p, R, c, f in zip(self.params, probe.R, probe.c, probe.flips):
            p.theta = p.clip(p.theta + R * c * result * f)
        self.k += 1

    def values(self) -> dict:
        """The current estimate, rounded to the parameters' types."""
        return {p.name: (int(round(p.theta)) if p.integer else p.theta) for p in self.params}


def pair_result(scores: list) -> float:
    """Wins - losses of the first engine over a pair's game scores (1, 0.5, 0)."""
    return float(sum(1 if s == 1.0 else -1 if s == 0.0 else 0 for s in scores))


# ---------------------------------------------------------------------------- settings

@dataclass
class SpsaConfig:
    variant: str
    params: list                      # search.params.Param
    iterations: int = DEFAULT_ITERATIONS
    A: float | None = None
    alpha: float = ALPHA
    gamma: float = GAMMA
    seed: int = 1
    nodes: int | None = DEFAULT_NODES
    tc: str | None = None             # "base+inc" seconds: a time-control run (time-management factors)
    concurrency: int = 1
    scheduler: str | None = None
    journal_path: str | None = None
    resume_path: str | None = None
    out: str | None = None            # the tuned values' file (default variants/params/<variant>.json)
    plot: str | None = None           # SVG of the parameters' paths
    openings: str | None = None
    progress: bool = True
    argv: list = field(default_factory=list)
    pgn: str | None = None            # append each game here (PGN; network training data)


def select_params(names: list[str] | None) -> list:
    """The parameters to tune: ``None``/``["search"]`` the search's and the driver's (all but
    time management), ``["time"]`` the time-management ones, ``["all"]`` every one, else the
    named ones (``ValueError`` for an unknown name)."""
    if not names or names == ["search"]:
        return [p for p in P.PARAMS if p.kind != "time"]
    if names == ["time"]:
        return [p for p in P.PARAMS if p.kind == "time"]
    if names == ["all"]:
        return list(P.PARAMS)
    out = []
    for n in names:
        p = P.lookup(n)
        if p not in out:
            out.append(p)
    return out


def _cardinal_spec(name: str, nodes: int | None):
    """Cardinal with its tunable constants as UCI options (``CARDINAL_TUNE=1`` set by ``env``, so
    a Dask worker's engine gets it too)."""
    from bench.engines import EngineSpec
    spec = EngineSpec.cardinal(name=name, Hash=16)
    spec.cmd = ["env", "CARDINAL_TUNE=1"] + spec.cmd
    if nodes:
        spec.limits = {"nodes": int(nodes)}
    return spec


def _identity(cfg: SpsaConfig, spsa: Spsa, openings: list) -> dict:
    ops = hashlib.sha256("\n".join(f"{o.fen} {' '.join(o.moves)}" for o in openings).encode()).hexdigest()[:16]
    return {"variant": cfg.variant, "iterations": spsa.iterations, "A": spsa.A, "alpha": spsa.alpha,
            "gamma": spsa.gamma, "seed": spsa.seed, "nodes": cfg.nodes, "tc": cfg.tc, "openings_digest": ops,
            "params": [{"name": p.name, "start": p.start, "min": p.lo, "max": p.hi, "c_end": p.c_end,
                        "r_end": p.r_end, "integer": p.integer} for p in spsa.params]}


def read_journal(path: str) -> tuple[dict, list]:
    """``(header, iter lines)`` of an SPSA journal (a cut last line is ignored); ``ValueError``
    if it is not one."""
    header, lines = None, []
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.endswith("\n"):
                break
            try:
                obj = json.loads(raw)
            except ValueError:
                raise ValueError(f"{path}:{n}: not a JSON line") from None
            if n == 1:
                if obj.get("format") != FORMAT:
                    raise ValueError(f"{path}: not a cardinal tune spsa journal")
                header = obj
            elif obj.get("type") == "iter":
                lines.append(obj)
    if header is None:
        raise ValueError(f"{path}: empty journal")
    return header, lines


def replay(spsa: Spsa, lines: list) -> int:
    """Apply a journal's ``iter`` lines to ``spsa`` (in their order); returns the next pair id."""
    nxt = 0
    for ln in lines:
        pr = Probe(ln["pair"], ln["k"], ln["flips"], ln["c"], ln["R"], ln["plus"], ln["minus"])
        spsa.update(pr, ln["result"])
        nxt = max(nxt, ln["pair"] + 1)
    return nxt


# ---------------------------------------------------------------------------- the run

@dataclass
class SpsaResult:
    spsa: Spsa
    games: int = 0
    pairs_new: int = 0
    resumed: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    error: str | None = None
    reruns: int = 0
    out: str | None = None
    plot: str | None = None
    history: list = field(default_factory=list)      # theta after each update (resumed ones included)
    nodes: int | None = None                          # the run's limits (a resumed run's: its journal's)
    tc: str | None = None


class _StubExecutor:
    """Plays pairs with a function instead of engines (tests): ``play(probe) -> [score, score]``."""

    def __init__(self, play):
        self.play, self.queue = play, []

    def start(self):
        pass

    def add(self, tasks):
        self.queue.extend(tasks)

    def get(self, timeout=0.2):
        from bench.pairs import PairResult
        if not self.queue:
            return None
        t = self.queue.pop(0)
        scores = self.play(t)
        games = [_FakeGame(s, rnd) for s, (rnd, _) in zip(scores, t.rounds)]
        return ("pair", PairResult(t.pair, games, True, worker="stub"))

    def attempts(self, pair):
        return []

    def stop_new(self):
        pass

    def abort(self):
        pass

    def close(self):
        pass


@dataclass
class _FakeGame:
    score: float
    round: int = 0
    fault: int | None = None
    termination: str = "stub"

    def score_for(self, i: int) -> float:
        return self.score if i == 0 else 1.0 - self.score


def _executor(cfg: SpsaConfig, settings, warn):
    if cfg.scheduler:
        from bench.cluster import DaskPairs
        ex = DaskPairs(cfg.scheduler, settings, [], concurrency=max(1, cfg.concurrency))
        ex.start()
        return ex, ex.slots          # the cluster's worker threads, as workers come and go
    from bench.match import _LocalPairs
    from bench.pairs import EngineSlot
    slots = []
    try:
        for _ in range(max(1, cfg.concurrency)):
            s = EngineSlot(settings, warn)
            slots.append(s)
            s.start()
    except BaseException:
        for s in slots:
            s.close()
        raise
    ex = _LocalPairs(slots, settings, [], feed=True)
    ex.start()
    return ex, lambda: len(slots)


def _task_options(spsa: Spsa, pr: Probe) -> tuple:
    return (tuple((p.name, str(v)) for p, v in zip(spsa.params, pr.plus)),
            tuple((p.name, str(v)) for p, v in zip(spsa.params, pr.minus)))


def run_spsa(cfg: SpsaConfig, play=None, warn=None, stop_after: int | None = None) -> SpsaResult:
    """Run (or ``--resume``) an SPSA tuning run; ``play(task) -> [score, score]`` replaces the
    engines (tests). ``stop_after``: stop (as after Ctrl-C) once this many pairs of this
    session are recorded. Raises ``ValueError`` for bad settings or a journal of another run,
    ``OSError`` for files, ``EngineError``/``ConnectionError`` when the engines or the cluster
    cannot start.

    With ``cfg.pgn`` each finished pair's games are appended there (fsynced, before the
    pair's journal line, as ``cardinal match`` does); a resumed run appends to the journal's
    PGN unless given another, after dropping the games of pairs its journal does not hold.
    The journal and the PGN are locked for the run (two runs appending to one journal would
    record pairs twice)."""
    from bench import journal as J
    pgn = cfg.pgn
    if pgn is None and cfg.resume_path:
        pgn = read_journal(cfg.resume_path)[0].get("pgn")
    held = J.lock_outputs([cfg.resume_path or cfg.journal_path, pgn])
    try:
        return _run_spsa(cfg, play, warn, stop_after)
    finally:
        J.release_all(held)


def _run_spsa(cfg: SpsaConfig, play, warn, stop_after) -> SpsaResult:
    """:func:`run_spsa` with its output files locked."""
    from bench import journal as J
    from bench.outputs import error_line, naming
    from bench.pgn import pgn_text
    from bench.openings import default_openings, load_openings
    from bench.pairs import GameSettings, PairTask, schedule
    from bench.timecontrol import TimeControl, parse_tc
    warn = warn or (lambda m: print(f"warning: {m}", file=sys.stderr))
    variant = _variants.get(cfg.variant).name
    openings = load_openings(cfg.openings, variant) if cfg.openings else default_openings(variant)
    if not openings:
        raise ValueError("no openings")
    start_values = None
    header, lines = None, []
    if cfg.resume_path:
        header, lines = read_journal(cfg.resume_path)
        if cfg.nodes is None and cfg.tc is None:          # the run's own limits unless given again
            cfg = dataclasses.replace(cfg, nodes=header.get("nodes"), tc=header.get("tc"))
        start_values = {p["name"]: p["start"] for p in header["params"]}
        names = [p["name"] for p in header["params"]]
        params = [P.lookup(n) for n in names]
        spsa = Spsa(params, header["iterations"], header["A"], header["alpha"], header["gamma"], header["seed"],
                    start=start_values)
    else:
        # from the variant's current values: its parameter file's, else the defaults
        spsa = Spsa(cfg.params, cfg.iterations, cfg.A, cfg.alpha, cfg.gamma, cfg.seed,
                    start=P.variant_values(variant))
        jp = cfg.journal_path
        if jp and os.path.exists(jp) and os.path.getsize(jp) > 0:
            raise ValueError(f"journal {jp} already exists: continue that run with --resume {jp}, "
                             "or give another --journal")
    ident = _identity(cfg, spsa, openings)
    if header is not None:
        for k in ("variant", "nodes", "tc", "openings_digest"):
            if header.get(k) != ident[k]:
                raise ValueError(f"--resume {cfg.resume_path}: the journal is for another run "
                                 f"({k} {header.get(k)!r} there, {ident[k]!r} now)")
    res = SpsaResult(spsa, resumed=len(lines), nodes=cfg.nodes, tc=cfg.tc)
    next_pair = replay(spsa, lines)
    res.history = [ln["theta"] for ln in lines]
    res.games = sum(len(ln["games"]) for ln in lines)
    jpath = cfg.resume_path or cfg.journal_path
    if jpath:
        os.makedirs(os.path.dirname(os.path.abspath(jpath)), exist_ok=True)
    pgn_path = cfg.pgn or (header or {}).get("pgn")
    if pgn_path:
        os.makedirs(os.path.dirname(os.path.abspath(pgn_path)), exist_ok=True)
    # a resumed run's own PGN loses the games written just before it stopped, of pairs the
    # journal does not hold; another PGN given on resume is only appended to
    same = pgn_path and header is not None and header.get("pgn") == os.path.abspath(pgn_path)
    keep = {g["round"] for ln in lines for g in ln["games"]} if same else None
    pgn_fh, pgn_offset, jr = J.open_outputs(pgn_path, jpath, keep, header.get("pgn_offset", 0) if same else 0)
    t0 = time.perf_counter()
    ex = None
    bar = None
    try:
        if jr and header is None:
            jr.write({"format": FORMAT, "version": VERSION, "type": "spsa", **ident, "argv": cfg.argv,
                      "scheduler": cfg.scheduler or f"local x{cfg.concurrency}",
                      "pgn": os.path.abspath(pgn_path) if pgn_path else None, "pgn_offset": pgn_offset})
        elif jr:
            jr.write({"type": "resume", "done": spsa.k, "theta": spsa.theta})
        if spsa.done:
            return res
        tc = TimeControl(*parse_tc(cfg.tc)) if cfg.tc else TimeControl(None, 0.0, nodes=cfg.nodes)
        tc_text = tc.pgn()
        specs = [_cardinal_spec("theta+", None), _cardinal_spec("theta-", None)]
        settings = GameSettings(match_id=uuid.uuid4().hex[:12], variant=variant, specs=specs,
                                names=["theta+", "theta-"], tcs=[tc, tc], adjudication=ADJUDICATION)
        ex, slots = (_StubExecutor(play), lambda: 1) if play is not None else _executor(cfg, settings, warn)
        # pair j's opening: the match runner's seeded order (its prefix does not depend on the length)
        order = schedule(openings, 2 * (spsa.iterations + next_pair + 64), spsa.seed)

        def task(j):
            return order[j % len(order)]
        inflight: dict = {}
        if cfg.progress:
            from tqdm import tqdm
            bar = tqdm(total=spsa.iterations, initial=spsa.k, desc=f"spsa {variant}", unit="pair",
                       file=sys.stderr, dynamic_ncols=True, disable=None)
        while not spsa.done:
            # one pair per slot: each starts from the newest theta (a result comes in, the next pair goes out)
            while len(inflight) < slots() and spsa.k + len(inflight) < spsa.iterations:
                pr = spsa.probe(next_pair)
                base = task(next_pair)
                t = PairTask(next_pair, base.opening, ((2 * next_pair + 1, 0), (2 * next_pair + 2, 1)),
                             options=_task_options(spsa, pr))
                inflight[next_pair] = pr
                ex.add([t])
                next_pair += 1
            ev = ex.get(0.5)
            if ev is None:
                continue
            kind, payload = ev
            if kind == "error":
                res.error = payload
                break
            if kind == "rerun":            # a Dask worker was lost mid-pair: the pair is played again
                res.reruns += 1
                if jr:
                    jr.write({"type": "rerun", **payload})
                continue
            if kind == "warning":
                warn(payload)
                continue
            if kind != "pair":
                continue
            pr = inflight.pop(payload.pair, None)
            if pr is None or not payload.complete:
                continue
            payload.games.sort(key=lambda g: getattr(g, "round", 0))
            if pgn_fh and all(hasattr(g, "san") for g in payload.games):     # (the tests' stub games have none)
                try:
                    with naming(pgn_path):
                        J.fsync_write(pgn_fh, "".join(pgn_text(g, "Cardinal SPSA", tc=tc_text)
                                                      for g in payload.games))
                except OSError as e:       # a full disk: the pair is not journalled either
                    res.error = error_line(e)
                    break
            scores = [g.score_for(0) for g in payload.games]
            result = pair_result(scores)
            spsa.update(pr, result)
            res.pairs_new += 1
            res.games += len(scores)
            res.history.append(spsa.theta)
            if jr:
                jr.write({"type": "iter", "pair": pr.pair, "k": pr.k, "flips": pr.flips, "c": pr.c, "R": pr.R,
                          "plus": pr.plus, "minus": pr.minus,
                          "games": [{"round": getattr(g, "round", 0), "white": "theta+" if i == 0 else "theta-",
                                     "plus_score": s, "termination": getattr(g, "termination", None)}
                                    for i, (g, s) in enumerate(zip(payload.games, scores))],
                          "result": result, "theta": spsa.theta, "worker": payload.worker})
            if bar is not None:
                bar.update(1)
                bar.set_postfix_str(f"{res.games} games, {_theta_text(spsa, 4)}", refresh=False)
            if stop_after is not None and res.pairs_new >= stop_after:
                res.interrupted = True
                break
    except KeyboardInterrupt:
        res.interrupted = True
    finally:
        if bar is not None:
            bar.close()
        if ex is not None:
            if res.interrupted or res.error:
                ex.abort()
            else:
                ex.stop_new()
            ex.close()
        if jr:
            jr.close()
        if pgn_fh:
            pgn_fh.close()
        res.seconds = time.perf_counter() - t0
    return res


def _theta_text(spsa: Spsa, n: int | None = None) -> str:
    ps = spsa.params[:n] if n else spsa.params
    more = "" if n is None or len(spsa.params) <= n else " ..."
    return " ".join(f"{p.name}={p.theta:.1f}" for p in ps) + more


# ---------------------------------------------------------------------------- outputs

def write_values(spsa: Spsa, variant: str, path: str, meta: dict) -> dict:
    """Write the tuned values (rounded) over the variant's current ones as a parameter file
    (written to a new file and renamed); returns the values written."""
    cur = {}
    if os.path.exists(path):
        try:
            cur = P.load_file(path)
        except ValueError:
            cur = {}
    vals = {**cur, **spsa.values()}
    vals = P.check_values(vals)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"params": vals, "meta": meta}, fh, indent=1, sort_keys=False)
            fh.write("\n")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return vals


def diff_lines(spsa: Spsa) -> list[str]:
    """``NAME  default -> tuned (+delta)`` per parameter."""
    w = max(len(p.name) for p in spsa.params)
    out = []
    for p in spsa.params:
        d = P.BY_NAME[p.name].default
        v = int(round(p.theta)) if p.integer else p.theta
        out.append(f"{p.name:<{w}s}  {d:>6} -> {v:>6}  ({v - d:+})  theta {p.theta:.2f}")
    return out


PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")


def svg_plot(spsa: Spsa, history: list, title: str = "") -> str:
    """An SVG of each parameter's path: theta over the iterations, as a fraction of its range
    (0 = min, 1 = max; the start value dotted)."""
    W, H, L, R, T, B = 900, 420, 50, 230, 30, 40
    pw, ph = W - L - R, H - T - B
    n = max(1, len(history))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" '
           f'font-size="11">', f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="18" font-size="13">{_esc(title)}</text>',
           f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>']
    for frac in (0.0, 0.5, 1.0):
        y = T + ph * (1 - frac)
        out.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{frac:g}</text>')
    out.append(f'<text x="{L + pw / 2}" y="{H - 12}" text-anchor="middle">theta as a fraction of its range '
               '(dotted: the start)</text>')
    out.append(f'<text x="{L}" y="{H - 12}">0</text>')
    out.append(f'<text x="{L + pw}" y="{H - 12}" text-anchor="end">{n} iterations</text>')
    for i, p in enumerate(spsa.params):
        col = PALETTE[i % len(PALETTE)]
        span = (p.hi - p.lo) or 1.0

        def y(v):
            return T + ph * (1 - (v - p.lo) / span)
        pts = [(L, y(p.start))] + [(L + pw * (j + 1) / n, y(th[i])) for j, th in enumerate(history)]
        out.append(f'<line x1="{L}" x2="{L + pw}" y1="{y(p.start):.1f}" y2="{y(p.start):.1f}" stroke="{col}" '
                   f'stroke-dasharray="2,4" stroke-width="0.8"/>')
        out.append(f'<polyline fill="none" stroke="{col}" stroke-width="1.3" points="'
                   + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
        last = history[-1][i] if history else p.start
        out.append(f'<text x="{L + pw + 8}" y="{T + 12 + 14 * i}" fill="{col}">{_esc(p.name)} '
                   f'{p.start:g} -> {last:.1f}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---------------------------------------------------------------------------- command line

def _parser():
    from bench.args import OneLineParser
    ap = OneLineParser(prog="cardinal tune spsa",
                       description="SPSA tuning of the search constants (fishtest's algorithm): game pairs "
                                   "between theta+c and theta-c, one update per pair; writes the tuned values "
                                   "to variants/params/<variant>.json, a journal, and an SVG of the paths.")
    ap.add_argument("--variant", required=True, help=", ".join(_variants.all_names()))
    ap.add_argument("--params", nargs="+", metavar="NAME", default=None,
                    help="the parameters to tune: names, or 'search' (default: all but time management), "
                         "'time' (time management: give --tc), 'all'")
    ap.add_argument("--iterations", type=int, default=None, help=f"game pairs (default {DEFAULT_ITERATIONS})")
    ap.add_argument("--nodes", type=int, default=None, help=f"node limit per move (default {DEFAULT_NODES})")
    ap.add_argument("--tc", default=None, help="a time control BASE+INC in seconds instead of --nodes")
    ap.add_argument("--A", type=float, default=None, dest="A", help="SPSA's A (default 0.1 x iterations)")
    ap.add_argument("--alpha", type=float, default=ALPHA, help=f"default {ALPHA}")
    ap.add_argument("--gamma", type=float, default=GAMMA, help=f"default {GAMMA}")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--concurrency", type=int, default=1, help="game pairs at once (locally, or per Dask worker)")
    ap.add_argument("--scheduler", default=None, help="tcp://HOST:PORT or local:N (as cardinal match)")
    ap.add_argument("--journal", default=None, help="the results journal (JSON lines; default "
                                                     "tune-data/spsa/<variant>.jsonl)")
    ap.add_argument("--resume", default=None, metavar="JOURNAL", help="continue the run of this journal")
    ap.add_argument("--out", default=None, help="the tuned values (default variants/params/<variant>.json)")
    ap.add_argument("--plot", default=None, help="SVG of the parameters' paths (default: the journal's name .svg)")
    ap.add_argument("--openings", default=None, help="EPD/FEN file (default: the variant's suite)")
    ap.add_argument("--pgn", default=None, metavar="FILE",
                    help="append every game to this PGN (network training data: cardinal tune pgn); "
                         "a resumed run appends to its journal's PGN unless given another")
    ap.add_argument("--no-progress", action="store_true")
    return ap


def config_from_args(argv: list) -> SpsaConfig:
    """``ValueError`` (one line) for a bad command line."""
    a = _parser().parse_args(argv)
    try:
        variant = _variants.get(a.variant).name
    except KeyError as e:
        raise ValueError(e.args[0] if e.args else str(e)) from None
    if a.resume and (a.params or a.iterations is not None or a.journal):
        raise ValueError("--resume continues a run with its own settings: give no --params, --iterations "
                         "or --journal with it")
    params = select_params(a.params)
    if any(p.kind == "time" for p in params) and not a.tc and not a.resume:
        raise ValueError("the time-management parameters are tuned at a time control: give --tc BASE+INC")
    if a.tc and a.nodes:
        raise ValueError("give --tc or --nodes, not both")
    if a.tc:
        from bench.timecontrol import parse_tc
        parse_tc(a.tc)
    iterations = DEFAULT_ITERATIONS if a.iterations is None else a.iterations
    if iterations < 1:
        raise ValueError(f"--iterations must be at least 1, not {iterations}")
    if a.nodes is not None and a.nodes < 1:
        raise ValueError(f"--nodes must be at least 1, not {a.nodes}")
    if a.concurrency < 1:
        raise ValueError(f"--concurrency must be at least 1, not {a.concurrency}")
    if a.A is not None and a.A < 0:
        raise ValueError(f"--A must not be negative, not {a.A:g}")
    for k in ("alpha", "gamma"):
        v = getattr(a, k)
        if not 0 < v <= 1:
            raise ValueError(f"--{k} must be in (0, 1], not {v:g}")
    if a.scheduler:
        from bench.args import check_scheduler
        check_scheduler(a.scheduler)
    journal = a.resume or a.journal or os.path.join("tune-data", "spsa", f"{variant}.jsonl")
    if a.resume and not os.path.isfile(a.resume):
        raise ValueError(f"--resume {a.resume}: no such journal")
    nodes = None if a.tc or (a.resume and not a.nodes) else (a.nodes or DEFAULT_NODES)
    cfg = SpsaConfig(variant=variant, params=params, iterations=iterations, A=a.A, alpha=a.alpha, gamma=a.gamma,
                     seed=a.seed, nodes=nodes, tc=a.tc, concurrency=a.concurrency, scheduler=a.scheduler,
                     journal_path=None if a.resume else journal, resume_path=a.resume,
                     out=a.out or P.params_path(variant),
                     plot=a.plot or os.path.splitext(journal)[0] + ".svg", openings=a.openings,
                     progress=not a.no_progress, argv=["cardinal", "tune", "spsa", *argv], pgn=a.pgn)
    return cfg


def _check_outputs(cfg: SpsaConfig) -> str | None:
    from bench.outputs import check_output_path
    for path, opt, replace in ((cfg.resume_path or cfg.journal_path, "--journal", False),
                               (cfg.out, "--out", True), (cfg.plot, "--plot", True), (cfg.pgn, "--pgn", False)):
        why = check_output_path(path, opt, replace=replace, mkdir=True)
        if why:
            return why
    return None


def main(argv: list | None = None) -> int:
    """``cardinal tune spsa``: 0 done, 1 stopped on an engine error, 2 bad input, 130 interrupted
    (the journal keeps every finished pair: continue with ``--resume``)."""
    from bench.engines import EngineError, kill_all, sigterm_as_interrupt
    from bench.outputs import error_line
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        cfg = config_from_args(argv)
        why = _check_outputs(cfg)
        if why:
            raise ValueError(why)
        with sigterm_as_interrupt():
            res = run_spsa(cfg)
    except (ValueError, EngineError, ConnectionError) as e:
        kill_all()
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        kill_all()
        print(f"error: {error_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kill_all()
        print("interrupted", file=sys.stderr)
        return 130
    return report(cfg, res)


def report(cfg: SpsaConfig, res: SpsaResult) -> int:
    """Write the outputs of a run (values file, plot), print the diff and the one-line summary."""
    from bench.outputs import error_line
    spsa = res.spsa
    journal = cfg.resume_path or cfg.journal_path
    meta = {"method": "SPSA (fishtest)", "iterations": spsa.iterations, "done": spsa.k, "games": res.games,
            "A": spsa.A, "alpha": spsa.alpha, "gamma": spsa.gamma, "seed": spsa.seed,
            "nodes": res.nodes, "tc": res.tc, "journal": os.path.basename(journal) if journal else None,
            "command": shlex.join(cfg.argv), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "theta": {p.name: round(p.theta, 3) for p in spsa.params}}
    try:
        if spsa.k:
            write_values(spsa, cfg.variant, cfg.out, meta)
            res.out = cfg.out
        if cfg.plot:
            with open(cfg.plot, "w", encoding="utf-8") as fh:
                fh.write(svg_plot(spsa, res.history, f"SPSA {cfg.variant}: {spsa.k} of {spsa.iterations} "
                                                     f"iterations, {res.games} games"))
            res.plot = cfg.plot
    except OSError as e:
        print(f"error: {error_line(e)}", file=sys.stderr)
        return 2
    for line in diff_lines(spsa):
        print(line)
    rate = res.pairs_new * 2 / max(res.seconds, 1e-9) * 60
    print(f"spsa {cfg.variant}: {spsa.k}/{spsa.iterations} iterations ({res.pairs_new} new, {res.games} games, "
          f"{res.reruns} re-run) in {res.seconds:.0f} s ({rate:.1f} games/min); "
          f"values {res.out or '(none yet)'}, plot {res.plot}, journal {journal}")
    if res.error:
        print(f"error: {res.error}", file=sys.stderr)
        return 1
    if res.interrupted:
        print(f"interrupted: continue with cardinal tune spsa --resume {journal}", file=sys.stderr)
        return 130
    return 0


__all__ = ["Spsa", "SpsaParam", "Probe", "SpsaConfig", "SpsaResult", "stochastic_round", "pair_result",
           "select_params", "run_spsa", "read_journal", "replay", "write_values", "diff_lines", "svg_plot",
           "main"]
