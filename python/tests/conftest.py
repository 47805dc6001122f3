"""Shared fixtures: phe's test vectors (the ones every level of ecrt is tested with), their keys as
phe objects and as JWK files, the workspace's `ecrt` command, and an `ecrt serve` holding the
vectors' keys."""

from __future__ import annotations

import base64
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from typing import Any, Dict, Optional

import phe
import pytest

WORKSPACE = pathlib.Path(__file__).resolve().parents[2]
VECTORS = WORKSPACE / "fixtures" / "vectors"


def target_directory() -> pathlib.Path:
    """Where cargo puts the build: $ECRT_TARGET_DIR (scripts/test sets it), else as cargo reports
    it (target/, $CARGO_TARGET_DIR or a configured build.target-dir)."""
    if os.environ.get("ECRT_TARGET_DIR"):
        return pathlib.Path(os.environ["ECRT_TARGET_DIR"])
    metadata = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=WORKSPACE,
        capture_output=True,
        text=True,
        check=True,
    )
    return pathlib.Path(json.loads(metadata.stdout)["target_directory"])


TARGET = target_directory()
# The sim backend's models are the ones the Rust tests build (cached by content in the target dir).
os.environ.setdefault("ECRT_SIM_CACHE", str(TARGET / "ecrt-sim"))


def b64_int(text: str) -> int:
    return int.from_bytes(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), "big")


def vectors(bits: int) -> Dict[str, Any]:
    return json.loads((VECTORS / f"phe-{bits}.json").read_text())


def private_key_of(jwk: Dict[str, Any]) -> phe.PaillierPrivateKey:
    public = phe.PaillierPublicKey(b64_int(jwk["pub"]["n"]))
    return phe.PaillierPrivateKey(public, b64_int(jwk["p"]), b64_int(jwk["q"]))


def encrypted(public: phe.PaillierPublicKey, case: Dict[str, Any]) -> phe.EncryptedNumber:
    return phe.EncryptedNumber(public, int(case["ciphertext"]["v"]), case["ciphertext"]["e"])


@pytest.fixture(scope="session")
def key_1024() -> phe.PaillierPrivateKey:
    return private_key_of(vectors(1024)["private_key"])


@pytest.fixture(scope="session")
def key_2048() -> phe.PaillierPrivateKey:
    return private_key_of(vectors(2048)["private_key"])


@pytest.fixture(scope="session")
def ecrt_command() -> pathlib.Path:
    """The `ecrt` command the Rust test build made (scripts/test builds it first)."""
    for profile in ("debug", "release"):
        path = TARGET / profile / "ecrt"
        if path.exists():
            return path
    pytest.fail(f"no {TARGET}/debug/ecrt: run `cargo build -p ecrt-driver` (scripts/test does)")


class Service:
    """An `ecrt serve` on the cpu backend (one thread) holding the private keys of phe's test
    vectors, at a socket in `directory`; `public_file(bits)` is a key's public JWK."""

    BITS = (1024, 2048, 3072)
    START_TIMEOUT = 30.0
    STOP_TIMEOUT = 10.0

    def __init__(self, command: pathlib.Path, directory: pathlib.Path) -> None:
        self.command = command
        self.directory = directory
        self.socket = directory / "s.sock"
        if len(os.fsencode(self.socket)) > 100:  # a Unix socket's path has 108 bytes at most
            self.socket = pathlib.Path(tempfile.mkdtemp(prefix="ecrt-")) / "s.sock"
        self.log = directory / "serve.log"
        self.key_files = []
        for bits in self.BITS:
            jwk = vectors(bits)["private_key"]
            path = directory / f"key-{bits}.jwk"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as file:
                json.dump(jwk, file)
            os.chmod(path, 0o600)  # `ecrt serve` refuses a key file others may read
            self.key_files.append(path)
            self.public_file(bits).write_text(json.dumps(jwk["pub"]))
        self.process: Optional[subprocess.Popen] = None

    def public_file(self, bits: int) -> pathlib.Path:
        return self.directory / f"key-{bits}.pub"

    def start(self) -> None:
        """Starts the service and waits until its socket accepts connections."""
        assert self.process is None or self.process.poll() is not None, "already running"
        args = [self.command, "serve", "--backend", "cpu", "--threads", "1", "--socket", self.socket]
        for path in self.key_files:
            args += ["--key", path]
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        deadline = time.monotonic() + self.START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                pytest.fail(f"ecrt serve exited with status {self.process.returncode}:\n{self.log.read_text()}")
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                try:
                    probe.connect(os.fspath(self.socket))
                    return
                except OSError:
                    pass
            if time.monotonic() > deadline:
                self.stop(signal.SIGKILL)
                pytest.fail(f"ecrt serve did not accept at {self.socket} within {self.START_TIMEOUT:.0f} s:\n{self.log.read_text()}")
            time.sleep(0.02)

    def decryptions(self) -> int:
        """The service's count of decryptions (`ecrt status --json`)."""
        status = subprocess.run(
            [self.command, "status", "--service", self.socket, "--json"], capture_output=True, check=True, timeout=10
        )
        return json.loads(status.stdout)["counters"]["decryptions"]

    def stop(self, sig: int = signal.SIGTERM) -> Optional[int]:
        """Signals the service (SIGTERM: it drains, removes its socket and exits 0) and waits for
        it; its exit status, or None if it was not running."""
        process, self.process = self.process, None
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(self.STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                pytest.fail(f"ecrt serve did not exit within {self.STOP_TIMEOUT:.0f} s of signal {sig}")
        return process.returncode


@pytest.fixture
def ecrt_service(ecrt_command: pathlib.Path, tmp_path: pathlib.Path):
    """A running `ecrt serve` (see Service), stopped after the test."""
    service = Service(ecrt_command, tmp_path)
    service.start()
    try:
        yield service
    finally:
        service.stop()
        if service.socket.parent != tmp_path:
            shutil.rmtree(service.socket.parent, ignore_errors=True)


def secrets_of(key: phe.PaillierPrivateKey) -> list:
    """p, q and λ as text would show them: decimal and hex."""
    lam = (key.p - 1) * (key.q - 1) // __import__("math").gcd(key.p - 1, key.q - 1)
    return [f(v) for v in (key.p, key.q, lam) for f in (str, hex, lambda x: format(x, "x"))]


def require_fate_utils(what: str) -> None:
    """Skips the calling test module, saying why, where fate_utils cannot be imported: PyPI has
    its wheels for CPython 3.11 on x86_64 Linux only."""
    try:
        import fate_utils  # noqa: F401
    except ImportError as error:
        pytest.skip(
            f"{what} needs fate_utils ({error}): pip install fate-utils, whose wheels are for CPython 3.11 "
            "on x86_64 Linux only (scripts/python-venv installs it where one exists)",
            allow_module_level=True,
        )
