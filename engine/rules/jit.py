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

**No negative-index wraparound.** numba gives every array access with a signed
integer index Python's meaning of a negative index: a compare, an add and a
select before the load (``fix_integer_index`` in ``numba/np/arrayobj.py``; numba
has no option to turn it off, and skips it only for unsigned index types). The
mailbox squares, offsets and counters Cardinal indexes with are int64 and never
negative (the mailbox's border of ``OFF`` cells keeps every ray and leap inside
the board array), so importing this module replaces that step, for every function
compiled in the process, by a plain cast to an unsigned index. Measured on
``cardinal bench --variant grand --depth 9`` (the same 451,088 nodes): 17% more
nodes per CPU second; ``cardinal bench eval``: grand evaluations 15-20% cheaper.
Consequence: a negative index is read as a huge unsigned one, out of bounds (the
rules, evaluation and search tests and ``cardinal bench`` run clean with
``NUMBA_BOUNDSCHECK=1``, which reports any such index
as an ``IndexError``); write ``a[len(a) - 1]``, never ``a[-1]``, in a kernel.
"""
from .cache import configure

configure()

from numba import njit as _numba_njit  # noqa: E402  (must follow configure(): numba reads NUMBA_CACHE_DIR on import)
# count trailing zero bits of an integer (one tzcnt/bsf instruction); re-exported from here so
# that no module imports numba before configure() has run
from numba.cpython.unsafe.numbers import trailing_zeros  # noqa: E402
import numba.np.arrayobj as _arrayobj  # noqa: E402
from llvmlite import ir as _ir  # noqa: E402
from numba.core import cgutils as _cgutils, types as _types  # noqa: E402
from numba.extending import intrinsic  # noqa: E402


def _index_without_wraparound(context, builder, idxty, idx, size):
    """numba's ``fix_integer_index`` (same signature) minus the negative-index wraparound: the
    index is cast to ``uintp`` whatever its signedness (see the module docstring)."""
    return context.cast(builder, idx, idxty, _types.uintp)


# (lowering looks the function up in its module at compile time, so replacing it there suffices)
if callable(getattr(_arrayobj, "fix_integer_index", None)):
    _arrayobj.fix_integer_index = _index_without_wraparound


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
