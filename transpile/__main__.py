"""`python -m transpile ...`: the same as the `transpile` command."""

import sys

from .cli import main

sys.exit(main())
