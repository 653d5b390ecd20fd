"""Variant records compile into the variant table the generator reads: castling
geometry (king and rook squares, squares that must be empty or not attacked,
rights masks) and the insufficient-material sets."""
from __future__ import annotations

import numpy as np
import pytest

import variants
from engine.rules import layout as L
from engine.rules.fen import parse_square
from engine.rules.tables import compile_variant, _compile_castling, _compile_no_mate


def _sq(name: str) -> int:
    return parse_square(name, 10, 10)


def _castling(vt, c):
    empty = [int(vt[L.V_CEMPTY + c * L.CASTLE_MAXSQ + j]) for j in range(vt[L.V_CEMPTY_N + c])]
    safe = [int(vt[L.V_CSAFE + c * L.CASTLE_MAXSQ + j]) for j in range(vt[L.V_CSAFE_N + c])]
    return (int(vt[L.V_CR_FROM + c]), int(vt[L.V_CK_TO + c]), int(vt[L.V_CR_TO + c]), sorted(empty), sorted(safe))


@pytest.mark.parametrize("variant,king,expected", [
    ("chess", ("e1", "e8"), {
        0: ("h1", "g1", "f1", ["f1", "g1"], ["e1", "f1"]),
        1: ("a1", "c1", "d1", ["b1", "c1", "d1"], ["d1", "e1"]),
        2: ("h8", "g8", "f8", ["f8", "g8"], ["e8", "f8"]),
        3: ("a8", "c8", "d8", ["b8", "c8", "d8"], ["d8", "e8"])}),
    ("capablanca", ("f1", "f8"), {
        0: ("j1", "i1", "h1", ["g1", "h1", "i1"], ["f1", "g1", "h1"]),
        1: ("a1", "c1", "d1", ["b1", "c1", "d1", "e1"], ["d1", "e1", "f1"]),
        2: ("j8", "i8", "h8", ["g8", "h8", "i8"], ["f8", "g8", "h8"]),
        3: ("a8", "c8", "d8", ["b8", "c8", "d8", "e8"], ["d8", "e8", "f8"])}),
])
def test_castling_table(variant, king, expected):
    vt = compile_variant(variant)
    assert vt[L.V_FLAGS] & L.VF_CASTLING
    assert [int(vt[L.V_CK_FROM + c]) for c in (0, 1)] == [_sq(k) for k in king]
    for c, (rf, kt, rt, empty, safe) in expected.items():
        assert _castling(vt, c) == (_sq(rf), _sq(kt), _sq(rt), sorted(map(_sq, empty)), sorted(map(_sq, safe)))
        assert vt[L.V_CMASK + _sq(rf)] == 15 & ~(1 << c)          # the rook moving or taken drops its right
    assert vt[L.V_CMASK + _sq(king[0])] == 12 and vt[L.V_CMASK + _sq(king[1])] == 3
    assert sum(1 for x in vt[L.V_CMASK:L.V_CMASK + L.NSQ] if x != 15) == 6


def test_no_castling_in_grand():
    vt = compile_variant("grand")
    assert not vt[L.V_FLAGS] & L.VF_CASTLING
    assert np.all(vt[L.V_CMASK:L.V_CMASK + L.NSQ] == 15)


@pytest.mark.parametrize("changes", [
    {"castling_rook_files": (3, 0)},            # king-side rook left of the king
    {"castling_king_to": (7, 2)},               # king lands on its own rook's square
    {"castling_rook_to": (6, 3)},               # king and rook land on the same square
    {"castling_king_to": (6, 9)},               # off the 8-file board
])
def test_castling_geometry_the_generator_cannot_play_is_refused(changes):
    v = variants.CHESS.derive(name="test", **changes)
    with pytest.raises(ValueError):
        _compile_castling(v, np.zeros(L.V_SIZE, dtype=np.int32))


def test_insufficient_material_sets():
    def sets(name):
        vt = compile_variant(name)
        out = []
        for e in range(vt[L.V_NNOMATE]):
            most = {L.TYPE_LETTERS[t]: int(vt[L.V_NOMATE + e * L.NTYPES + t]) for t in range(1, L.NTYPES)
                    if vt[L.V_NOMATE + e * L.NTYPES + t]}
            colour = "".join(L.TYPE_LETTERS[t] for t in range(1, L.NTYPES) if vt[L.V_NOMATE_COLOUR + e] >> t & 1)
            out.append((most, colour))
        return out
    chess_like = [({"N": 1}, ""), ({"B": 1000}, "B")]
    assert sets("chess") == sets("grand") == sets("capablanca") == chess_like
    assert sets("knightrelay") == [({"N": 1000}, ""), ({"B": 1}, "")]
    with pytest.raises(ValueError):
        bad = variants.CHESS.derive(name="test", insufficient_material=(variants.NoMate({"K": 1}),))
        _compile_no_mate(bad, np.zeros(L.V_SIZE, dtype=np.int32))


def test_rules_core_code_names_no_variant():
    """The generator and the other numba rules code read the variant table only: no variant
    name appears in their code (docstrings aside), and movegen has no V_INSUF-like rule switch."""
    import ast
    from pathlib import Path
    root = Path(__file__).resolve().parents[1] / "engine" / "rules"
    names = set(variants.all_names())
    for fname in ("movegen.py", "checks.py"):
        tree = ast.parse((root / fname).read_text())
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef)) and n.body
                      and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                assert not any(n in node.value.lower() for n in names), (fname, node.value)
            if isinstance(node, ast.Name):
                assert not any(n.upper() == node.id for n in names), (fname, node.id)
