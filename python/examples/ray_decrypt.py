"""Fanning Paillier decryption out over a Ray cluster, each host through its own `ecrt serve`.

Each host runs an `ecrt serve` that holds the private key (and drives the host's cards); the
driver and the tasks hold only the public key. The driver splits the ciphertexts into partitions,
and each Ray task decrypts its partition with ``ecrt.Decryptor(public_key, backend="service")``
through the service of the host it runs on. Ray does the scheduling; ecrt adds none of its own.

    ecrt keygen --bits 2048 --out key.jwk --public-out key.pub     # key.jwk: mode 0600
    ecrt serve --socket /tmp/ecrt.sock --key key.jwk &             # on every host
    python ray_decrypt.py --key key.pub --socket /tmp/ecrt.sock --count 2000
    ecrt encrypt --key key.pub -- 42 -7 3.5 > cts.jsonl
    python ray_decrypt.py --key key.pub --socket /tmp/ecrt.sock --in cts.jsonl    # prints 42 -7 3.5

Without ``--in``, Ray tasks encrypt ``--count`` random ints and floats with phe (standing in for
the parties that encrypt in a real deployment) and the driver checks every decrypted value
against its plaintext; with ``--in`` (JSON lines of pheutil ciphertexts, as ``ecrt encrypt``
writes), the values are printed as JSON lines, in order, as ``ecrt decrypt`` prints them.
``--address auto`` joins a running Ray cluster; by default Ray starts on this machine alone.
``--socket`` is the path of the service on every host: ``$ECRT_SOCKET`` on the task's host, or
``/run/ecrt/ecrt.sock``, by default.

What travels to a task is ``n`` and ``(ciphertext, exponent)`` pairs of ints, which pickle
compactly and leave the tasks independent of how phe lays out its objects. phe's
``EncryptedNumber``s pickle too (each partition then carries the public key once, about 4 % more
at 2048 bits) and ``Decryptor.decrypt`` would take them as they are.

A task whose service is gone fails with ``ecrt.DeviceError`` (before the batch: ``no ecrt service
at SOCKET``) or ``ecrt.BatchError`` (mid-batch: each unanswered item ``closed the connection``);
a new ``Decryptor`` connects again once the service is back, so the partition can be resubmitted.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
import time
from typing import Any, List, Optional, Sequence, Tuple

import ecrt
import phe
import ray

Pair = Tuple[int, int]  # an EncryptedNumber's ciphertext and exponent


@ray.remote
def encrypt_partition(n: int, values: Sequence[Any]) -> List[Pair]:
    """What a party does: encrypts its values under the public key (phe, obfuscated)."""
    public = phe.PaillierPublicKey(n)
    numbers = [public.encrypt(v) for v in values]
    return [(x.ciphertext(be_secure=False), x.exponent) for x in numbers]


@ray.remote
def decrypt_partition(n: int, pairs: Sequence[Pair], socket: Optional[str]) -> List[Any]:
    """Decrypts a partition through this host's `ecrt serve`: the values phe's decrypt gives."""
    public = phe.PaillierPublicKey(n)
    numbers = [phe.EncryptedNumber(public, c, e) for c, e in pairs]
    with ecrt.Decryptor(public, backend="service", socket=socket) as decryptor:
        return decryptor.decrypt(numbers, progress=False)


def public_modulus(path: str) -> int:
    """n of a pheutil JWK: a public key, or a private key's public half."""
    jwk = json.loads(open(path).read())
    text = jwk.get("pub", jwk)["n"]
    return int.from_bytes(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), "big")


def read_ciphertexts(path: str) -> List[Pair]:
    """JSON lines of pheutil ciphertexts {"v": "<decimal>", "e": exponent}, or bare integers."""
    stream = sys.stdin if path == "-" else open(path)
    pairs = []
    for line in stream:
        if line.strip():
            item = json.loads(line)
            pairs.append((int(item["v"]), int(item["e"])) if isinstance(item, dict) else (int(item), 0))
    return pairs


def split(items: Sequence[Any], parts: int) -> List[Sequence[Any]]:
    size = -(-len(items) // max(1, parts))
    return [items[i : i + size] for i in range(0, len(items), size)] if items else []


def random_values(count: int, seed: int) -> List[Any]:
    rng = random.Random(seed)
    return [rng.randint(-(10**12), 10**12) if i % 2 else rng.uniform(-1e6, 1e6) for i in range(count)]


def run(
    key: str,
    socket: Optional[str] = None,
    count: int = 2000,
    ciphertexts: Optional[str] = None,
    partitions: int = 8,
    address: Optional[str] = None,
    num_cpus: Optional[int] = None,
    seed: int = 0,
    out: Any = sys.stdout,
) -> List[Any]:
    """Decrypts on Ray; returns the values (and checks them against the plaintexts it encrypted)."""
    n = public_modulus(key)
    if address is None:
        ray.init(num_cpus=num_cpus, include_dashboard=False)
    else:
        ray.init(address=address)
    try:
        started = time.perf_counter()
        if ciphertexts is None:
            values = random_values(count, seed)
            # The encrypted partitions stay in Ray's object store: the decrypting tasks take them.
            parts: List[Any] = [encrypt_partition.remote(n, part) for part in split(values, partitions)]
            ray.wait(parts, num_returns=len(parts))
            what = f"encrypted {count} numbers with phe in {time.perf_counter() - started:.1f} s; "
        else:
            values = None
            pairs = read_ciphertexts(ciphertexts)
            parts = split(pairs, partitions)
            what = f"read {len(pairs)} ciphertexts; "
        started = time.perf_counter()
        results = ray.get([decrypt_partition.remote(n, part, socket) for part in parts])
        got = [v for part in results for v in part]
        elapsed = time.perf_counter() - started
    finally:
        ray.shutdown()
    print(f"{what}decrypted {len(got)} in {len(results)} Ray tasks in {elapsed:.1f} s", file=sys.stderr)
    if values is not None:
        wrong = [i for i, (g, v) in enumerate(zip(got, values)) if type(g) is not type(v) or g != v]
        if wrong or len(got) != len(values):
            raise SystemExit(f"{len(wrong)} values differ from their plaintexts, the first at index {wrong[:1]}")
        print(f"all {len(got)} values equal their plaintexts", file=sys.stderr)
    else:
        for v in got:
            print(json.dumps(v), file=out)
    return got


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--key", required=True, help="the public key (pheutil JWK) the services hold the private key of")
    parser.add_argument("--socket", help="the service's socket on every host (default: $ECRT_SOCKET, /run/ecrt/ecrt.sock)")
    parser.add_argument("--count", type=int, default=2000, help="numbers to encrypt and decrypt (default 2000)")
    parser.add_argument("--in", dest="ciphertexts", help="decrypt these ciphertexts (JSON lines, `-` for stdin) instead")
    parser.add_argument("--partitions", type=int, default=8, help="partitions, one Ray task each (default 8)")
    parser.add_argument("--address", help="a Ray cluster to join (`auto`); default: a local Ray")
    parser.add_argument("--num-cpus", type=int, help="CPUs of the local Ray (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random numbers")
    args = parser.parse_args(argv)
    run(args.key, args.socket, args.count, args.ciphertexts, args.partitions, args.address, args.num_cpus, args.seed)


if __name__ == "__main__":
    main()
