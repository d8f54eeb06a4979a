"""`python -m porter` runs the command line."""

import sys

from porter.cli import main

sys.exit(main())
