"""ecrt.fate against FATE's own fate_utils: keys and vectors fate_utils makes, floats and ints through
its coders and its homomorphic operations, every result the same PlaintextVector, bit for bit, that
fate_utils' decrypt_to_encoded gives; the sim and service backends; the errors."""

from __future__ import annotations

import json
import math
import pickle
import random
import re
import struct
from typing import Any, List, Tuple

import ecrt
import ecrt.bench
import ecrt.fate
import pytest

from conftest import Service, private_key_of, require_fate_utils, vectors

require_fate_utils("ecrt.fate's tests")
import numpy as np  # noqa: E402 (fate_utils needs numpy)
from fate_utils import paillier  # noqa: E402

# 4096 bits: fate_utils takes about 30 ms a decryption, so fewer values.
SIZES = [(1024, 40), (2048, 40), (3072, 16), (4096, 8)]


def state(obj: Any) -> bytes:
    return bytes(obj.__getstate__())


def integer(x: int) -> bytes:
    """rug's bincode of an integer (ecrt.fate writes its own; this is the test's)."""
    digits = str(x) if abs(x).bit_length() <= 32 else format(x, "x")
    radix = 10 if abs(x).bit_length() <= 32 else 16
    return struct.pack("<iQ", radix, len(digits)) + digits.encode()


def ciphertext_vector(items: List[Tuple[int, int]]) -> Any:
    """A CiphertextVector of raw (c, exponent) pairs, made through fate_utils' own __setstate__."""
    vector = paillier.CiphertextVector()
    vector.__setstate__(struct.pack("<Q", len(items)) + b"".join(integer(c) + struct.pack("<i", e) for c, e in items))
    return vector


def scalar_state(pk: Any, plaintext: Any) -> bytes:
    """A Plaintext has no state of its own: its deterministic encryption (no obfuscation) in a
    vector is, and it tells the significand and the exponent apart."""
    return state(paillier.CiphertextVector.zeros(1).add_scalar(pk, pk.encrypt_encoded_scalar(plaintext, False)))


def n_of(pk: Any) -> int:
    radix, length = struct.unpack_from("<iQ", state(pk))
    return int(state(pk)[12 : 12 + length].decode(), radix)


def secrets_of(sk: Any) -> List[str]:
    """p, q and λ of a fate_utils SK, as text would show them."""
    radix, length = struct.unpack_from("<iQ", state(sk))
    p = int(state(sk)[12 : 12 + length].decode(), radix)
    n = n_of_sk(sk)
    q = n // p
    lam = (p - 1) * (q - 1) // math.gcd(p - 1, q - 1)
    return [f(v) for v in (p, q, lam) for f in (str, hex, lambda x: format(x, "x"))]


def n_of_sk(sk: Any) -> int:
    data, offset, values = state(sk), 0, []
    for _ in range(3):
        radix, length = struct.unpack_from("<iQ", data, offset)
        values.append(int(data[offset + 12 : offset + 12 + length].decode(), radix))
        offset += 12 + length
    return values[2]


def fate_key(p: int, q: int) -> Tuple[Any, Any]:
    """The fate_utils SK and PK of the primes p and q, with the fields fate_utils derives."""
    p, q = min(p, q), max(p, q)
    n = p * q
    g = n + 1
    hp = pow((pow(g, p - 1, p * p) - 1) // p, -1, p)
    hq = pow((pow(g, q - 1, q * q) - 1) // q, -1, q)
    fields = [p, q, n, p - 1, q - 1, p * p, q * q, pow(p, -1, q), hp, hq]
    sk, pk = paillier.SK(), paillier.PK()
    sk.__setstate__(b"".join(integer(x) for x in fields))
    pk.__setstate__(integer(n) + integer(n * n) + integer(n // 2))
    return sk, pk


def values(count: int, seed: int) -> Tuple[Any, Any]:
    """Floats of every magnitude and sign (positive exponents too), and 64-bit ints."""
    rng = random.Random(seed)
    floats = [0.0, -0.0, 1.0, -1.0, 0.1, 1e30, -2.5e300, 5e-324, -1e-300, 123456.789]
    floats += [rng.choice([-1, 1]) * rng.random() * 10 ** rng.randint(-30, 30) for _ in range(count - len(floats))]
    ints = [0, 1, -1, 2**63 - 1, -(2**63), 42, -7]
    ints += [rng.randint(-(2**63), 2**63 - 1) for _ in range(count - len(ints))]
    return np.array(floats[:count], dtype=np.float64), np.array(ints[:count], dtype=np.int64)


def assert_same(ours: Any, theirs: Any) -> None:
    assert type(ours) is type(theirs) is paillier.PlaintextVector
    assert state(ours) == state(theirs)


@pytest.mark.parametrize("bits,count", SIZES)
def test_fate_utils_vectors_decrypt_to_what_fate_utils_decrypts(bits: int, count: int) -> None:
    sk, pk, coder = paillier.keygen(bits)
    assert n_of(pk).bit_length() == bits
    floats, ints = values(count, bits)
    encoded = [
        coder.encode_f64_vec(floats),
        coder.encode_i64_vec(ints),
        coder.encode_f32_vec(floats[1:6].astype(np.float32)),
        coder.encode_i32_vec(np.array([0, -1, 2**31 - 1, -(2**31)], dtype=np.int32)),
    ]
    cts = [pk.encrypt_encoded(e, True) for e in encoded]
    # FATE's arithmetic on them: sums (exponents aligned), products with plaintexts, a matrix product.
    cts.append(cts[0].add(pk, cts[0].mul(pk, coder.encode_f64_vec(floats[::-1].copy()))))
    cts.append(cts[1].sub(pk, cts[1]).add(pk, cts[1].mul_scalar(pk, coder.encode_i64(-3))))
    cts.append(cts[0].slice(0, 4).rmatmul(pk, coder.encode_f64_vec(floats[:8].copy()), [4, 1], [2, 4]))
    with ecrt.fate.Decryptor(sk, threads=2) as decryptor:
        assert decryptor.n == n_of(pk) and decryptor.backend == "cpu"
        for ct in cts:
            ours = decryptor.decrypt_to_encoded(ct)
            assert_same(ours, sk.decrypt_to_encoded(ct))
        assert list(coder.decode_f64_vec(decryptor.decrypt_to_encoded(cts[0]))) == list(floats)
        assert list(coder.decode_i64_vec(decryptor.decrypt_to_encoded(cts[1]))) == list(ints)
        # One at a time, as decrypt_to_encoded_scalar.
        for x in (floats[0], floats[5], floats[6], floats[-1]):
            ct = pk.encrypt_encoded_scalar(coder.encode_f64(float(x)), True)
            ours = decryptor.decrypt_to_encoded_scalar(ct)
            assert scalar_state(pk, ours) == scalar_state(pk, sk.decrypt_to_encoded_scalar(ct))
            assert coder.decode_f64(ours) == x
        # An empty vector is an empty vector.
        empty = paillier.CiphertextVector()
        assert_same(decryptor.decrypt_to_encoded(empty), sk.decrypt_to_encoded(empty))
        assert decryptor.public_key.__getstate__() == pk.__getstate__()


def test_random_ciphertexts_of_every_sign_and_exponent_decrypt_bit_for_bit() -> None:
    """Ciphertexts of random plaintexts mod n (as an overflowed sum gives), negative ones as
    fate_utils leaves them, and exponents at i32's ends."""
    sk, pk, _ = paillier.keygen(1024)
    n = n_of(pk)
    n2 = n * n
    rng = random.Random(7)
    items = []
    while len(items) < 100:
        c = rng.randrange(1, n2)
        if math.gcd(c, n) == 1:
            items.append((c - n2 if len(items) % 3 == 0 else c, rng.choice([0, 5, -13, 2**31 - 1, -(2**31)])))
    vector = ciphertext_vector(items)
    with ecrt.fate.Decryptor(sk) as decryptor:
        ours = decryptor.decrypt_to_encoded(vector)
    assert_same(ours, sk.decrypt_to_encoded(vector))
    assert sum(c < 0 for c, _ in items) == 34


def test_the_key_opens_from_its_state_its_pickle_and_fates_wrapper() -> None:
    sk, pk, coder = paillier.keygen(1024)
    ct = pk.encrypt_encoded(coder.encode_f64_vec(np.array([2.5, -0.75])), True)
    expected = sk.decrypt_to_encoded(ct)

    class FateSK:  # what FATE's own paillier module wraps fate_utils' SK in
        def __init__(self, sk: Any) -> None:
            self.sk = sk

    for key in (sk.__getstate__(), state(sk), bytearray(state(sk)), pickle.loads(pickle.dumps(sk)), FateSK(sk)):
        with ecrt.fate.Decryptor(key) as decryptor:
            assert_same(decryptor.decrypt_to_encoded(ct), expected)


def test_bad_items_fail_alone_naming_their_index_and_nothing_is_lost() -> None:
    sk, pk, coder = paillier.keygen(1024)
    other_sk, other_pk, _ = paillier.keygen(2048)
    n = n_of(pk)
    n2 = n * n
    good = pk.encrypt_encoded(coder.encode_f64_vec(np.array([1.5, -2.0, 3.25])), True)
    (c0, e0), (c1, e1), (c2, e2) = [(int(x.decode(), 16), e) for x, e in parse(state(good))]
    foreign = parse(state(other_pk.encrypt_encoded(coder.encode_f64_vec(np.array([1.0])), True)))[0]
    vector = ciphertext_vector(
        [(c0, e0), (0, 0), (c1, e1), (n2, 0), (n2 + 5, 0), (int(foreign[0].decode(), 16), foreign[1]), (-n2, 0), (c2, e2)]
    )
    expected_bad = [1, 3, 4, 5, 6]
    with ecrt.fate.Decryptor(sk) as decryptor:
        with pytest.raises(ecrt.BatchError) as raised:
            decryptor.decrypt_to_encoded(vector)
        error = raised.value
        assert [e.index for e in error.errors] == expected_bad
        assert all(type(e.exception) is ValueError for e in error.errors)
        reasons = {e.index: e.reason for e in error.errors}
        assert re.search(r"0 < c < n² \(\d+ bits\), this one has", reasons[3]), reasons[3]
        assert "0 < c < n²" in reasons[4] and "0 < c < n²" in reasons[5]  # the foreign key's is too long
        assert "-n² < c < n²" in reasons[6]
        assert "5 of 8 items failed" in str(error) and "item 1: ValueError" in str(error)
        assert [error.results[i] for i in expected_bad] == [None] * 5
        theirs = sk.decrypt_to_encoded(good).tolist()
        for i, j in ((0, 0), (2, 1), (7, 2)):
            assert scalar_state(pk, error.results[i]) == scalar_state(pk, theirs[j])
        text = str(error) + repr(error.errors)
        assert not [s for s in secrets_of(sk) if s in text]

        listed = decryptor.decrypt_to_encoded(vector, errors="none")
        assert [v is None for v in listed] == [i in expected_bad for i in range(8)]
        assert [coder.decode_f64(listed[i]) for i in (0, 2, 7)] == [1.5, -2.0, 3.25]

        # One ciphertext: BatchError naming item 0, or None.
        scalar = other_pk.encrypt_encoded_scalar(coder.encode_f64(1.0), True)
        with pytest.raises(ecrt.BatchError) as raised:
            decryptor.decrypt_to_encoded_scalar(scalar)
        assert [e.index for e in raised.value.errors] == [0]
        assert decryptor.decrypt_to_encoded_scalar(scalar, errors="none") is None

        # And the decryptor goes on.
        assert_same(decryptor.decrypt_to_encoded(good), sk.decrypt_to_encoded(good))


def parse(data: bytes) -> List[Tuple[bytes, int]]:
    """The (digits, exponent) pairs of a vector's state, for the tests to pick apart."""
    (count,) = struct.unpack_from("<Q", data)
    offset, items = 8, []
    for _ in range(count):
        radix, length = struct.unpack_from("<iQ", data, offset)
        assert radix == 16
        digits = data[offset + 12 : offset + 12 + length]
        (exponent,) = struct.unpack_from("<i", data, offset + 12 + length)
        items.append((digits, exponent))
        offset += 16 + length
    return items


def test_bad_keys_and_arguments_raise_without_a_secret() -> None:
    sk, pk, coder = paillier.keygen(1024)
    secrets = secrets_of(sk)
    data = state(sk)
    first_length = struct.unpack_from("<iQ", data)[1]
    p_digits = data[12 : 12 + first_length]
    # The same key with one prime replaced by another number: p·q no longer equals n.
    tampered = bytes(data).replace(p_digits, format(int(p_digits, 16) + 2, "x").encode(), 1)
    cases = [
        (data[:-3], "cpu", ValueError, "not a fate_utils SK or PK state"),
        (data + b"\0", "cpu", ValueError, "not a fate_utils SK or PK state"),
        (tampered, "cpu", ValueError, "p·q does not equal the public modulus n"),
        (bytes(data).replace(b"\x10\x00\x00\x00", b"\x25\x00\x00\x00", 1), "cpu", ValueError, "radix is 37"),
        (struct.pack("<iQ", 16, 2) + b"+5", "cpu", ValueError, "not a fate_utils SK or PK state"),
        (integer(15) + integer(225) + integer(7), "service", ValueError, "ecrt supports keys of 512 to 8192 bits"),
        (42, "cpu", TypeError, "must be a fate_utils SK"),
        (coder, "cpu", TypeError, "must be a fate_utils SK"),
        ([256], "cpu", TypeError, "a state is bytes"),
    ]
    for key, backend, kind, reason in cases:
        with pytest.raises(kind, match=reason) as raised:
            ecrt.fate.Decryptor(key, backend=backend, socket="/nonexistent")
        assert not [s for s in secrets if s in str(raised.value)], raised.value
    with pytest.raises(ValueError, match='the cpu backend needs the private key .* a PK opens backend="service"'):
        ecrt.fate.Decryptor(pk)
    with pytest.raises(ValueError, match='backend must be "cpu", "sim", "xdma" or "service"'):
        ecrt.fate.Decryptor(sk, backend="gpu")
    with pytest.raises(TypeError, match="unexpected option 'thread': the options are threads, device"):
        ecrt.fate.Decryptor(sk, thread=2)

    with ecrt.fate.Decryptor(sk) as decryptor:
        text = repr(decryptor) + str(vars(decryptor))
        assert "<ecrt.fate.Decryptor backend='cpu' key_bits=1024 open>" == repr(decryptor)
        assert not [s for s in secrets if s in text]
        plain = coder.encode_f64_vec(np.array([1.0]))
        with pytest.raises(TypeError, match="takes a fate_utils CiphertextVector .FATE's FixedpointPaillierVector., not PlaintextVector"):
            decryptor.decrypt_to_encoded(plain)
        with pytest.raises(TypeError, match="takes a fate_utils Ciphertext, not PlaintextVector"):
            decryptor.decrypt_to_encoded_scalar(plain)
        with pytest.raises(ValueError, match='errors must be "raise" or "none"'):
            decryptor.decrypt_to_encoded(pk.encrypt_encoded(plain, True), errors="ignore")
    assert "closed" in repr(decryptor)


def test_the_sim_backend_decrypts_a_small_batch_bit_for_bit() -> None:
    # The default 1024-bit model, which the Rust tests build and cache (one of its own: a minute).
    sk, pk, coder = paillier.keygen(1024)
    ct = pk.encrypt_encoded(coder.encode_f64_vec(np.array([0.5, -1e10, 3.0])), True)
    with ecrt.fate.Decryptor(sk, backend="sim") as decryptor:
        assert decryptor.backend == "sim"
        assert_same(decryptor.decrypt_to_encoded(ct), sk.decrypt_to_encoded(ct))


@pytest.mark.parametrize("bits", [1024, 2048])
def test_the_service_decrypts_with_the_public_key_alone(bits: int, ecrt_service: Service) -> None:
    # The service holds phe's vectors' keys; the same primes make a fate_utils key.
    phe_key = private_key_of(vectors(bits)["private_key"])
    sk, pk = fate_key(phe_key.p, phe_key.q)
    coder = paillier.Coder()
    coder.__setstate__(integer(phe_key.public_key.n) + integer(phe_key.public_key.n // 2))
    floats, ints = values(12, bits)
    cts = [pk.encrypt_encoded(coder.encode_f64_vec(floats), True), pk.encrypt_encoded(coder.encode_i64_vec(ints), True)]
    before = ecrt_service.decryptions()
    for key in (pk, state(pk), sk):  # of an SK, only n leaves
        with ecrt.fate.Decryptor(key, backend="service", socket=ecrt_service.socket) as decryptor:
            assert decryptor.backend == "service"
            for ct in cts:
                assert_same(decryptor.decrypt_to_encoded(ct), sk.decrypt_to_encoded(ct))
            ct = pk.encrypt_encoded_scalar(coder.encode_f64(-6.5), True)
            assert coder.decode_f64(decryptor.decrypt_to_encoded_scalar(ct)) == -6.5
    assert ecrt_service.decryptions() - before == 3 * 25


def test_the_benchmark_writes_the_report_the_figures_page_reads(tmp_path: Any) -> None:
    # python -m ecrt.bench --fate: the same keys whatever --threads is (lab/src/python_bench.rs,
    # FateReport, reads them), each pass checked against fate_utils' own result.
    out = tmp_path / "fate.json"
    args = ["--fate", "--bits", "1024", "--count", "5", "--rounds", "1", "--threads", "3", "--json", str(out)]
    assert ecrt.bench.main(args) == 0
    report = json.loads(out.read_text())
    passes = ["fate_utils_1_thread", "fate_utils_all_processes", "ecrt_1_thread", "ecrt_all_threads"]
    assert report["tool"] == "python -m ecrt.bench --fate"
    assert (report["key_bits"], report["count"], report["rounds"], report["threads"]) == (1024, 5, 1, 3)
    for key in ("passes", "median_pass_s", "per_decryption_us"):
        assert sorted(report[key]) == sorted(passes)
    for key in (
        "ratio_ecrt_1_thread_to_fate_utils_1_thread",
        "ratio_ecrt_all_threads_to_fate_utils_1_thread",
        "ratio_ecrt_all_threads_to_fate_utils_all_processes",
        "thread_scaling",
        "process_scaling_fate_utils",
        "key_open_ms",
    ):
        assert report[key] > 0
    assert report["verified"] == 5
