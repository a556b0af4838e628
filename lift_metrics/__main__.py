"""``python -m lift_metrics`` runs the command line."""

from __future__ import annotations

import sys

from lift_metrics.cli import main

sys.exit(main())
