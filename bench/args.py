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


__all__ = ["KeepLinesFormatter", "OneLineParser"]
