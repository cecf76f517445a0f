"""``python -m conformance.corpus DIR``: regenerate the written cassette corpus under DIR."""

import sys

from conformance.corpus.writer import main

sys.exit(main())
