"""A small PGN reader for the PGN the match runner writes (and most GUIs).

:func:`read_games` splits a PGN text into :class:`PgnGame` records: tags,
SAN move tokens with the comment after each move, and the result. It does not
check the moves; :func:`replay` plays them with Cardinal's rules. :func:`read_pgn_file` reads a file (``.xz`` too). A trailing
game without its result token (a file still being written) is returned with
``complete = False``.
"""
from __future__ import annotations

import lzma
import re
from dataclasses import dataclass, field

_TAG_RE = re.compile(r'^\[\s*([A-Za-z0-9_]+)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*$')
_TOKEN_RE = re.compile(r'\{[^}]*\}|;[^\n]*|\(|\)|\$\d+|\d+\.(?:\.\.)?|\*|1-0|0-1|1/2-1/2|[^\s{}();]+')
RESULTS = ("1-0", "0-1", "1/2-1/2", "*")


@dataclass
class PgnGame:
    tags: dict = field(default_factory=dict)
    moves: list = field(default_factory=list)      # SAN tokens
    comments: list = field(default_factory=list)   # comment after each move ('' if none)
    result: str = "*"
    complete: bool = False

    @property
    def variant(self) -> str:
        return (self.tags.get("Variant") or "chess").strip().lower()

    @property
    def start_fen(self) -> str | None:
        return self.tags.get("FEN") or None


def _unescape(v: str) -> str:
    return re.sub(r'\\(.)', r'\1', v)


def _movetext(game: PgnGame, text: str) -> None:
    depth = 0
    for tok in _TOKEN_RE.findall(text):
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth = max(0, depth - 1)
        elif depth or tok.startswith(";") or tok.startswith("$") or re.fullmatch(r"\d+\.(?:\.\.)?", tok):
            continue
        elif tok.startswith("{"):
            if game.moves and not game.comments[-1]:
                game.comments[-1] = tok[1:-1].strip()
        elif tok in RESULTS:
            game.result, game.complete = tok, True
        else:
            tok = re.sub(r"^\d+\.+", "", tok)   # "1.e4" written without a space
            if tok:
                game.moves.append(tok)
                game.comments.append("")


def read_pgn_file(path: str) -> str:
    """The text of a PGN file (``.xz`` read compressed, as ``bench/runs/`` keeps the SPRTs'
    games; undecodable bytes replaced; a leading byte-order mark dropped, it is not a tag).
    Raises ``OSError``, or ``ValueError`` for a corrupt ``.xz`` file."""
    opener = lzma.open if str(path).endswith(".xz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            return fh.read().lstrip("\ufeff")
    except lzma.LZMAError as e:
        raise ValueError(f"{path}: not an xz file ({e})") from None


def read_games(text: str) -> list[PgnGame]:
    """Every game in ``text`` (tags, SAN moves, comments, result), in file order."""
    games: list[PgnGame] = []
    cur: PgnGame | None = None
    body: list[str] = []

    def finish():
        if cur is not None:
            _movetext(cur, "\n".join(body))
            games.append(cur)

    in_moves = False
    for line in text.splitlines():
        s = line.strip()
        m = _TAG_RE.match(s)
        if m and (cur is None or in_moves):
            finish()
            cur, body, in_moves = PgnGame(), [], False
        if m:
            cur.tags[m.group(1)] = _unescape(m.group(2))
            continue
        if not s or s.startswith("%"):
            continue
        if cur is None:
            cur, body = PgnGame(), []
        in_moves = True
        body.append(line)
    finish()
    return games


def replay(game: PgnGame, limit: int | None = None):
    """``(position, moves)``: the start position (a :class:`engine.Position`) and the
    packed moves of ``game`` played on a copy. Raises ``ValueError`` naming the
    first move that is not legal (or a bad FEN / unknown variant)."""
    from engine.rules.position import Position
    try:
        start = Position.from_fen(game.start_fen, game.variant)
    except KeyError as e:
        raise ValueError(e.args[0]) from None
    pos = start.copy()
    played = []
    for i, san in enumerate(game.moves[:limit]):
        try:
            mv = pos.parse_san(san)
        except ValueError as e:
            raise ValueError(f"move {i + 1} ({san}): {e}") from None
        pos._push(mv)
        played.append(mv)
    return start, played
