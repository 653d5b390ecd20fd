"""numba's ``njit``, imported only after the cache directory is chosen.

Every numba module of Cardinal imports ``njit`` from here, so
:func:`engine.rules.cache.configure` has set ``NUMBA_CACHE_DIR`` (a directory
keyed by the hash of the package sources) before numba reads its configuration.
"""
from .cache import configure

configure()

from numba import njit  # noqa: E402  (must follow configure(): numba reads NUMBA_CACHE_DIR on import)

__all__ = ["njit"]
