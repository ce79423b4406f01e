"""``python -m spectropaint``: the same as the ``spectropaint`` command."""

import sys

from spectropaint.app.cli import main

sys.exit(main())
