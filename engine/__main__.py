"""``python -m engine`` does the same as the ``cardinal`` command."""
import sys

from engine.cli import main

sys.exit(main())
