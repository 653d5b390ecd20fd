"""Search and evaluation.

* :mod:`search.driver` — :class:`~search.driver.Searcher` and :class:`~search.driver.Limits` (the API the protocols use)
* :mod:`search.core` — numba PVS alpha-beta + quiescence, one call per iteration
* :mod:`search.eval` — evaluation tables from the variant records and the numba evaluator
* :mod:`search.tt` — the transposition table (numpy structured array)
* :mod:`search.timeman` — time allocation from the clock

Importing this package is cheap; numba is imported by the submodules.
"""
