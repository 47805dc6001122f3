"""Errors the Python way: ValueError for keys, DeviceError for devices, BatchError for bad items,
phe's own OverflowError, and never a secret in a message or a repr."""

from __future__ import annotations

import json
import types

import ecrt
import phe
import pytest

from conftest import private_key_of, secrets_of, vectors


def fake_key(n: int, p: int, q: int) -> types.SimpleNamespace:
    """What a PaillierPrivateKey holds, without phe's own checks."""
    return types.SimpleNamespace(public_key=types.SimpleNamespace(n=n), p=p, q=q)


def assert_no_secret(text: str, key: phe.PaillierPrivateKey) -> None:
    for secret in secrets_of(key):
        assert secret not in text, text


def test_invalid_keys_raise_value_error_without_their_primes(key_1024: phe.PaillierPrivateKey, tmp_path) -> None:
    p, q, n = key_1024.p, key_1024.q, key_1024.public_key.n
    cases = [
        (fake_key(n + 2, p, q), "p·q does not equal the public modulus n"),
        (fake_key(p * p, p, p), "p and q are equal"),
        (fake_key(p * (q + 2), p, q + 2), "is not prime"),
        (fake_key(15, 3, 5), "ecrt supports keys of 512 to 8192 bits"),
    ]
    for key, reason in cases:
        with pytest.raises(ValueError) as raised:
            ecrt.Decryptor(key)
        assert reason in str(raised.value), raised.value
        assert_no_secret(str(raised.value), key_1024)

    broken = tmp_path / "broken.jwk"
    jwk = vectors(1024)["private_key"]
    broken.write_text(json.dumps({**jwk, "q": jwk["p"]}))
    for path, reason in [(broken, "cannot use key file"), (tmp_path / "missing.jwk", "cannot read")]:
        with pytest.raises(ValueError, match=reason) as raised:
            ecrt.Decryptor(path)
        assert_no_secret(str(raised.value), key_1024)
    with pytest.raises(TypeError, match="PaillierPrivateKey or the path"):
        ecrt.Decryptor(42)


def test_bad_options_raise_value_error(key_1024: phe.PaillierPrivateKey) -> None:
    for options, reason in [
        ({"backend": "gpu"}, 'backend must be "cpu", "sim", "xdma" or "service"'),
        ({"threads": 0}, "threads must be at least 1"),
        ({"queue_depth": 0}, "the queue depth must be 1 to"),
        ({"backend": "xdma", "timeout": -1.0}, "timeout -1: expected 0 .wait forever. or a number of seconds up to 86400"),
    ]:
        with pytest.raises(ValueError, match=reason):
            ecrt.Decryptor(key_1024, **options)
    with ecrt.Decryptor(key_1024) as decryptor:
        with pytest.raises(ValueError, match='errors must be "raise" or "none"'):
            decryptor.decrypt([], errors="ignore")


def test_an_unusable_device_raises_device_error(key_1024: phe.PaillierPrivateKey, tmp_path) -> None:
    with pytest.raises(ecrt.DeviceError, match="cannot open the xdma backend") as raised:
        ecrt.Decryptor(key_1024, backend="xdma", device=tmp_path / "xdma0")
    assert isinstance(raised.value, RuntimeError)
    assert_no_secret(str(raised.value), key_1024)


def test_bad_items_fail_alone_and_nothing_is_lost(
    key_1024: phe.PaillierPrivateKey, key_2048: phe.PaillierPrivateKey
) -> None:
    public = key_1024.public_key
    other_public, _ = phe.generate_paillier_keypair(n_length=1024)
    overflow = phe.EncryptedNumber(public, public.raw_encrypt(public.n // 2), 0)
    largest_float = phe.EncryptedNumber(public, public.raw_encrypt(public.max_int), -1)
    numbers = [
        public.encrypt(5),
        overflow,
        "not a number",
        other_public.encrypt(1),
        public.encrypt(-2.5),
        phe.EncryptedNumber(public, 0, 0),
        largest_float,
    ]
    expected_kinds = {1: OverflowError, 2: TypeError, 3: ValueError, 5: ValueError}
    # phe's own messages for what phe refuses.
    phe_messages = {}
    for i in (1, 2, 3):
        with pytest.raises(Exception) as raised:
            key_1024.decrypt(numbers[i])
        phe_messages[i] = str(raised.value)

    with ecrt.Decryptor(key_1024) as decryptor:
        with pytest.raises(ecrt.BatchError) as raised:
            decryptor.decrypt(numbers)
        error = raised.value
        assert [e.index for e in error.errors] == sorted(expected_kinds)
        for item in error.errors:
            assert isinstance(item.exception, expected_kinds[item.index]), item
            if item.index in phe_messages:
                assert item.reason == phe_messages[item.index]
        assert error.results[0] == 5 and error.results[4] == -2.5 and error.results[6] == key_1024.decrypt(largest_float)
        assert [error.results[i] for i in expected_kinds] == [None] * 4
        assert "4 of 7 items failed" in str(error) and "item 1: OverflowError" in str(error)
        assert_no_secret(str(error) + repr(error.errors), key_1024)

        values = decryptor.decrypt(numbers, errors="none")
        assert values == error.results
        # And the decryptor goes on.
        assert decryptor.decrypt([public.encrypt(9)]) == [9]

        absurd = phe.EncryptedNumber(public, public.raw_encrypt(1), 2**70)
        with pytest.raises(ecrt.BatchError) as raised:
            decryptor.decrypt([absurd])
        assert isinstance(raised.value.errors[0].exception, ValueError)
        assert "out of range" in raised.value.errors[0].reason

        n2 = public.nsquare
        assert decryptor.raw_decrypt([0, n2, -1, 3], errors="none")[:3] == [None, None, None]


def test_a_float_too_large_raises_phes_overflow_error(key_2048: phe.PaillierPrivateKey) -> None:
    public = key_2048.public_key
    # max_int / 16 is about 2^2042: no float holds it.
    huge = phe.EncryptedNumber(public, public.raw_encrypt(public.max_int), -1)
    with pytest.raises(OverflowError, match="decoded result too large for a float"):
        key_2048.decrypt(huge)
    with pytest.raises(ecrt.BatchError) as raised:
        ecrt.decrypt(key_2048, [huge])
    (item,) = raised.value.errors
    assert type(item.exception) is OverflowError and item.reason == "decoded result too large for a float"


def test_reprs_show_no_secret(key_1024: phe.PaillierPrivateKey) -> None:
    decryptor = ecrt.Decryptor(key_1024)
    text = repr(decryptor) + str(vars(decryptor)) + repr(decryptor._inner)
    assert "backend='cpu' key_bits=1024 open" in repr(decryptor)
    assert_no_secret(text, key_1024)
    decryptor.close()
    decryptor.close()
    assert decryptor.closed and "closed" in repr(decryptor)
    with pytest.raises(ValueError, match="closed"):
        decryptor.decrypt([key_1024.public_key.encrypt(1)])
