"""``python -m conformance.cli``: the same as the ``toolcall-conformance`` console script."""

import sys

from conformance.cli import main

sys.exit(main())
