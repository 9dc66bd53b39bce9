"""`python -m simulator serve|stop` (see cli.py) and `python -m simulator.bench`."""

import sys

from .cli import main

sys.exit(main())
