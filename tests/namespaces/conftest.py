"""Write the record of passing derivative checks (see _check.py) when KENAZ_COVERAGE_JSON is set."""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def pytest_sessionfinish(session, exitstatus):
    target = os.environ.get("KENAZ_COVERAGE_JSON")
    if not target:
        return
    from _check import RECORD

    Path(target).write_text(json.dumps({k: sorted(v) for k, v in sorted(RECORD.items())}, indent=1))
