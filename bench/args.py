"""Command-line parsing shared by the ``cardinal`` sub-commands and the bench tools."""
from __future__ import annotations

import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    """argparse with a one-line error on stderr and exit status 2, instead of the usage text."""

    def error(self, message):
        print(f"error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


__all__ = ["OneLineParser"]
