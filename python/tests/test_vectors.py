"""phe's test vectors through the package: the values and types phe's own decrypt returns."""

from __future__ import annotations

import json

import ecrt
import phe
import pytest

from conftest import encrypted, private_key_of, vectors


def same(a: object, b: object) -> bool:
    """Equal values of the same type (so 3 and 3.0 differ), floats bit for bit."""
    return type(a) is type(b) and repr(a) == repr(b)


@pytest.mark.parametrize("bits", [1024, 2048, 3072])
def test_every_phe_vector_decrypts_to_phes_value(bits: int, tmp_path) -> None:
    file = vectors(bits)
    key = private_key_of(file["private_key"])
    numbers = [encrypted(key.public_key, case) for case in file["cases"]]
    expected = [case["value"] for case in file["cases"]]
    assert int in {type(v) for v in expected} and 0 in {x.exponent for x in numbers}
    with ecrt.Decryptor(key, threads=2) as decryptor:
        got = decryptor.decrypt(numbers)
        raw = decryptor.raw_decrypt(int(case["ciphertext"]["v"]) for case in file["cases"])
    assert all(same(g, e) for g, e in zip(got, expected)), (got, expected)
    assert all(same(g, key.decrypt(x)) for g, x in zip(got, numbers))
    assert raw == [int(case["raw_plaintext"]) for case in file["cases"]]

    # The same key from its JWK file (pheutil's format).
    path = tmp_path / "key.jwk"
    path.write_text(json.dumps(file["private_key"]))
    assert all(same(g, e) for g, e in zip(ecrt.decrypt(path, numbers, threads=1), expected))
    assert all(same(g, e) for g, e in zip(ecrt.decrypt(str(path), numbers), expected))


def test_every_exponent_kind_decodes_as_phe_does(key_1024: phe.PaillierPrivateKey) -> None:
    public = key_1024.public_key
    numbers = [
        public.encrypt(12300, precision=100),  # a positive exponent
        public.encrypt(-45600, precision=1000),
        public.encrypt(0),
        public.encrypt(-(2**200)),
        public.encrypt(public.max_int),
        public.encrypt(-public.max_int),
        public.encrypt(3.5),
        public.encrypt(-1234.5678),
        public.encrypt(1e-300),
        public.encrypt(-2.5e300),
        public.encrypt(0.1, precision=1e-3),
        public.encrypt(phe.EncodedNumber.encode(public, 7, max_exponent=-4)),  # an int decoding to a float
        public.encrypt(1.0) * 3 + public.encrypt(2),
        public.encrypt(1.25).decrease_exponent_to(-40),
    ]
    expected = [key_1024.decrypt(x) for x in numbers]
    assert {x.exponent > 0 for x in numbers} == {True, False}
    assert {type(v) for v in expected} == {int, float}
    with ecrt.Decryptor(key_1024) as decryptor:
        got = decryptor.decrypt(numbers)
    assert all(same(g, e) for g, e in zip(got, expected)), (got, expected)


def test_keys_made_by_phe_decrypt() -> None:
    public, private = phe.generate_paillier_keypair(n_length=1024)
    values = [0, 1, -1, 2**100, -(2**100), 0.5, -3.75, 1e10]
    numbers = [public.encrypt(v) for v in values]
    assert all(same(g, v) for g, v in zip(ecrt.decrypt(private, numbers), values))


def test_keys_made_by_ecrt_keygen_decrypt(tmp_path, ecrt_command) -> None:
    import subprocess

    from conftest import b64_int

    key, pub = tmp_path / "key.jwk", tmp_path / "key.pub"
    subprocess.run([ecrt_command, "keygen", "--bits", "1024", "--out", key, "--public-out", pub], check=True)
    public = phe.PaillierPublicKey(b64_int(json.loads(pub.read_text())["n"]))
    values = [42, -7, 3.5, 0.0, -1e-7]
    got = ecrt.decrypt(key, [public.encrypt(v) for v in values])
    assert all(same(g, v) for g, v in zip(got, values)), got


def test_one_thread_and_many_agree(key_2048: phe.PaillierPrivateKey) -> None:
    numbers = [key_2048.public_key.encrypt(v) for v in range(-20, 20)]
    with ecrt.Decryptor(key_2048, threads=1) as one, ecrt.Decryptor(key_2048, threads=4) as four:
        assert one.decrypt(numbers) == four.decrypt(numbers) == list(range(-20, 20))


def test_the_sim_backend_decrypts_like_phe(key_1024: phe.PaillierPrivateKey) -> None:
    # The default configuration: the model the Rust tests of the accelerator and of the command build.
    file = vectors(1024)
    cases = [file["cases"][i] for i in (0, 1, 9, 10)]  # ints and floats
    numbers = [encrypted(key_1024.public_key, case) for case in cases]
    with ecrt.Decryptor(key_1024, backend="sim") as decryptor:
        assert decryptor.backend == "sim"
        got = decryptor.decrypt(numbers)
    assert all(same(g, case["value"]) for g, case in zip(got, cases)), got


def test_numpy_arrays_keep_their_shape(key_1024: phe.PaillierPrivateKey) -> None:
    np = pytest.importorskip("numpy")
    values = np.array([[1, -2, 3.5], [0.25, 7, -9]], dtype=object)
    array = np.vectorize(key_1024.public_key.encrypt, otypes=[object])(values)
    with ecrt.Decryptor(key_1024) as decryptor:
        out = decryptor.decrypt_numpy(array)
    assert out.shape == (2, 3) and out.dtype == object
    assert out.tolist() == values.tolist()
    assert [type(v) for v in out.ravel()] == [int, int, float, float, int, int]


def test_the_readmes_aggregation_example_runs() -> None:
    public, private = phe.generate_paillier_keypair(n_length=1024)
    parties = [[0.25, -1.5, 3.0], [0.5, 2.0, -1.0], [1.25, 0.5, 0.5]]
    encrypted = [[public.encrypt(w) for w in update] for update in parties]
    sums = [sum(column[1:], column[0]) for column in zip(*encrypted)]
    with ecrt.Decryptor(private, backend="cpu") as decryptor:
        totals = decryptor.decrypt(sums)
    assert totals == [2.0, 1.0, 2.5] == [private.decrypt(s) for s in sums]
