"""The data files the engine reads from ``variants/`` are installed with it (``pip install .``,
not only ``-e``): every file pattern it looks up is covered by pyproject's package-data."""
import fnmatch
import os

import pytest

import variants
from search import nnue, params

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANTS_DIR = os.path.dirname(os.path.abspath(variants.__file__))


def _variants_globs():
    tomllib = pytest.importorskip("tomllib")     # Python 3.11+
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        cfg = tomllib.load(f)
    return cfg["tool"]["setuptools"]["package-data"]["variants"]


def _covered(path):
    rel = os.path.relpath(path, VARIANTS_DIR).replace(os.sep, "/")
    return any(fnmatch.fnmatch(rel, g) for g in _variants_globs())


def test_shipped_network_path_is_package_data():
    assert _covered(nnue.net_path("grand")), nnue.net_path("grand")


def test_tuned_params_path_is_package_data():
    assert _covered(params.params_path("grand")), params.params_path("grand")


def test_weights_and_rules_are_package_data():
    for name in os.listdir(os.path.join(VARIANTS_DIR, "weights")):
        assert _covered(os.path.join(VARIANTS_DIR, "weights", name)), name
    for name in os.listdir(os.path.join(VARIANTS_DIR, "rules")):
        assert _covered(os.path.join(VARIANTS_DIR, "rules", name)), name
