"""A fixed budget of fuzz cases in CI: damaged WAV, FLAC, AIFF, RF64, project and strokes files
(random bytes, zeros, truncations, header fields and JSON values at their extremes) must each open
cleanly, open with warnings, or be refused naming the file; nothing else, nothing on stderr.

``tests/fuzz_inputs.py`` is the engine; run it by hand for more cases (``--cases 5000``).
"""

import json
import subprocess
import sys
from pathlib import Path

from fuzz_inputs import KINDS

CASES = 180
SEED = 16


def test_every_fuzz_case_opens_cleanly_or_is_refused_cleanly(tmp_path):
    summary_path = tmp_path / "summary.json"
    child = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).parent / "fuzz_inputs.py"),
            "--cases",
            str(CASES),
            "--seed",
            str(SEED),
            "--json",
            str(summary_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    summary = json.loads(summary_path.read_text())
    assert summary["failures"] == [], child.stdout[-5000:]
    assert child.returncode == 0 and child.stderr == "", child.stderr[-3000:]
    outcomes = summary["outcomes"]
    assert sum(outcomes.values()) == CASES
    for kind in KINDS:  # each kind met both damage it survives and damage it refuses
        assert outcomes.get(f"{kind}: refused", 0) > 0, kind
        opened = outcomes.get(f"{kind}: opened", 0) + outcomes.get(
            f"{kind}: opened with warnings", 0
        )
        assert opened > 0, kind
