"""numba's ``njit``, imported only after the cache directory is chosen, and compiled
without numba's reference counting.

Every numba module of Cardinal imports ``njit`` from here, so
:func:`engine.rules.cache.configure` has set ``NUMBA_CACHE_DIR`` (a directory
keyed by the hash of the package sources) before numba reads its configuration.

**No NRT.** numba's runtime (NRT) counts references to every array a compiled
function receives: a function with branches or loops increments the count of
each array argument on entry and decrements it on exit, each an atomic
``lock inc``/``lock dec``. The search passes 6-10 arrays (board, state, undo
stack, variant table, weights, TT, ...) to every make/unmake, attack test,
check test, SEE and evaluation call: a profile of ``cardinal bench`` (perf,
grand, depth 9) put about 40% of all CPU samples on those two instructions.
The hot path allocates nothing and returns only scalars, so it needs no
reference counting: :func:`njit` compiles with numba's ``_nrt=False`` flag
(the arrays stay owned by the Python caller, which keeps them alive for the
whole call). Consequences, enforced by numba at compile time: a function
compiled here cannot allocate arrays (``np.zeros`` etc. fail to compile) --
pass ``nrt=True`` for one that must -- and it must not return an array or a
view of one (its caller would decrement a count nobody incremented); every
Cardinal kernel returns scalars only.

**numpy's error model.** With numba's default (``error_model="python"``) every
integer ``//`` and ``%`` tests its divisor for zero and carries a branch that
raises ``ZeroDivisionError``. The kernels never divide by zero (divisors are
constants, the phase total, or counts checked first), so :func:`njit` uses
``error_model="numpy"``: no test, and a division by zero would give 0 instead of
raising. Floor-division semantics for negative numbers are the same in both.
"""
from .cache import configure

configure()

from numba import njit as _numba_njit  # noqa: E402  (must follow configure(): numba reads NUMBA_CACHE_DIR on import)
# count trailing zero bits of an integer (one tzcnt/bsf instruction); re-exported from here so
# that no module imports numba before configure() has run
from numba.cpython.unsafe.numbers import trailing_zeros  # noqa: E402


def njit(*args, nrt: bool = False, **options):
    """``numba.njit`` with reference counting off unless ``nrt=True``, and numpy's error model
    (see the module docstring).

    Used as ``@njit(cache=True, nogil=True)``; the options are numba's."""
    options.setdefault("_nrt", bool(nrt))
    options.setdefault("error_model", "numpy")
    return _numba_njit(*args, **options)


__all__ = ["njit", "trailing_zeros"]
