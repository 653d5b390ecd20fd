"""Command-line parsing shared by the ``cardinal`` sub-commands and the bench tools."""
from __future__ import annotations

import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    """argparse with a one-line error on stderr and exit status 2, instead of the usage text."""

    def error(self, message):
        print(f"error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


class KeepLinesFormatter(argparse.HelpFormatter):
    """argparse help that prints a text with line breaks (an epilog table) as written and
    wraps a text without them, as the default formatter does."""

    def _fill_text(self, text, width, indent):
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def check_scheduler(addr: str) -> None:
    """Check a ``--scheduler`` address (``tcp://HOST:PORT`` or ``local:N``) before a run:
    ``ValueError`` (one line) if Dask distributed (the optional 'cluster' extra) is not
    installed or the address is not one. Here, not in :mod:`bench.cluster`, which imports
    distributed as it loads."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ValueError('--scheduler needs Dask distributed, which is not installed: '
                         'pip install "cardinal-engine[cluster]"') from None
    from bench.cluster import parse_scheduler
    parse_scheduler(addr)


__all__ = ["KeepLinesFormatter", "OneLineParser", "check_scheduler"]
