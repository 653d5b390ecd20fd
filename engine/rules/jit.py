"""numba's ``njit``, imported only after the cache directory is chosen, and compiled
without numba's reference counting; :func:`nowrap`, an array index without numba's
negative-index wraparound.

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

**No negative-index wraparound at the hot sites, with numba left alone.** numba
gives every array access with a signed integer index Python's meaning of a
negative index: a compare and a select of the axis length before the load
(numba's ``numba.np.arrayobj.fix_integer_index``; numba has no option to turn
it off, and skips it only for an unsigned index type). The mailbox squares,
plies, move-buffer positions and table offsets the kernels index with are int64
and never negative (the mailbox's border of ``OFF`` cells keeps every ray and
leap inside the board array), so they write ``a[nowrap(i)]``: :func:`nowrap`
hands numba the index as ``uintp``, a cast that compiles to nothing, and numba
emits a plain load. Everything else keeps numba's semantics: this module changes
nothing in numba, so other numba code in the process still reads ``a[-1]`` as
the last element (tests/test_numba_hygiene.py).

Where: every index the compiler cannot prove non-negative, i.e. one computed
from a value read from an array or passed in as an argument (a square, a ply, a
buffer position, a piece code). An index LLVM can bound itself needs none: a
constant, a masked field (``m & SQ_MASK``, a type ``p & 15`` plus a constant), a
counter of ``range(n)`` (it then drops the test on its own).
tests/test_nrt.py compiles the hot kernels afresh and fails if any wraparound
is left in them. Keep the arithmetic in int64 and call :func:`nowrap` only
inside the brackets: numba types ``uint64`` mixed with ``int64`` as ``float64``,
which cannot index.

Measured with ``cardinal bench --variant grand --depth 10 --compare-fsf --rounds 5``
(926,336 nodes; medians of six runs, interleaved with the other builds on a shared
2-core machine): 628,000 nodes per second, 1.11 times Fairy-Stockfish's, the same
as when the wraparound was patched out of numba for the whole process (635,000,
1.11); with numba's wraparound at every site, 522,000 (0.93: 17% slower).
``cardinal bench eval``, grand: 969 ns per evaluation, against 972 patched and
1,224 with the wraparound.
Consequence: a negative index passed through :func:`nowrap` is read as a huge
unsigned one, out of bounds (the rules, evaluation and search tests and
``cardinal bench`` run clean with ``NUMBA_BOUNDSCHECK=1``, which reports any
such index as an ``IndexError``; numba caches code without its flags in the
key, so use a fresh ``NUMBA_CACHE_DIR`` for that); write ``a[len(a) - 1]``,
never ``a[nowrap(-1)]``.
"""
from .cache import configure

configure()

from numba import njit as _numba_njit  # noqa: E402  (must follow configure(): numba reads NUMBA_CACHE_DIR on import)
# count trailing zero bits of an integer (one tzcnt/bsf instruction); re-exported from here so
# that no module imports numba before configure() has run
from numba.cpython.unsafe.numbers import trailing_zeros  # noqa: E402
from llvmlite import ir as _ir  # noqa: E402
from numba.core import cgutils as _cgutils, types as _types  # noqa: E402
from numba.extending import intrinsic  # noqa: E402


@intrinsic
def nowrap(typingctx, idx):
    """``a[nowrap(i)]``: index ``a`` with the integer ``i``, which must not be negative,
    without numba's negative-index wraparound (module docstring). Returns ``i`` as ``uintp``
    (sign-extended from a narrower type; no instruction for int64), for which numba emits
    a plain load or store. Only inside the brackets: numba types ``uint64`` mixed with
    ``int64`` arithmetic as ``float64``, which cannot index."""
    if not isinstance(idx, _types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return context.cast(builder, args[0], signature.args[0], _types.uintp)

    return _types.uintp(idx), codegen


@intrinsic
def prefetch(typingctx, arr, idx):
    """``prefetch(arr, i)``: ask the CPU to start loading the cache line of ``arr[i]`` (1-d array,
    integer ``i``) and return at once (LLVM's ``llvm.prefetch``: a read, kept in all cache levels),
    so that a later access finds it in cache. Compiles to one instruction (``prefetcht0``); a hint
    only: it never faults and changes no result."""
    if not isinstance(arr, _types.Array) or arr.ndim != 1 or not isinstance(idx, _types.Integer):
        return None

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        ind = context.cast(builder, args[1], idxty, _types.intp)
        ptr = _cgutils.get_item_pointer2(context, builder, data=ary.data,
                                         shape=_cgutils.unpack_tuple(builder, ary.shape),
                                         strides=_cgutils.unpack_tuple(builder, ary.strides),
                                         layout=aryty.layout, inds=[ind], wraparound=False)
        i8p = builder.bitcast(ptr, _ir.IntType(8).as_pointer())
        i32 = _ir.IntType(32)
        fn = _cgutils.get_or_insert_function(builder.module, _ir.FunctionType(_ir.VoidType(), [i8p.type, i32, i32, i32]),
                                             "llvm.prefetch.p0")
        # (address, 0 = read, 3 = keep in all cache levels, 1 = data cache)
        builder.call(fn, [i8p, _ir.Constant(i32, 0), _ir.Constant(i32, 3), _ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return _types.void(arr, idx), codegen


def njit(*args, nrt: bool = False, **options):
    """``numba.njit`` with reference counting off unless ``nrt=True``, and numpy's error model
    (see the module docstring).

    Used as ``@njit(cache=True, nogil=True)``; the options are numba's."""
    options.setdefault("_nrt", bool(nrt))
    options.setdefault("error_model", "numpy")
    return _numba_njit(*args, **options)


__all__ = ["njit", "trailing_zeros", "prefetch", "nowrap"]
