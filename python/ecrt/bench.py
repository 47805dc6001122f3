"""``python -m ecrt.bench``: ecrt's ``Decryptor.decrypt`` against phe's own decryption, side by side
(``--fate``: ``ecrt.fate.Decryptor.decrypt_to_encoded`` against FATE's ``fate_utils``).

One key (phe's ``generate_paillier_keypair``), one list of ciphertexts, and interleaved passes: phe's
``[private_key.decrypt(x) for x in xs]`` (with gmpy2 when it is installed), ecrt on one thread and
ecrt on every thread. Every pass's values are checked against phe's. It reports the median pass of
each, the ratios ecrt / phe (below 1: ecrt is faster) and the scaling from one thread to all, and
the median time to open a key (validation included) from a phe object and from a JWK file.
The machine's load moves the absolute times; the ratios, measured in one run, hold better.

With ``--fate``, the same for FATE's Paillier: one key from ``fate_utils.paillier.keygen``, one
``CiphertextVector`` of floats encoded by its ``Coder``, and interleaved passes of fate_utils'
``sk.decrypt_to_encoded`` (one thread: it holds the GIL), of the same on every core (the vector cut
into one slice per process of a pool that holds the key: what a FATE job can do without ecrt), and
of ``ecrt.fate.Decryptor.decrypt_to_encoded`` on one thread and on all. Every pass's result is
checked against fate_utils' own, bit for bit.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import statistics
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List


def _b64(x: int) -> str:
    return base64.urlsafe_b64encode(x.to_bytes((x.bit_length() + 7) // 8, "big")).decode().rstrip("=")


def _jwk(private: Any) -> Dict[str, Any]:
    """pheutil's private key format."""
    n = private.public_key.n
    return {
        "kty": "DAJ",
        "key_ops": ["decrypt"],
        "p": _b64(private.p),
        "q": _b64(private.q),
        "pub": {"kty": "DAJ", "alg": "PAI-GN1", "key_ops": ["encrypt"], "n": _b64(n), "kid": "ecrt bench"},
        "kid": "ecrt bench",
    }


def _time(run: Callable[[], Any]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def _interleaved(methods: Dict[str, Callable[[], None]], rounds: int) -> Dict[str, float]:
    """Each method once per round, in turn; the median pass of each, in seconds."""
    passes: Dict[str, List[float]] = {name: [] for name in methods}
    for r in range(rounds):
        print(f"round {r + 1}/{rounds}", file=sys.stderr)
        for name, run in methods.items():
            passes[name].append(_time(run))
    return {name: statistics.median(times) for name, times in passes.items()}


def _print_passes(median: Dict[str, float], per_decryption_us: Dict[str, float]) -> None:
    for name, t in median.items():
        print(f"  {name:<24} {1e3 * t:9.1f} ms   {per_decryption_us[name]:8.0f} µs per decryption")


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ecrt.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--bits", type=int, default=2048, help="key size (default 2048)")
    parser.add_argument("--count", type=int, default=200, help="ciphertexts per pass (default 200)")
    parser.add_argument("--rounds", type=int, default=5, help="passes of each method (default 5)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="ecrt's threads for 'all'")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--fate", action="store_true", help="against FATE's fate_utils instead of phe")
    args = parser.parse_args(argv)
    if args.count < 1 or args.rounds < 1 or args.threads < 1:
        parser.error("--count, --rounds and --threads must be at least 1")
    if args.fate:
        return _fate(args)

    try:
        import phe
        import phe.util
    except ImportError:
        print("ecrt.bench needs python-paillier: pip install phe gmpy2", file=sys.stderr)
        return 2
    import ecrt

    print(f"generating a {args.bits}-bit key with phe ...", file=sys.stderr)
    public, private = phe.generate_paillier_keypair(n_length=args.bits)
    rng = random.Random(1)
    values = [rng.randint(-(2**60), 2**60) if i % 2 else rng.uniform(-1e6, 1e6) for i in range(args.count)]
    numbers = [public.encrypt(v) for v in values]
    expected = [private.decrypt(x) for x in numbers]

    with tempfile.TemporaryDirectory() as tmp:
        key_file = os.path.join(tmp, "key.jwk")
        with open(key_file, "w") as f:
            json.dump(_jwk(private), f)
        opens = {"phe_object": [], "jwk_file": []}
        for _ in range(max(args.rounds, 5)):
            for name, source in (("phe_object", private), ("jwk_file", key_file)):
                started = time.perf_counter()
                ecrt.Decryptor(source, threads=1).close()
                opens[name].append(time.perf_counter() - started)

    one = ecrt.Decryptor(private, threads=1)
    many = ecrt.Decryptor(private, threads=args.threads)

    def checked(decrypt: Callable[[List[Any]], List[Any]]) -> Callable[[], None]:
        def run() -> None:
            if decrypt(numbers) != expected:
                raise SystemExit("ecrt.bench: a pass returned values other than phe's")

        return run

    methods = {
        "phe": checked(lambda xs: [private.decrypt(x) for x in xs]),
        "ecrt_1_thread": checked(one.decrypt),
        f"ecrt_{args.threads}_threads": checked(many.decrypt),
    }
    median = _interleaved(methods, args.rounds)
    one.close()
    many.close()

    all_threads = f"ecrt_{args.threads}_threads"
    report = {
        "tool": "python -m ecrt.bench",
        "key_bits": args.bits,
        "count": args.count,
        "rounds": args.rounds,
        "threads": args.threads,
        "gmpy2": bool(getattr(phe.util, "HAVE_GMP", False)),
        "median_pass_s": median,
        "per_decryption_us": {name: 1e6 * t / args.count for name, t in median.items()},
        "ratio_ecrt_1_thread_to_phe": median["ecrt_1_thread"] / median["phe"],
        "ratio_ecrt_all_threads_to_phe": median[all_threads] / median["phe"],
        "thread_scaling": median["ecrt_1_thread"] / median[all_threads],
        "key_open_ms": {name: 1e3 * statistics.median(times) for name, times in opens.items()},
        "verified": args.count * args.rounds,
    }
    print(f"{args.bits}-bit key, {args.count} ciphertexts, median of {args.rounds} interleaved passes"
          f" (phe with{'' if report['gmpy2'] else 'out'} gmpy2)")
    _print_passes(median, report["per_decryption_us"])
    print(f"  ecrt 1 thread / phe          {report['ratio_ecrt_1_thread_to_phe']:.3f}")
    print(f"  ecrt {args.threads} threads / phe        {report['ratio_ecrt_all_threads_to_phe']:.3f}")
    print(f"  throughput {args.threads} threads / 1     {report['thread_scaling']:.2f}x")
    for name, ms in report["key_open_ms"].items():
        print(f"  opening the key ({name}) {ms:6.1f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0


# The key of a pool process (--fate), from its pickled state.
_pool_sk: Any = None


def _pool_open(sk_state: bytes) -> None:
    global _pool_sk
    from fate_utils import paillier  # type: ignore[import-not-found]

    _pool_sk = paillier.SK()
    _pool_sk.__setstate__(sk_state)


def _pool_decrypt(vector: Any) -> Any:
    return _pool_sk.decrypt_to_encoded(vector)


def _fate(args: argparse.Namespace) -> int:
    """``--fate``: fate_utils' ``sk.decrypt_to_encoded`` against ``ecrt.fate.Decryptor``."""
    try:
        import numpy as np
        from fate_utils import paillier  # type: ignore[import-not-found]
    except ImportError as error:
        print(f"ecrt.bench --fate needs fate_utils and numpy ({error}): pip install fate-utils numpy", file=sys.stderr)
        return 2
    import concurrent.futures
    import multiprocessing

    import ecrt
    import ecrt.fate

    print(f"generating a {args.bits}-bit key with fate_utils ...", file=sys.stderr)
    sk, pk, coder = paillier.keygen(args.bits)
    rng = random.Random(1)
    values = np.array([rng.uniform(-1e6, 1e6) for _ in range(args.count)])  # gradients, say
    vector = pk.encrypt_encoded(coder.encode_f64_vec(values), True)
    expected = bytes(sk.decrypt_to_encoded(vector).__getstate__())

    opens = []
    for _ in range(max(args.rounds, 5)):
        started = time.perf_counter()
        ecrt.fate.Decryptor(sk, threads=1).close()
        opens.append(time.perf_counter() - started)
    one = ecrt.fate.Decryptor(sk, threads=1)
    many = ecrt.fate.Decryptor(sk, threads=args.threads)
    # fate_utils on every core: a pool of processes, each holding the key, one slice each.
    pool = concurrent.futures.ProcessPoolExecutor(
        args.threads,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_pool_open,
        initargs=(bytes(sk.__getstate__()),),
    )
    step = -(-args.count // args.threads)
    slices = [vector.slice(start, min(step, args.count - start)) for start in range(0, args.count, step)]
    list(pool.map(_pool_decrypt, slices))  # the processes started and their keys opened

    def checked(decrypt: Callable[[Any], Any]) -> Callable[[], None]:
        def run() -> None:
            if bytes(decrypt(vector).__getstate__()) != expected:
                raise SystemExit("ecrt.bench: a pass returned a vector other than fate_utils'")

        return run

    expected_values = coder.decode_f64_vec(sk.decrypt_to_encoded(vector))

    def in_processes() -> None:
        parts = list(pool.map(_pool_decrypt, slices))
        got = np.concatenate([coder.decode_f64_vec(part) for part in parts])
        if not np.array_equal(got, expected_values):
            raise SystemExit("ecrt.bench: the pool's pass returned values other than fate_utils'")

    # Fixed names, whatever --threads is: "threads" says how many "all" was.
    passes = {
        "fate_utils_1_thread": "fate_utils' sk.decrypt_to_encoded(vector), one thread (it holds the GIL)",
        "fate_utils_all_processes": "the same in a pool of `threads` processes, each holding the key, one slice each",
        "ecrt_1_thread": "ecrt.fate.Decryptor(sk, threads=1).decrypt_to_encoded(vector), the cpu backend",
        "ecrt_all_threads": "ecrt.fate.Decryptor(sk, threads=threads).decrypt_to_encoded(vector), the cpu backend",
    }
    methods = {
        "fate_utils_1_thread": checked(sk.decrypt_to_encoded),
        "fate_utils_all_processes": in_processes,
        "ecrt_1_thread": checked(one.decrypt_to_encoded),
        "ecrt_all_threads": checked(many.decrypt_to_encoded),
    }
    try:
        median = _interleaved(methods, args.rounds)
    finally:
        one.close()
        many.close()
        pool.shutdown()

    report = _fate_report(args, median, passes, 1e3 * statistics.median(opens))
    print(f"{args.bits}-bit key, a vector of {args.count} ciphertexts, median of {args.rounds} interleaved passes,"
          f" all = {args.threads} threads or processes (fate_utils {report['fate_utils_version']})")
    _print_passes(median, report["per_decryption_us"])
    for name, label in (
        ("ratio_ecrt_1_thread_to_fate_utils_1_thread", "ecrt 1 thread / fate_utils 1 thread"),
        ("ratio_ecrt_all_threads_to_fate_utils_1_thread", "ecrt all threads / fate_utils 1 thread"),
        ("ratio_ecrt_all_threads_to_fate_utils_all_processes", "ecrt all threads / fate_utils all processes"),
    ):
        print(f"  {label:<45} {report[name]:.3f}")
    print(f"  {'throughput ecrt all threads / 1':<45} {report['thread_scaling']:.2f}x")
    print(f"  {'throughput fate_utils all processes / 1':<45} {report['process_scaling_fate_utils']:.2f}x")
    print(f"  {'opening the key (fate_utils SK)':<45} {report['key_open_ms']:.1f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    return 0


def _fate_report(
    args: argparse.Namespace, median: Dict[str, float], passes: Dict[str, str], key_open_ms: float
) -> Dict[str, Any]:
    """``--fate``'s report: the same keys whatever the options (lab/src/python_bench.rs reads it).
    Times in the unit their name ends with; a ratio is a time over a time (below 1: ecrt is faster),
    a scaling a throughput over a throughput."""
    from importlib.metadata import version

    return {
        "tool": "python -m ecrt.bench --fate",
        "key_bits": args.bits,
        "count": args.count,
        "rounds": args.rounds,
        "threads": args.threads,
        "fate_utils_version": version("fate-utils"),
        "passes": passes,
        "median_pass_s": median,
        "per_decryption_us": {name: 1e6 * t / args.count for name, t in median.items()},
        "ratio_ecrt_1_thread_to_fate_utils_1_thread": median["ecrt_1_thread"] / median["fate_utils_1_thread"],
        "ratio_ecrt_all_threads_to_fate_utils_1_thread": median["ecrt_all_threads"] / median["fate_utils_1_thread"],
        "ratio_ecrt_all_threads_to_fate_utils_all_processes": (
            median["ecrt_all_threads"] / median["fate_utils_all_processes"]
        ),
        "thread_scaling": median["ecrt_1_thread"] / median["ecrt_all_threads"],
        "process_scaling_fate_utils": median["fate_utils_1_thread"] / median["fate_utils_all_processes"],
        "key_open_ms": key_open_ms,
        "verified": args.count * args.rounds,
    }


if __name__ == "__main__":
    sys.exit(main())
