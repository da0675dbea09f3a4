"""The sweep tests import their helpers (_sweep, _sweep_samples) from this directory."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
