"""``python -m gui [TRACE] [--strategy NAME]``: open heapscope's window."""

import sys

from .app import main

sys.exit(main())
