"""``python -m heapscope ...``: the same as the ``heapscope`` command."""

import sys

from .cli import main

sys.exit(main())
