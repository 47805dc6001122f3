"""python/examples/ray_decrypt.py: Ray tasks (Ray started on this machine, two CPUs) decrypt
their partitions through the `ecrt serve` of the conftest fixture, with the public key alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import WORKSPACE, Service, vectors

try:
    import ray  # noqa: F401
except ImportError as error:  # missing, or an install that does not load
    pytest.skip(f"the Ray example needs Ray ({error}): pip install ray (scripts/python-venv installs it)", allow_module_level=True)

EXAMPLE = WORKSPACE / "python" / "examples" / "ray_decrypt.py"


def run_example(service: Service, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    # Ray's workers import ecrt as the driver does; and no usage report leaves the machine.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(WORKSPACE / "python"), env.get("PYTHONPATH")]))
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    command = [sys.executable, EXAMPLE, "--key", service.public_file(1024), "--socket", service.socket]
    command += ["--num-cpus", "2", "--partitions", "4", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done


def test_ray_tasks_decrypt_their_partitions_through_the_service(ecrt_service: Service) -> None:
    done = run_example(ecrt_service, "--count", "200")
    assert "decrypted 200 in 4 Ray tasks" in done.stderr, done.stderr
    assert "all 200 values equal their plaintexts" in done.stderr, done.stderr
    assert ecrt_service.decryptions() == 200  # every one through the service


def test_ray_tasks_decrypt_phes_vectors_to_phes_values(ecrt_service: Service, tmp_path) -> None:
    cases = vectors(1024)["cases"]
    ciphertexts = tmp_path / "cts.jsonl"
    ciphertexts.write_text("".join(json.dumps(case["ciphertext"]) + "\n" for case in cases))
    done = run_example(ecrt_service, "--in", str(ciphertexts))
    got = [json.loads(line) for line in done.stdout.splitlines()]
    expected = [case["value"] for case in cases]
    assert [(type(v), repr(v)) for v in got] == [(type(v), repr(v)) for v in expected]
