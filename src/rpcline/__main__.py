"""``python -m rpcline``: the same command as the ``rpcline`` console script."""

import sys

from rpcline.cli import main

sys.exit(main())
