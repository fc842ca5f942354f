"""``python -m judge``: see :mod:`judge.cli`."""

import sys

from .cli import main

sys.exit(main())
