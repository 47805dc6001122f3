"""python/examples/fate_hetero_lr.py: FATE's vertical logistic regression, the arbiter decrypting
the gradients through ecrt, trains the same model as with fate_utils alone."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import WORKSPACE, require_fate_utils

require_fate_utils("the FATE example")

EXAMPLE = WORKSPACE / "python" / "examples" / "fate_hetero_lr.py"


def test_the_arbiter_decrypting_through_ecrt_trains_fate_utils_model() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(WORKSPACE / "python"), env.get("PYTHONPATH")]))
    command = [sys.executable, EXAMPLE, "--samples", "80", "--iterations", "4"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the same model as with fate_utils alone, bit for bit" in done.stdout, done.stdout
    assert "through ecrt (cpu)" in done.stderr, done.stderr
    accuracy = float(re.search(r"training accuracy (\S+) after 4 iterations", done.stdout).group(1))
    assert accuracy > 0.75, done.stdout  # it learns: the labels come from a linear model
