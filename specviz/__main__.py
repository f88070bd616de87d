"""Entry point of ``python -m specviz``."""

import sys

from .cli import main

sys.exit(main())
