"""The numba kernels are compiled without reference counting (``engine.rules.jit``), and
their hot array accesses without numba's negative-index wraparound (``nowrap``).

A profile put ~40% of search time on NRT's atomic increments/decrements of array
arguments; these tests pin the flag on every kernel of the hot path and show that
it removes the calls from the generated code on the installed numba. The wraparound
(~17% of search time) is checked in the LLVM IR of the hot kernels, compiled afresh.
"""
import importlib
import re

import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

from engine.rules.jit import njit, nowrap, prefetch

HOT_MODULES = ["engine.rules.movegen", "engine.rules.see", "engine.rules.checks",
               "search.core", "search.movepick", "search.eval", "search.tt", "search.nnue"]


def _kernels():
    out = []
    for name in HOT_MODULES:
        mod = importlib.import_module(name)
        for attr, obj in vars(mod).items():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == name:
                out.append((f"{name}.{attr}", obj))
    return out


def test_every_hot_kernel_is_compiled_without_nrt():
    kernels = _kernels()
    assert len(kernels) > 40            # the scan found the modules' kernels
    with_nrt = [n for n, d in kernels if d.targetoptions.get("_nrt", True)]
    assert with_nrt == []
    python_errors = [n for n, d in kernels if d.targetoptions.get("error_model", "python") != "numpy"]
    assert python_errors == []


def test_integer_division_keeps_floor_semantics_without_zero_checks():
    def div(a, b):
        return a // b, a % b
    f = njit(div)
    for a, b in ((7, 2), (-7, 2), (7, -2), (-7, -2), (-1, 100)):
        assert f(a, b) == div(a, b)            # Python's floor division, as the kernels expect
    assert f(5, 0) == (0, 0)                   # no ZeroDivisionError branch (numpy's error model)


def _branchy(a, b, i):
    """Branches and a loop over two array arguments: numba's NRT increfs both on entry."""
    if i > 3:
        for j in range(i):
            b[j] += a[j]
        return b[0]
    return a[i]


def _nrt_calls(dispatcher, *args):
    dispatcher(*args)
    asm = "\n".join(dispatcher.inspect_asm().values())
    return sum(1 for line in asm.splitlines() if "call" in line or "movabs" in line
               if "NRT_incref" in line or "NRT_decref" in line)


def test_njit_removes_reference_counting_from_generated_code():
    import numba
    a, b = np.arange(10, dtype=np.int64), np.zeros(10, dtype=np.int64)
    assert _nrt_calls(numba.njit(_branchy), a, b, 5) > 0      # numba's default counts references
    assert _nrt_calls(njit(_branchy), a, b, 5) == 0           # ours does not
    for i in (2, 7):                                           # and computes the same
        b1, b2 = np.ones(10, dtype=np.int64), np.ones(10, dtype=np.int64)
        assert njit(_branchy)(a, b1, i) == _branchy(a, b2, i) and (b1 == b2).all()


def test_nrt_can_be_asked_for():
    def alloc(n):
        return np.zeros(n, dtype=np.int64).sum()
    with pytest.raises(Exception):
        njit(alloc)(3)                                        # allocation needs the runtime
    assert njit(alloc, nrt=True)(3) == 0


def _element(a, i):
    return a[i]


def _element_nowrap(a, i):
    return a[nowrap(i)]


def _ir_body(dispatcher, sig):
    ir = dispatcher.inspect_llvm(sig)
    return ir[ir.index("define"):]


def test_nowrap_indexes_without_the_wraparound_and_numba_keeps_it_elsewhere():
    """``a[nowrap(i)]`` compiles without Python's negative-index wraparound (the compare against 0
    and the select that numba adds for a signed index) and reads the right element for every
    integer width; a plain ``a[i]``, even compiled by our ``njit``, keeps numba's wraparound."""
    f = njit(_element_nowrap)
    a = np.arange(10, dtype=np.int64) * 3
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint32, np.uint64):
        assert f(a, t(7)) == 21
    body = _ir_body(f, f.signatures[3])          # the int64 index
    assert "icmp slt i64" not in body and "select" not in body
    g = njit(_element)
    assert g(a, -1) == 27 and g(a, np.int32(-3)) == 21
    assert "select" in _ir_body(g, g.signatures[0])


_AXIS = r"%arg\.\w+\.5\.\d+\b"      # an axis length of an array argument
_WRAP = re.compile(rf"= (?:select i1 %[\w.]+, i64 (?:{_AXIS}, i64 0|0, i64 {_AXIS})|and i64 .*{_AXIS})")


def _wraparounds(body):
    """numba's wraparounds of signed indexes left in an LLVM function body whose arrays are
    arguments: for an index ``i`` into an axis of length ``n`` (``%arg.<array>.5.<axis>``),
    ``i + n`` if ``i < 0``, which LLVM leaves as a ``select`` between ``n`` and 0 (or an ``and``
    with a sign mask) added to the address. (A slice's bounds are clamped to ``n`` with other
    constants; the TT's bucket mask is an ``add`` of ``n``.)"""
    return sum(1 for line in body.splitlines() if _WRAP.search(line))


# the kernels the search spends its time in: every one it calls rather than inlines (as LLVM
# decided on numba 0.68), so that the body of each, callees inlined, is checked somewhere; and
# the move picker's kernels that numba inlines into search() (inline='always'), checked alone
HOT_KERNELS = [("engine.rules.movegen", ("is_attacked", "gen_pseudo", "gen_square", "gen_legal_checked",
                                         "_gen_castling", "make_move", "unmake_move", "_ep_capture_legal",
                                         "_legal_slow", "pinned_pieces", "is_legal_move", "insufficient_material",
                                         "filter_legal", "legal")),
               ("engine.rules.see", ("least_attacker", "see_ge")),
               ("engine.rules.checks", ("gives_check", "_gives_check_lines")),
               ("search.eval", ("_eval_core", "psq_delta", "_mark_checks", "_slider_zone")),
               ("search.tt", ("tt_probe", "tt_store")),
               ("search.core", ("_make", "_static_eval")),
               ("search.movepick", ("picker_init", "next_move", "_next_stage", "_init_stage", "_next_good_capture",
                                    "_next_refutation", "_partial_sort", "_capture_score", "_score_moves", "_pick",
                                    "_pick_stable", "next_qmove")),
               ("search.nnue", ("_apply", "acc_refresh", "nnue_evaluate", "move_changes", "acc_copy"))]


def _argument_types():
    """numba types of the kernels' arguments, by parameter name (int64 for any other name)."""
    from numba import typeof, types
    from engine.rules.layout import NSQ, NTYPES
    from engine.rules.position import Position
    from search.eval import NF, WS_SIZE, build_eval
    from search.core import ss_alloc
    from search.tt import tt_alloc
    from search.nnue import FloatNet, quantize, acc_alloc
    pos = Position.from_fen(None, "grand")
    net = quantize(FloatNet.random("grand", 8))
    ev = build_eval("grand")
    arrays = dict(board=pos.board, st=pos.st, stack=pos.stack, hist=pos.hist, vt=pos.vt, zob=pos.zob, ev=ev,
                  ws=np.zeros(WS_SIZE, np.int32), f=np.zeros(NF, np.int32),
                  scratch=np.zeros(64, np.int32), moves=np.zeros(512, np.int32), scores=np.zeros(512, np.int32),
                  tt=tt_alloc(1), hist_h=np.zeros((32, NSQ), np.int32), cont=np.zeros((16, 16), np.int16),
                  capt=np.zeros((16, 16), np.int16), counter=np.zeros(16, np.int32), info=np.zeros(512, np.int64),
                  ss=ss_alloc(), net=net, acc=acc_alloc(net, 2))
    t = {name: typeof(a) for name, a in arrays.items()}
    t.update(check=types.boolean, skip_quiets=types.boolean, trace=types.literal(False))   # the search's evaluation: no trace
    return t


def test_hot_kernels_index_without_wraparound():
    """The hot kernels' array accesses compile without numba's negative-index wraparound:
    ``nowrap`` at every index the compiler cannot see is non-negative. Each kernel is
    compiled afresh (a cached one has no IR) for the argument types the search passes, and
    its own function body (inlined callees included) is searched."""
    import inspect
    from numba import types
    argtypes = _argument_types()
    left = {}
    for modname, names in HOT_KERNELS:
        mod = importlib.import_module(modname)
        for name in names:
            py = getattr(mod, name).py_func
            sig = tuple(argtypes.get(p, types.int64) for p in inspect.signature(py).parameters)
            fresh = njit(py)
            fresh.compile(sig)
            ir = fresh.inspect_llvm(sig)
            mangled = "_ZN" + "".join(f"{len(x)}{x}" for x in modname.split(".") + [name])
            start = re.search(r"^define [^\n]*@\"?" + mangled, ir, re.M).start()
            n = _wraparounds(ir[start:ir.index("\n}\n", start)])
            if n:
                left[f"{modname}.{name}"] = n
    assert not left, left


def test_wraparound_counter_sees_numbas_wraparound():
    """The counter above finds the wraparound where numba emits it (it would pass vacuously otherwise)."""
    g = njit(_element)
    a = np.arange(10, dtype=np.int64)
    g(a, 3)
    g(a, np.int32(3))
    assert [_wraparounds(_ir_body(g, s)) for s in g.signatures] == [1, 1]
    f = njit(_element_nowrap)
    f(a, 3)
    assert _wraparounds(_ir_body(f, f.signatures[0])) == 0


def _prefetch_then_read(a, i):
    prefetch(a, i)
    return a[i]


def test_prefetch_compiles_to_the_llvm_hint_and_changes_nothing():
    """``prefetch`` (used by the search on the TT bucket of each child) is LLVM's prefetch
    intrinsic, and reading the element afterwards gives the element, also for a TT array."""
    from search.tt import tt_alloc
    f = njit(_prefetch_then_read)
    a = np.arange(50, dtype=np.int32)
    assert f(a, 17) == 17
    assert "llvm.prefetch" in f.inspect_llvm(f.signatures[0])
    tt = tt_alloc(1)
    tt[5]["key"] = 99
    g = njit(lambda t, i: (prefetch(t, i), t[i].key)[1])
    assert g(tt, 5) == 99
