"""``python -m judge``: see :mod:`judge.commands.cli`."""

import sys

from .commands.cli import main

sys.exit(main())
