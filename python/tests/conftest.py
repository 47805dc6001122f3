"""Shared fixtures: phe's test vectors (the ones every level of ecrt is tested with), their keys as
phe objects and as JWK files, and the workspace's `ecrt` command."""

from __future__ import annotations

import base64
import json
import os
import pathlib
from typing import Any, Dict

import phe
import pytest

WORKSPACE = pathlib.Path(__file__).resolve().parents[2]
VECTORS = WORKSPACE / "fixtures" / "vectors"

# The sim backend's models are the ones the Rust tests build (cached by content under target/).
os.environ.setdefault("ECRT_SIM_CACHE", str(WORKSPACE / "target" / "ecrt-sim"))


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
        path = WORKSPACE / "target" / profile / "ecrt"
        if path.exists():
            return path
    pytest.fail("no target/debug/ecrt: run `cargo build -p ecrt-driver` (scripts/test does)")


def secrets_of(key: phe.PaillierPrivateKey) -> list:
    """p, q and λ as text would show them: decimal and hex."""
    lam = (key.p - 1) * (key.q - 1) // __import__("math").gcd(key.p - 1, key.q - 1)
    return [f(v) for v in (key.p, key.q, lam) for f in (str, hex, lambda x: format(x, "x"))]
