"""``python -m lecturecopilot <command>``: the operator commands of :mod:`lecturecopilot_ops.cli`
(``up``, ``down``, ``demo``, ``process``, …). Only wiring: the shared package itself never imports
the tooling above it."""

import sys

from lecturecopilot_ops.cli import main

sys.exit(main())
