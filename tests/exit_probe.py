"""A script run in a Python of its own, to see how its interpreter exits: a daemon thread inside
native code as the interpreter exits aborts the process (see :mod:`spectropaint.transforms.
joined_at_exit`), which a test cannot stage in its own process."""

import subprocess
import sys
import textwrap


def printed_before_a_clean_exit(script: str) -> list[str]:
    """The lines ``script`` (dedented) printed; fails the test unless its process exited with
    status 0 and without the C++ runtime's "terminate called"."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "terminate called" not in done.stderr
    return done.stdout.splitlines()
