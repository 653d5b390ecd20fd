"""SAN (engine/rules/notation.py): hand-made cases for every rule, python-chess's
``Board.san`` on chess playouts, and pyffish ``get_san`` on grand playouts.

pyffish conventions checked (they agree with ours, so the comparison is exact):
grand promotions are written ``d10=Q`` / ``d9=A``, an optional non-promotion
step is plain ``d9``, rank 10 is written ``10`` (``Ce10``), and check/mate
suffixes are ``+``/``#``. Knight Relay has no library oracle; its relayed pawn
jump (``e2g3``/``e2xg3``) is tested by hand here and in test_kr_diff.py.
"""
from __future__ import annotations

import pytest

from engine.rules.position import Position
from tests.conftest import playouts

sf = pytest.importorskip("pyffish")
chess = pytest.importorskip("chess")


def _san(fen, uci, variant="chess"):
    pos = Position.from_fen(fen, variant)
    mv = pos.parse_uci(uci)
    text = pos.san(mv)
    assert pos.parse_san(text) == mv  # SAN parses back to the same move
    return text


@pytest.mark.parametrize("fen,uci,san", [
    # disambiguation by file
    ("4k3/8/8/8/8/8/4K3/R6R w - - 0 1", "a1d1", "Rad1"),
    ("4k3/8/8/8/8/8/4K3/R6R w - - 0 1", "h1f1", "Rhf1"),
    ("4k3/8/8/8/8/2N3N1/8/4K3 w - - 0 1", "c3e4", "Nce4"),
    # disambiguation by rank
    ("4k3/R7/8/8/8/8/8/R3K3 w - - 0 1", "a1a4", "R1a4"),
    ("4k3/R7/8/8/8/8/8/R3K3 w - - 0 1", "a7a4", "R7a4"),
    # by full square (three queens)
    ("2k5/8/8/8/Q6Q/8/8/K6Q w - - 0 1", "h4e4", "Qh4e4"),
    ("2k5/8/8/8/Q6Q/8/8/K6Q w - - 0 1", "a4e4", "Qae4"),
    ("2k5/8/8/8/Q6Q/8/8/K6Q w - - 0 1", "h4e1", "Q4e1"),
    # a pinned rival does not count as ambiguous
    ("4k3/8/8/8/4r3/8/2N1N3/4K3 w - - 0 1", "c2d4", "Nd4"),
    # captures, pawn captures, e.p., promotion
    ("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "e4d5", "exd5"),
    ("4k3/8/8/1Pp5/8/8/8/4K3 w - c6 0 1", "b5c6", "bxc6"),
    ("3rk3/4P3/8/8/8/8/8/4K3 w - - 0 1", "e7d8q", "exd8=Q+"),
    ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8n", "b8=N"),
    ("4k3/8/8/8/8/8/8/4K2R w - - 0 1", "h1h8", "Rh8+"),
    # castling
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1g1", "O-O"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1c1", "O-O-O"),
    ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8c8", "O-O-O"),
    ("3k4/8/8/8/8/8/8/R3K3 w Q - 0 1", "e1c1", "O-O-O+"),
    # check and mate suffixes
    ("6k1/5ppp/8/8/8/8/8/R3K3 w - - 0 1", "a1a8", "Ra8#"),
    ("6k1/5pp1/8/8/8/8/8/R3K3 w - - 0 1", "a1a8", "Ra8+"),
    ("rnbqkbnr/ppppp2p/5p2/6p1/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3", "d1h5", "Qh5#"),
])
def test_chess_san_cases(fen, uci, san):
    assert _san(fen, uci) == san
    assert chess.Board(fen).san(chess.Move.from_uci(uci)) == san  # the oracle agrees


@pytest.mark.parametrize("fen,uci,san", [
    ("9k/10/3P6/10/10/10/10/10/10/4K5 w - - 0 1", "d8d9a", "d9=A"),   # optional promotion
    ("9k/10/3P6/10/10/10/10/10/10/4K5 w - - 0 1", "d8d9", "d9"),      # ... declined
    ("9k/10/3P6/10/10/10/10/10/10/4K5 w - - 0 1", "d8d9c", "d9=C"),
    ("10/3P6/9k/10/10/10/10/10/10/4K5 w - - 0 1", "d9d10q", "d10=Q"),  # mandatory, rank 10
    ("2r6k/3P6/10/10/10/10/10/10/10/4K5 w - - 0 1", "d9c10c", "dxc10=C+"),
    ("9k/10/10/10/10/10/10/10/10/4KC4 w - - 0 1", "f1f10", "Cf10+"),
    ("9k/10/10/10/10/10/10/10/10/4KC4 w - - 0 1", "f1g3", "Cg3"),
    ("9k/10/10/10/10/10/10/10/10/4KA4 w - - 0 1", "f1g3", "Ag3"),
    ("4k5/10/10/10/10/10/10/10/C3K5/9C w - - 0 1", "a2a1", "Caa1"),   # marshal rook moves, file disambiguation
    ("4k5/10/10/10/10/10/10/10/C3K5/9C w - - 0 1", "j1a1", "Cja1"),
    ("4k5/10/10/10/10/10/10/10/10/C1C1K5 w - - 0 1", "a1b3", "Cab3"),  # knight part of marshals
    ("4k5/10/10/10/10/10/10/10/10/C1C1K5 w - - 0 1", "c1c10", "Cc10+"),
    ("r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R w - - 0 1", "e3e5", "e5"),
    ("r8r/1nbqkcabn1/pppppppppp/10/10/10/10/PPPPPPPPPP/1NBQKCABN1/R8R w - - 0 1", "b2c4", "Nc4"),
])
def test_grand_san_cases(fen, uci, san):
    assert _san(fen, uci, "grand") == san
    assert sf.get_san("grand", fen, uci) == san  # pyffish agrees


@pytest.mark.parametrize("fen,uci,san", [
    ("4k3/8/8/8/5N2/8/4P3/6K1 w - - 0 1", "e2g3", "e2g3"),          # relayed pawn jump
    ("4k3/8/8/8/5N2/6p1/4P3/6K1 w - - 0 1", "e2g3", "e2xg3"),       # ... with capture
    ("4k3/8/8/8/5N2/8/4P3/6K1 w - - 0 1", "e2e4", "e4"),            # the ordinary steps stay plain
    ("4k3/8/8/8/5N2/8/4B3/6K1 w - - 0 1", "e2g3", "Bg3"),           # other relayed pieces: ordinary SAN
    ("3k4/1N6/8/8/8/8/8/K2Q4 w - - 0 1", "d1d6", "Qd6#"),           # relayed mate
])
def test_knightrelay_san_cases(fen, uci, san):
    assert _san(fen, uci, "knightrelay") == san


def test_parse_san_tolerances():
    pos = Position.from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "chess")
    assert pos.parse_san("0-0") == pos.parse_uci("e1g1")
    assert pos.parse_san("O-O-O") == pos.parse_uci("e1c1")
    assert pos.parse_san("Rh7!") == pos.parse_uci("h1h7")
    assert pos.parse_san("e1g1") == pos.parse_uci("e1g1")
    with pytest.raises(ValueError):
        pos.parse_san("Qd4")
    with pytest.raises(ValueError):
        pos.parse_san("")


def _sample_moves(games, every):
    """(fen, uci) for the played move at each position and every legal move at every ``every``-th."""
    out = []
    k = 0
    for g in games:
        for i, fen in enumerate(g.fens):
            k += 1
            if k % every == 0:
                out.extend((fen, u) for u in g.legal[i])
            elif i < len(g.moves):
                out.append((fen, g.moves[i]))
    return out


def test_san_vs_python_chess_on_playouts():
    games = playouts("chess", 20, 120, 11) + playouts("chess", 30, 40, 12, start_fen="endgame",
                                                      end_material=32, mate_bias=1.0, stalemate_bias=1.0)
    sample = _sample_moves(games, 3)
    assert len(sample) >= 10000
    bad = []
    kinds = set()
    for fen, u in sample:
        pos = Position.from_fen(fen, "chess")
        ours = pos.san(pos.parse_uci(u))
        theirs = chess.Board(fen).san(chess.Move.from_uci(u))
        if ours != theirs:
            bad.append(f"{fen} {u}: ours {ours}, python-chess {theirs}")
        kinds.update(c for c in "x=+#O" if c in ours)
        if len(ours) >= 4 and ours[0] in "NBRQ" and ours[1] in "abcdefgh12345678" and ours[2] in "abcdefghx":
            kinds.add("disambiguated")
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:8])
    assert kinds >= {"x", "=", "+", "#", "O", "disambiguated"}, kinds


def test_san_vs_pyffish_grand_on_playouts():
    games = playouts("grand", 12, 120, 11) + playouts("grand", 20, 40, 12, start_fen="endgame",
                                                      end_material=32, mate_bias=1.0, stalemate_bias=1.0)
    sample = _sample_moves(games, 12)
    assert len(sample) >= 4000
    bad = []
    kinds = set()
    for fen, u in sample:
        pos = Position.from_fen(fen, "grand")
        ours = pos.san(pos.parse_uci(u))
        theirs = sf.get_san("grand", fen, u)
        if ours != theirs:
            bad.append(f"{fen} {u}: ours {ours}, pyffish {theirs}")
        kinds.update(c for c in "x=+#CA" if c in ours)
        if "10" in ours:
            kinds.add("10")
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:8])
    assert kinds >= {"x", "=", "+", "C", "A", "10"}, kinds
