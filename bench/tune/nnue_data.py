"""Training data for the network in chunks (``cardinal tune nnue-data``), for runs longer than a session.

The games are :func:`bench.tune.selfplay.play_game`'s (the one game generator), with two
additions for variety and for the network's filter: every game opens with a number of random
legal moves, ``lo..hi`` drawn from the game's seed (:func:`bench.tune.selfplay.random_plies_count`;
played, not recorded), and positions where the side to move has a capture that wins material by
static exchange are skipped too (beside the quiet filter: not in check, the searched move neither
a capture nor a promotion, no mate score).

Chunks. Chunk ``c`` is games ``c * G .. c * G + G - 1`` (``G`` games per chunk) played with the
chunk's own seed (:func:`chunk_seed`, a function of the base seed and ``c``): opening order and
mirroring (:func:`bench.tune.selfplay.game_start` on the game's index in the chunk), node jitter and
random plies. A chunk is written to ``DIR/chunk-CCCCC.part`` (a data file of
:mod:`bench.tune.datafile`) as its games finish, whole games appended and flushed; once all its games
are in, it is rewritten in game order to ``DIR/chunk-CCCCC.txt`` and the ``.part`` is removed. So a
chunk file depends only on the settings, the chunk index and the engine: played again by the same
engine (same ``Bench`` and weights) it is the same file, byte for byte.

Manifest. ``bench/runs/nnue-data-<variant>.json`` (committed; JSON) records the settings, the engine
(commit, ``Bench``, weights digest) and, per finished chunk, its index, seed, games, positions, bytes,
SHA-256 and the commit that played it; it is rewritten (atomically) as each chunk finishes. The
data directory itself (default ``tune-data/nnue/<variant>``) is not in git.

Game records (committed). A chunk file is large (about 90 bytes a position) and the data directory
may not outlive a working session, so each finished chunk's games are also kept, compactly, beside the
manifest: ``bench/runs/nnue-data-<variant>/chunk-CCCCC.games.xz`` (the manifest's name without
``.json``; LZMA-compressed text, about 6 bytes a position), one line per game with its start FEN, every
move played (UCI) and the search score of each recorded ply (:func:`format_record`). The chunk file is a
function of them (:func:`rebuild_chunk` replays the moves), so a chunk file that is missing is rebuilt
from its records in seconds and checked against the manifest's SHA-256 before any game is played again.
While a chunk is played its records are appended to ``DIR/chunk-CCCCC.games.part`` beside its ``.part``.

Resume. The same command again (or only ``--variant``: unspecified settings come from the manifest)
continues: unfinished chunks are completed from their ``.part`` files (a game cut by a crash is
played again), chunks of the manifest whose file is missing are played again, a chunk file whose
digest differs from the manifest's is moved aside (``.bad``) and played again, and new chunks are
started while the positions of finished games stay below ``--positions``. :func:`verify` checks the
kept chunk files against the manifest's digests.

Workers. ``concurrency`` 1 plays in this process, more in a pool of worker processes; a Dask
scheduler (``tcp://HOST:PORT`` or ``local:N``, as ``cardinal match --scheduler``) plays one task per
game on its workers (each worker thread keeps its own searcher; a game of a worker that dies is run
again by the scheduler). Only this process writes files.
"""
from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import variants as _variants
from bench.outputs import naming
from bench.tune.datafile import GameRecord, _append, format_game, header_line, parse_header, scan_data, weights_digest
from bench.tune.selfplay import HASH_MB, game_start, opening_fens, play_game

FORMAT = "cardinal-nnue-data"
VERSION = 1
DEFAULT_POSITIONS = 5_000_000
DEFAULT_NODES = 5000
DEFAULT_CHUNK_GAMES = 500         # grand at 5000 nodes: ~37,000 positions, ~15-20 min on two cores
DEFAULT_RANDOM_PLIES = (0, 8)
DEFAULT_SEED = 1
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SETTINGS = ("variant", "nodes", "seed", "chunk_games", "random_plies", "openings", "openings_sha256",
            "skip_winning_captures")
PREFETCH = 2            # games in flight per worker
TOPIC = "cardinal-nnue-data"   # Dask event topic: a worker starts a game


def default_dir(variant: str) -> str:
    """``tune-data/nnue/<variant>`` (relative to the working directory; not in git)."""
    return os.path.join("tune-data", "nnue", variant)


def default_manifest(variant: str) -> str:
    """``bench/runs/nnue-data-<variant>.json`` of the checkout Cardinal runs from, or of the working
    directory when Cardinal is installed (not a git checkout) and the working directory has one."""
    own = os.path.join(ROOT, "bench", "runs", f"nnue-data-{variant}.json")
    here = os.path.join("bench", "runs", f"nnue-data-{variant}.json")
    if not os.path.isdir(os.path.join(ROOT, ".git")) and not os.path.exists(own) and os.path.exists(here):
        return os.path.abspath(here)
    return own


def chunk_seed(seed: int, index: int) -> int:
    """The seed of chunk ``index`` of a run with base seed ``seed`` (32 bits of a SHA-256)."""
    h = hashlib.sha256(f"cardinal-nnue-data {int(seed)} {int(index)}".encode()).digest()
    return int.from_bytes(h[:4], "big")


def chunk_path(directory: str, index: int, part: bool = False) -> str:
    return os.path.join(directory, f"chunk-{int(index):05d}.{'part' if part else 'txt'}")


def records_dir(manifest: str) -> str:
    """Where the committed game records of a manifest's chunks live: the manifest's path without ``.json``."""
    root, ext = os.path.splitext(manifest)
    return root if ext else manifest + ".games"


def records_path(rdir: str, index: int) -> str:
    return os.path.join(rdir, f"chunk-{int(index):05d}.games.xz")


def records_part(directory: str, index: int) -> str:
    return os.path.join(directory, f"chunk-{int(index):05d}.games.part")


RECORDS_HEADER = "# cardinal-nnue-games v1"


def format_record(g: GameRecord, start_fen: str) -> str:
    """One game's record line (tab-separated): ``gid result plies termination opening start-fen
    moves scores``; ``moves`` every move played from ``start-fen`` (UCI, space-separated, random
    plies included), ``scores`` ``ply:score`` of each recorded position (White's view, cp)."""
    res = "1" if g.result == 1.0 else "0" if g.result == 0.0 else "0.5"
    label = g.opening.replace("\t", " ").replace("\n", " ")
    scores = " ".join(f"{ply}:{sc}" for _, sc, ply in g.positions)
    return "\t".join([str(g.gid), res, str(g.plies), g.termination, label, start_fen, " ".join(g.moves),
                      scores]) + "\n"


def parse_records(text: str) -> dict:
    """``{gid: (result, plies, termination, opening, start_fen, moves, [(ply, score)])}`` of the
    whole lines of a records text (a line cut short is ignored); ``ValueError`` for a malformed one."""
    out = {}
    for n, line in enumerate(text.split("\n")[:-1], 1):
        if not line or line.startswith("#"):
            continue
        f = line.split("\t")
        try:
            if len(f) != 8:
                raise ValueError
            scores = [(int(a), int(b)) for a, b in (x.split(":") for x in f[7].split())]
            out[int(f[0])] = (float(f[1]), int(f[2]), f[3], f[4], f[5], f[6].split(), scores)
        except ValueError:
            raise ValueError(f"game records line {n}: malformed") from None
    return out


def records_text(path: str) -> str:
    """The text of a ``.games.xz`` file; ``ValueError`` if it is not xz, ``OSError``."""
    import lzma
    try:
        with lzma.open(path, "rt", encoding="utf-8") as fh:
            return fh.read()
    except (lzma.LZMAError, EOFError) as e:
        raise ValueError(f"{path}: not a readable xz file ({e})") from None


def read_records(path: str) -> dict:
    """The game records of a ``.games.xz`` file (:func:`parse_records`); ``ValueError``/``OSError``."""
    return parse_records(records_text(path))


def write_records(path: str, header: str, lines: list) -> None:
    """Write record lines (in the order given) to ``path`` as xz, atomically."""
    import lzma
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with naming(path):
        with lzma.open(tmp, "wt", encoding="utf-8", preset=9 | lzma.PRESET_EXTREME) as fh:
            fh.write(header + "".join(lines))
        os.replace(tmp, path)


def rebuild_chunk(records: dict, header: str, variant: str) -> str:
    """The chunk file's text from its game records: ``header``, then each game (in game order)
    replayed from its start FEN, its recorded positions' ``P`` lines and its ``G`` line
    (:func:`bench.tune.datafile.format_game`). ``ValueError`` if a move is not legal."""
    from engine.rules.position import Position
    parts = [header]
    for gid in sorted(records):
        result, plies, term, label, fen, moves, scores = records[gid]
        want = dict(scores)
        pos = Position.from_fen(fen, variant)
        recs = []
        for k in range(len(moves) + 1):
            if k in want:
                recs.append((pos.fen(), want[k], k))
            if k < len(moves):
                pos.push(pos.parse_uci(moves[k]))
        if len(recs) != len(scores):
            raise ValueError(f"game {gid}: a recorded ply lies beyond its moves")
        parts.append(format_game(GameRecord(gid, result, plies, term, label, recs, moves)))
    return "".join(parts)


def chunk_files(directory: str) -> list[tuple[int, str, str]]:
    """The chunk files in ``directory`` by name, in name order: ``(index, kind, path)``, kind
    ``txt`` (finished) or ``part`` (being written)."""
    out = []
    for name in sorted(os.listdir(directory)):
        mm = re.fullmatch(r"chunk-(\d+)\.(txt|part)", name)
        if mm:
            out.append((int(mm.group(1)), mm.group(2), os.path.join(directory, name)))
    return out


def parse_random_plies(text: str) -> tuple[int, int]:
    """``"0-8"`` -> ``(0, 8)``, ``"4"`` -> ``(4, 4)``; ``ValueError`` otherwise."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", str(text))
    if not m:
        raise ValueError(f"--random-plies {text!r}: expected N or LO-HI (e.g. 0-8)")
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.group(2) is not None else lo
    if not 0 <= lo <= hi <= 100:
        raise ValueError(f"--random-plies {text!r}: need 0 <= LO <= HI <= 100")
    return lo, hi


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _git(*args) -> str | None:
    try:
        r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


def engine_identity(variant: str) -> dict:
    """What plays the games: ``commit`` (12 hex digits, ``+dirty`` with uncommitted changes to the
    sources), ``bench`` (the ``Bench: N`` of the newest commit that has one) and ``weights``
    (:func:`bench.tune.datafile.weights_digest`). ``None`` where git cannot tell."""
    commit = (_git("rev-parse", "HEAD") or "").strip()[:12] or None
    if commit and (_git("status", "--porcelain", "--untracked-files=no", "--", "*.py", "variants") or "").strip():
        commit += "+dirty"
    bench = None
    for entry in (_git("log", "-200", "--format=%B%x00") or "").split("\x00"):
        m = re.findall(r"^Bench: (\d+)\s*$", entry, re.M)
        if m:
            bench = int(m[-1])
            break
    return {"commit": commit, "bench": bench, "weights": weights_digest(variant)}


def openings_digest(ops: list) -> str:
    return hashlib.sha256("".join(f"{fen}\t{label}\n" for fen, label in ops).encode()).hexdigest()[:16]


@dataclass
class Settings:
    """What a chunk's games are a function of (with the chunk index and the engine)."""
    variant: str
    nodes: int = DEFAULT_NODES
    seed: int = DEFAULT_SEED
    chunk_games: int = DEFAULT_CHUNK_GAMES
    random_plies: tuple = DEFAULT_RANDOM_PLIES
    openings: str = "default"            # "default" (the variant's suite) or the file given
    openings_sha256: str = ""
    skip_winning_captures: bool = True

    def as_json(self) -> dict:
        d = {k: getattr(self, k) for k in SETTINGS}
        d["random_plies"] = list(self.random_plies)
        return d

    def header(self, index: int, weights: str) -> str:
        lo, hi = self.random_plies
        return header_line({"variant": self.variant, "nodes": self.nodes, "seed": chunk_seed(self.seed, index),
                            "openings": self.openings, "chunk": index, "games": self.chunk_games,
                            "random_plies": f"{lo}-{hi}",
                            "skip_winning_captures": int(self.skip_winning_captures), "weights": weights})


# ---------------------------------------------------------------------------- worker side
_LOCAL = threading.local()


def _searcher():
    s = getattr(_LOCAL, "searcher", None)
    if s is None:
        from search.driver import Searcher
        s = _LOCAL.searcher = Searcher(HASH_MB)
    return s


def play_task(task):
    """Play one game: ``task`` from :func:`game_task`; returns its
    :class:`bench.tune.datafile.GameRecord` (the pool's and the Dask workers' task)."""
    variant, gid, fen, label, nodes, seed, random_plies, skip_wc = task
    if "distributed" in sys.modules:          # on a Dask worker: tell the client the game starts here
        import distributed
        try:
            w = distributed.get_worker()
            w.log_event(TOPIC, {"key": str(w.get_current_task()), "worker": w.address, "pid": os.getpid()})
        except ValueError:
            pass
    return play_game(_searcher(), variant, gid, fen, label, nodes, seed, random_plies=tuple(random_plies),
                     skip_winning_captures=skip_wc)


def game_task(s: Settings, ops: list, index: int, i: int) -> tuple:
    """The task of game ``i`` (0-based within the chunk) of chunk ``index``."""
    cs = chunk_seed(s.seed, index)
    fen, label = game_start(ops, cs, i)
    return (s.variant, index * s.chunk_games + i, fen, label, s.nodes, cs, tuple(s.random_plies),
            s.skip_winning_captures)


def _worker_init():
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles Ctrl-C and ends the pool


# ---------------------------------------------------------------------------- runners
class InlineRunner:
    """Plays the games in this process, one at a time, when asked for a result."""

    def __init__(self):
        self.todo: list = []

    def slots(self) -> int:
        return 1

    def submit(self, key, task) -> None:
        self.todo.append((key, task))

    def get(self, timeout: float = 0.5):
        if not self.todo:
            return None
        key, task = self.todo.pop(0)
        return key, play_task(task)

    def close(self, abort: bool = False) -> None:
        self.todo.clear()


class PoolRunner:
    """A pool of ``n`` worker processes (spawned; each keeps its searcher)."""

    def __init__(self, n: int):
        import multiprocessing as mp
        self.n = n
        self.q: queue.Queue = queue.Queue()
        self.pool = mp.get_context("spawn").Pool(n, initializer=_worker_init)

    def slots(self) -> int:
        return self.n

    def submit(self, key, task) -> None:
        self.pool.apply_async(play_task, (task,), callback=lambda r: self.q.put((key, r)),
                              error_callback=lambda e: self.q.put((key, e)))

    def get(self, timeout: float = 0.5):
        try:
            key, r = self.q.get(timeout=timeout)
        except queue.Empty:
            return None
        if isinstance(r, BaseException):
            raise RuntimeError(f"game {key}: {type(r).__name__}: {r}")
        return key, r

    def close(self, abort: bool = False) -> None:
        if abort:
            self.pool.terminate()
        else:
            self.pool.close()
        self.pool.join()


class DaskRunner:
    """One Dask task per game (:func:`play_task`) on the cluster at ``scheduler`` (``tcp://HOST:PORT``,
    or ``local:N``: N local worker processes of ``threads`` threads each). A worker that dies has its
    game run again elsewhere by the scheduler; a game's result is taken once."""

    def __init__(self, scheduler: str, threads: int = 1, connect_timeout: float = 30.0):
        import distributed
        from bench.cluster import TIMEOUTS, connect, parse_scheduler
        self.distributed, self.timeouts = distributed, TIMEOUTS
        self.client, self.cluster = connect(*parse_scheduler(scheduler), threads, connect_timeout)
        self.run_id = os.urandom(4).hex()
        self.futures: dict = {}
        self.ready: list = []
        self._slots, self._slots_at = 1, -1e9
        self.starts: dict = {}          # task key -> workers that started it (a second one: a re-run)
        self.reruns: queue.Queue = queue.Queue()
        self.client.subscribe_topic(TOPIC, self._on_start)

    def _on_start(self, event) -> None:
        msg = event[1]
        key = msg.get("key", "") if isinstance(msg, dict) else ""
        if key.startswith(f"cardinal-nnue-data-{self.run_id}-"):
            seen = self.starts.setdefault(key, [])
            seen.append(msg.get("worker"))
            if len(seen) > 1:
                self.reruns.put((int(key.rsplit("-", 1)[1]), seen[-2], seen[-1]))

    def slots(self) -> int:
        now = time.monotonic()
        if now - self._slots_at > 1.0:
            try:
                self._slots = max(1, sum(self.client.nthreads().values()))
            except Exception:
                pass
            self._slots_at = now
        return self._slots

    def submit(self, key, task) -> None:
        f = self.client.submit(play_task, task, pure=False, key=f"cardinal-nnue-data-{self.run_id}-{key}")
        self.futures[f] = key

    def get(self, timeout: float = 0.5):
        if not self.ready and self.futures:
            try:
                self.distributed.wait(list(self.futures), timeout=timeout, return_when="FIRST_COMPLETED")
            except self.timeouts:
                pass
            for f in [f for f in self.futures if f.done()]:
                key = self.futures.pop(f)
                if f.status == "error":
                    exc = f.exception()
                    raise RuntimeError(f"game {key}: {type(exc).__name__}: {exc}")
                self.ready.append((key, f.result()))
                f.release()
        elif not self.futures:
            time.sleep(min(timeout, 0.05))
        return self.ready.pop(0) if self.ready else None

    def close(self, abort: bool = False) -> None:
        from bench.cluster import close_client
        if self.futures:
            try:
                self.client.cancel(list(self.futures))
            except Exception:
                pass
        close_client(self.client, self.cluster)


# ---------------------------------------------------------------------------- manifest
def load_manifest(path: str) -> dict | None:
    """The manifest at ``path`` (None if there is none); ``ValueError`` if it is not one."""
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            m = json.load(fh)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a JSON manifest ({e.msg}, line {e.lineno})") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} manifest")
    if m.get("version") != VERSION:
        raise ValueError(f"{path}: manifest version {m.get('version')}, this Cardinal reads version {VERSION}")
    return m


def save_manifest(path: str, m: dict) -> None:
    """Write ``m`` to ``path`` atomically (a new file renamed over the old one)."""
    m["chunks"] = sorted(m["chunks"], key=lambda c: c["index"])
    m["totals"] = {"chunks": len(m["chunks"]), "games": sum(c["games"] for c in m["chunks"]),
                   "positions": sum(c["positions"] for c in m["chunks"]),
                   "bytes": sum(c["bytes"] for c in m["chunks"])}
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    with naming(path), open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(m, indent=1) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def settings_from(m: dict) -> Settings:
    s = m["settings"]
    return Settings(m["variant"], int(s["nodes"]), int(s["seed"]), int(s["chunk_games"]),
                    tuple(int(x) for x in s["random_plies"]), s["openings"], s["openings_sha256"],
                    bool(s["skip_winning_captures"]))


def command_line(s: Settings, positions: int, directory: str, manifest: str) -> str:
    lo, hi = s.random_plies
    cmd = (f"cardinal tune nnue-data --variant {s.variant} --positions {positions} --nodes {s.nodes} "
           f"--seed {s.seed} --chunk-games {s.chunk_games} --random-plies {lo}-{hi}")
    if s.openings != "default":
        cmd += f" --openings {s.openings}"
    if not s.skip_winning_captures:
        cmd += " --keep-winning-captures"
    cmd += f" --dir {directory}"
    if os.path.abspath(manifest) != os.path.abspath(default_manifest(s.variant)):
        cmd += f" --manifest {manifest}"
    return cmd


# ---------------------------------------------------------------------------- chunks
def _games_of(path: str) -> tuple[str, dict]:
    """``(header line, {game id: its lines})`` of a data file's finished games."""
    games: dict = {}
    with open(path, encoding="utf-8") as fh:
        header = fh.readline()
        block: list = []
        for line in fh:
            if not line.endswith("\n"):
                break
            block.append(line)
            if line.startswith("G\t"):
                games[int(line.split("\t")[1])] = "".join(block)
                block = []
    return header, games


def finalize_chunk(directory: str, index: int) -> tuple[str, int, int]:
    """Rewrite chunk ``index``'s finished ``.part`` in game order as its ``.txt`` and remove the
    ``.part``; returns ``(sha256, positions, bytes)`` of the ``.txt``."""
    part, final = chunk_path(directory, index, True), chunk_path(directory, index)
    header, games = _games_of(part)
    text = header + "".join(games[g] for g in sorted(games))
    tmp = final + ".tmp"
    with naming(final), open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    os.remove(part)
    return chunk_facts(final)


def chunk_facts(path: str) -> tuple[str, int, int]:
    """``(sha256, positions, bytes)`` of a chunk file."""
    positions = 0
    with open(path, "rb") as fh:
        for line in fh:
            positions += line.startswith(b"P\t")
    return file_sha256(path), positions, os.path.getsize(path)


def restore_chunk(rdir: str, directory: str, index: int, header: str, variant: str, sha256: str, warn) -> bool:
    """Rebuild chunk ``index``'s file from its committed game records (:func:`rebuild_chunk`) if they
    exist; keep it and return True if its SHA-256 is ``sha256``, else warn and return False."""
    rp = records_path(rdir, index)
    if not os.path.exists(rp):
        return False
    try:
        text = rebuild_chunk(read_records(rp), header, variant)
    except ValueError as e:
        warn(f"{e}: the chunk is played again" if rp in str(e) else f"{rp}: {e}: the chunk is played again")
        return False
    data = text.encode("utf-8")
    if hashlib.sha256(data).hexdigest() != sha256:
        warn(f"{rp}: the chunk rebuilt from these records differs from the manifest's digest: played again")
        return False
    final = chunk_path(directory, index)
    tmp = final + ".tmp"
    with naming(final), open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, final)
    return True


@dataclass
class ChunkCheck:
    """The state of one chunk: ``status`` ``ok``, ``missing``, ``changed`` (digest differs from the
    manifest's), ``unfinished`` (a ``.part`` file: ``games`` of them finished) or ``unlisted`` (a
    finished file the manifest does not name)."""
    index: int
    status: str
    games: int = 0
    path: str = ""
    records: bool = False      # its game records are kept (a missing file is rebuilt from them)


def verify(manifest: str, directory: str, variant: str | None = None) -> list[ChunkCheck]:
    """Check the chunk files in ``directory`` against the manifest's digests (module docstring)."""
    m = load_manifest(manifest)
    if m is None:
        raise ValueError(f"{manifest}: no such manifest (run cardinal tune nnue-data first)")
    if variant is not None and m.get("variant") != variant:
        raise ValueError(f"{manifest}: a manifest of variant {m.get('variant')}, not {variant}")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise ValueError(f"--dir {directory}: not a directory")
    out = []
    listed = set()
    for c in m["chunks"]:
        p = chunk_path(directory, c["index"])
        listed.add(c["index"])
        if not os.path.exists(p):
            out.append(ChunkCheck(c["index"], "missing", c["games"], p,
                                  os.path.exists(records_path(records_dir(manifest), c["index"]))))
        elif file_sha256(p) != c["sha256"]:
            out.append(ChunkCheck(c["index"], "changed", c["games"], p))
        else:
            out.append(ChunkCheck(c["index"], "ok", c["games"], p))
    if os.path.isdir(directory):
        for idx, kind, p in chunk_files(directory):
            if kind == "part" and not os.path.exists(chunk_path(directory, idx)):
                out.append(ChunkCheck(idx, "unfinished", len(scan_data(p)[1]), p))
            elif kind == "txt" and idx not in listed:
                out.append(ChunkCheck(idx, "unlisted", len(scan_data(p)[1]), p))
    return sorted(out, key=lambda c: (c.index, c.status))


@dataclass
class GenerateResult:
    """What :func:`generate` did."""
    directory: str
    manifest: str
    positions_total: int = 0          # positions of finished chunks and finished games of unfinished ones
    games_new: int = 0
    positions_new: int = 0
    chunks_new: list = field(default_factory=list)        # indices finished now
    regenerated: list = field(default_factory=list)       # indices that were played again
    restored: list = field(default_factory=list)          # indices rebuilt from their game records
    mismatched: list = field(default_factory=list)        # regenerated, but with another digest
    reruns: list = field(default_factory=list)            # game ids a Dask worker was lost with
    seconds: float = 0.0
    interrupted: bool = False


class _Chunk:
    """A chunk being played: its ``.part`` file, the games it has and those it lacks."""

    def __init__(self, directory: str, index: int, s: Settings, weights: str):
        self.index = index
        self.path = chunk_path(directory, index, True)
        self.rpath = records_part(directory, index)
        self.done: set = set()
        self.positions = 0
        self.records: dict = {}          # gid -> its record line (format_record)
        if os.path.exists(self.rpath):
            self.records = self.read_record_lines(self.rpath)
        if os.path.exists(self.path) and os.path.getsize(self.path) > 0:
            header, done, end = scan_data(self.path)
            want = parse_header(s.header(index, weights))
            if header is None or any(header.get(k) != want[k] for k in want if k != "weights"):
                raise ValueError(f"{self.path}: made with other settings than the manifest's "
                                 f"({' '.join(f'{k}={v}' for k, v in (header or {}).items())}); move it away")
            if end < os.path.getsize(self.path):      # a game cut by a crash: played again
                with open(self.path, "r+b") as fh:
                    fh.truncate(end)
            hdr, games = _games_of(self.path)
            if any(g not in self.records for g in games):      # a game without its record: played again
                games = {g: t for g, t in games.items() if g in self.records}
                with naming(self.path), open(self.path, "w", encoding="utf-8") as fh:
                    fh.write(hdr + "".join(games[g] for g in sorted(games)))
            self.done = set(games)
            self.positions = sum(g.count("\nP\t") + g.startswith("P\t") for g in games.values())
        else:
            with naming(self.path), open(self.path, "w", encoding="utf-8") as fh:
                fh.write(s.header(index, weights))
        self.records = {g: r for g, r in self.records.items() if g in self.done}
        with naming(self.rpath), open(self.rpath, "w", encoding="utf-8") as fh:
            fh.write("".join(self.records[g] for g in sorted(self.records)))
        first = index * s.chunk_games
        self.todo = [i for i in range(s.chunk_games) if first + i not in self.done]
        self.inflight = 0
        self.fh = open(self.path, "a", encoding="utf-8")
        self.rfh = open(self.rpath, "a", encoding="utf-8")

    @staticmethod
    def read_record_lines(path: str) -> dict:
        """``{gid: line}`` of the whole lines of a ``.games.part`` file."""
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        return {int(line.split("\t", 1)[0]): line + "\n" for line in text.split("\n")[:-1]
                if line and not line.startswith("#")}

    def close(self) -> None:
        for fh in (self.fh, self.rfh):
            try:
                fh.close()
            except OSError:
                pass


def generate(variant: str, positions: int | None = None, directory: str | None = None,
             manifest: str | None = None, nodes: int | None = None, seed: int | None = None,
             chunk_games: int | None = None, random_plies: tuple | None = None, openings: str | None = None,
             skip_winning_captures: bool | None = None, concurrency: int = 1, scheduler: str | None = None,
             max_chunks: int | None = None, progress: bool = True, log=None, warn=None) -> GenerateResult:
    """Play chunks until the finished games hold ``positions`` positions (module docstring);
    ``max_chunks``: start no chunk of index ``max_chunks`` or above (a short run).

    Settings left None come from the manifest if it exists, else from the defaults; one given
    that differs from the manifest's is a ``ValueError``, as is an engine whose ``Bench`` or
    weights differ from the manifest's (its games would differ). ``log(chunk_entry)`` is called as
    each chunk finishes, ``warn(text)`` for a chunk moved aside or regenerated with another digest.
    Ctrl-C returns with ``interrupted`` (finished games kept). ``OSError`` for files."""
    variant = _variants.get(variant).name
    directory = directory or default_dir(variant)
    manifest = manifest or default_manifest(variant)
    warn = warn or (lambda text: None)
    m = load_manifest(manifest)
    ident = engine_identity(variant)
    given = {"nodes": nodes, "seed": seed, "chunk_games": chunk_games,
             "random_plies": tuple(random_plies) if random_plies is not None else None,
             "skip_winning_captures": skip_winning_captures}
    ops = opening_fens(variant, openings)
    op_label = os.path.basename(openings) if openings else "default"
    if m is not None:
        if m.get("variant") != variant:
            raise ValueError(f"{manifest}: a manifest of variant {m.get('variant')}, not {variant}")
        s = settings_from(m)
        for k, v in given.items():
            if v is not None and v != getattr(s, k):
                have = getattr(s, k)
                raise ValueError(f"{manifest}: made with {k}={'-'.join(map(str, have)) if k == 'random_plies' else have}, "
                                 f"not {'-'.join(map(str, v)) if k == 'random_plies' else v} (give another --manifest "
                                 "and --dir for other settings, or the same ones to continue)")
        if openings_digest(ops) != s.openings_sha256:
            raise ValueError(f"{manifest}: made with other openings ({s.openings}, sha256 {s.openings_sha256})")
        if m["engine"].get("bench") is not None and ident["bench"] is None:
            raise ValueError(f"{manifest}: cannot tell this engine's Bench (Cardinal is not run from a git checkout), "
                             "so its games may differ from the manifest's: run it from a checkout (pip install -e ., "
                             "or python -m engine in the checkout)")
        for k in ("bench", "weights"):
            want = m["engine"].get(k)
            if want is not None and ident[k] is not None and want != ident[k]:
                raise ValueError(f"{manifest}: its games were played by an engine with {k} {want}, this one has "
                                 f"{ident[k]}: its chunks would differ (give another --manifest and --dir for this "
                                 f"engine's data, or check out commit {m['engine'].get('commit')} to regenerate them)")
        if positions is None:
            positions = int(m.get("positions_target", DEFAULT_POSITIONS))
    else:
        s = Settings(variant, **{k: v for k, v in given.items() if v is not None})
        s.openings, s.openings_sha256 = op_label, openings_digest(ops)
        positions = DEFAULT_POSITIONS if positions is None else positions
        m = {"format": FORMAT, "version": VERSION, "variant": variant, "engine": ident,
             "settings": s.as_json(), "chunks": []}
    if ident["commit"] and ident["commit"].endswith("+dirty"):
        warn("the engine's sources have uncommitted changes: the manifest's commit does not name this engine")
    m["positions_target"] = int(positions)
    m["dir"] = directory
    m["command"] = command_line(s, positions, directory, manifest)
    m["regenerate"] = ("check out engine.commit (or any commit with the same Bench and weights), then run the "
                       "command: chunks whose file is missing are played again, identical to their sha256")
    os.makedirs(directory, exist_ok=True)
    weights = ident["weights"]
    entries = {c["index"]: c for c in m["chunks"]}
    res = GenerateResult(directory, manifest)

    # what is there: finished chunks (checked), unlisted finished files, unfinished ones
    must: list = []                  # chunk indices to play before any new one
    rdir = records_dir(manifest)
    for idx, c in sorted(entries.items()):
        p = chunk_path(directory, idx)
        if os.path.exists(p):
            if file_sha256(p) == c["sha256"]:
                continue
            os.replace(p, p + ".bad")
            warn(f"{p}: its digest differs from the manifest's: moved to {p}.bad, played again")
        if restore_chunk(rdir, directory, idx, s.header(idx, weights), variant, c["sha256"], warn):
            res.restored.append(idx)
            continue
        must.append(idx)
    res.regenerated = list(must)
    for idx, kind, p in chunk_files(directory):
        if kind == "txt" and idx not in entries:
            header, done, _ = scan_data(p)       # finished, but the manifest was not written: add it
            want = parse_header(s.header(idx, weights))
            if header == want and len(done) == s.chunk_games:
                entries[idx] = _entry(s, idx, p, ident)
                m["chunks"] = list(entries.values())
                save_manifest(manifest, m)
        elif kind == "part":
            if os.path.exists(chunk_path(directory, idx)):
                os.remove(p)                      # finalized already; the .part is what a crash left
                if os.path.exists(records_part(directory, idx)) and os.path.exists(records_path(rdir, idx)):
                    os.remove(records_part(directory, idx))
            elif idx not in must:
                must.append(idx)
    for idx, kind, p in chunk_files(directory):      # a crash between a chunk's file and its records
        rp = records_part(directory, idx)
        if kind == "txt" and idx in entries and os.path.exists(rp):
            ch_records = _Chunk.read_record_lines(rp)
            rfinal = records_path(rdir, idx)
            if not os.path.exists(rfinal) and len(ch_records) == entries[idx]["games"]:
                write_records(rfinal, RECORDS_HEADER + f" variant={variant} chunk={idx}\n",
                              [ch_records[g] for g in sorted(ch_records)])
            os.remove(rp)             # kept records are never replaced, a partial set never written
    if max_chunks is not None:
        must = [i for i in must if i < max_chunks]
    must.sort()
    res.positions_total = sum(c["positions"] for c in entries.values())

    runner = None
    chunks: dict = {}                # index -> _Chunk being played
    queue_order: list = []           # chunk indices with games still to submit, in order
    bar = None
    t0 = time.perf_counter()

    def known_positions() -> int:
        return sum(c["positions"] for c in entries.values()) + sum(ch.positions for ch in chunks.values()
                                                                    if ch.index not in entries)

    def next_new_index(start: int) -> int:
        i = start
        while i in entries or i in chunks or i in must:
            i += 1
        return i

    new_from = 0

    def open_chunk(idx: int) -> None:
        ch = _Chunk(directory, idx, s, weights)
        chunks[idx] = ch
        if idx not in entries:
            res.positions_total += ch.positions
        if ch.todo:
            queue_order.append(idx)
        else:
            finish_chunk(ch)

    def finish_chunk(ch: _Chunk) -> None:
        ch.close()
        old = entries.get(ch.index)
        finalize_chunk(directory, ch.index)
        write_records(records_path(rdir, ch.index), RECORDS_HEADER + f" variant={variant} chunk={ch.index}\n",
                      [ch.records[g] for g in sorted(ch.records)])
        os.remove(ch.rpath)
        e = _entry(s, ch.index, chunk_path(directory, ch.index), ident)
        del chunks[ch.index]
        if old is not None:
            if old["sha256"] != e["sha256"]:
                res.mismatched.append(ch.index)
                warn(f"chunk {ch.index} played again, but its digest differs from the manifest's (played by "
                     f"{old.get('commit')}, now {ident['commit']}): the manifest keeps the old entry")
            if log is not None:
                log(e)
            return
        entries[ch.index] = e
        m["chunks"] = list(entries.values())
        save_manifest(manifest, m)
        res.chunks_new.append(ch.index)
        if log is not None:
            log(e)

    try:
        if progress:
            from tqdm import tqdm
            bar = tqdm(total=positions, initial=min(res.positions_total, positions), desc=f"nnue-data {variant}",
                       unit="pos", file=sys.stderr, dynamic_ncols=True, disable=None)
        save_manifest(manifest, m)
        if scheduler:
            runner = DaskRunner(scheduler, threads=max(1, concurrency))
        elif concurrency > 1:
            runner = PoolRunner(concurrency)
        else:
            runner = InlineRunner()
        inflight = 0
        while True:
            # keep the workers fed: unfinished and lost chunks first, then new ones below the target
            while inflight < PREFETCH * runner.slots():
                if not queue_order:
                    if must:
                        open_chunk(must.pop(0))
                        continue
                    if known_positions() < positions:
                        new_from = next_new_index(new_from)
                        if max_chunks is None or new_from < max_chunks:
                            open_chunk(new_from)
                            continue
                    break
                ch = chunks[queue_order[0]]
                i = ch.todo.pop(0)
                if not ch.todo:
                    queue_order.pop(0)
                runner.submit(ch.index * s.chunk_games + i, game_task(s, ops, ch.index, i))
                ch.inflight += 1
                inflight += 1
            if inflight == 0:
                break
            got = runner.get(0.5)
            for gid, lost, now in _drain(getattr(runner, "reruns", None)):
                res.reruns.append(gid)
                warn(f"game {gid} started again on {now}: worker {lost} was lost")
            if got is None:
                continue
            gid, g = got
            inflight -= 1
            ch = chunks[gid // s.chunk_games]
            ch.inflight -= 1
            rec = format_record(g, game_task(s, ops, ch.index, gid - ch.index * s.chunk_games)[2])
            _append(ch.rfh, rec, ch.rpath)        # the record first: a game counts once both are on disk
            ch.records[gid] = rec
            _append(ch.fh, format_game(g), ch.path)
            ch.done.add(gid)
            ch.positions += len(g.positions)
            res.games_new += 1
            res.positions_new += len(g.positions)
            if ch.index not in entries:
                res.positions_total += len(g.positions)
                if bar is not None:
                    bar.update(min(len(g.positions), max(0, positions - bar.n)))
            if bar is not None:
                bar.set_postfix_str(f"{res.games_new} games, chunk {ch.index}", refresh=False)
            if len(ch.done) == s.chunk_games:
                finish_chunk(ch)
        runner.close()
        runner = None
    except KeyboardInterrupt:
        res.interrupted = True
    finally:
        if runner is not None:
            runner.close(abort=True)
        for ch in chunks.values():
            ch.close()
        if bar is not None:
            bar.close()
        res.seconds = time.perf_counter() - t0
    return res


def _drain(q) -> list:
    out = []
    while q is not None:
        try:
            out.append(q.get_nowait())
        except queue.Empty:
            break
    return out


def _entry(s: Settings, index: int, path: str, ident: dict) -> dict:
    sha, positions, size = chunk_facts(path)
    return {"index": index, "seed": chunk_seed(s.seed, index), "games": s.chunk_games, "positions": positions,
            "bytes": size, "sha256": sha, "commit": ident["commit"],
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
