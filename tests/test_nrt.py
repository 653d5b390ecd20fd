"""The numba kernels are compiled without reference counting (``engine.rules.jit``).

A profile put ~40% of search time on NRT's atomic increments/decrements of array
arguments; these tests pin the flag on every kernel of the hot path and show that
it removes the calls from the generated code on the installed numba.
"""
import importlib

import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

from engine.rules.jit import njit, prefetch

HOT_MODULES = ["engine.rules.movegen", "engine.rules.see", "engine.rules.checks",
               "search.core", "search.eval", "search.tt"]


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


def test_signed_indexes_are_not_wrapped_around():
    """Array accesses compile without Python's negative-index wraparound (the compare against 0
    and the select that numba adds for a signed index), and positive indexes of every integer
    width still read the right element."""
    f = njit(_element)
    a = np.arange(10, dtype=np.int64) * 3
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint32, np.uint64):
        assert f(a, t(7)) == 21
    ir = f.inspect_llvm(f.signatures[3])         # the int64 index
    body = ir[ir.index("define"):]
    assert "icmp slt i64" not in body and "select" not in body


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
