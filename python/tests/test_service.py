"""backend="service": decrypting through a running `ecrt serve` (cpu backend, one thread) that
holds the private keys, with only the public key here; its errors; and reconnecting after the
service went away."""

from __future__ import annotations

import signal
import threading
import time

import ecrt
import phe
import pytest

from conftest import Service, encrypted, private_key_of, vectors


def same(a: object, b: object) -> bool:
    """Equal values of the same type (so 3 and 3.0 differ), floats bit for bit."""
    return type(a) is type(b) and repr(a) == repr(b)


def numbers_and_values(bits: int) -> tuple:
    file = vectors(bits)
    public = private_key_of(file["private_key"]).public_key
    return public, [encrypted(public, case) for case in file["cases"]], [case["value"] for case in file["cases"]]


@pytest.mark.parametrize("bits", Service.BITS)
def test_every_phe_vector_decrypts_through_the_service_with_the_public_key_alone(
    bits: int, ecrt_service: Service
) -> None:
    public, numbers, expected = numbers_and_values(bits)
    file = vectors(bits)
    with ecrt.Decryptor(public, backend="service", socket=ecrt_service.socket) as decryptor:
        assert decryptor.backend == "service" and decryptor.n == public.n
        got = decryptor.decrypt(numbers)
        raw = decryptor.raw_decrypt(int(case["ciphertext"]["v"]) for case in file["cases"])
    assert all(same(g, e) for g, e in zip(got, expected)), (got, expected)
    assert raw == [int(case["raw_plaintext"]) for case in file["cases"]]

    # The public JWK file (what `ecrt keygen --public-out` and `pheutil extract` write), as a
    # path and as text.
    path = ecrt_service.public_file(bits)
    for key in (path, str(path)):
        got = ecrt.decrypt(key, numbers, backend="service", socket=ecrt_service.socket)
        assert all(same(g, e) for g, e in zip(got, expected)), (got, expected)


def test_a_private_key_sends_only_its_public_half_and_the_socket_defaults_to_ecrt_socket(
    ecrt_service: Service, key_1024: phe.PaillierPrivateKey, monkeypatch
) -> None:
    _, numbers, expected = numbers_and_values(1024)
    monkeypatch.setenv("ECRT_SOCKET", str(ecrt_service.socket))
    with ecrt.Decryptor(key_1024, backend="service") as decryptor:
        assert decryptor.public_key is key_1024.public_key
        assert decryptor.decrypt(numbers) == expected


def test_no_service_at_the_socket_raises_device_error_naming_it(
    tmp_path, monkeypatch, key_1024: phe.PaillierPrivateKey
) -> None:
    public = key_1024.public_key
    missing = tmp_path / "nobody.sock"
    with pytest.raises(ecrt.DeviceError, match="no ecrt service at") as raised:
        ecrt.Decryptor(public, backend="service", socket=missing)
    assert str(missing) in str(raised.value)
    assert isinstance(raised.value, RuntimeError)

    monkeypatch.setenv("ECRT_SOCKET", str(tmp_path / "elsewhere.sock"))
    with pytest.raises(ecrt.DeviceError, match="elsewhere.sock"):
        ecrt.Decryptor(public, backend="service")


def test_a_key_the_service_does_not_hold_raises_device_error(ecrt_service: Service) -> None:
    other, _ = phe.generate_paillier_keypair(n_length=1024)
    with pytest.raises(ecrt.DeviceError, match="has no key") as raised:
        ecrt.Decryptor(other, backend="service", socket=ecrt_service.socket)
    assert str(ecrt_service.socket) in str(raised.value)


def test_after_a_stop_a_batch_raises_and_after_a_restart_the_next_batch_connects_again(
    ecrt_service: Service,
) -> None:
    public, numbers, expected = numbers_and_values(1024)
    with ecrt.Decryptor(public, backend="service", socket=ecrt_service.socket) as decryptor:
        assert decryptor.decrypt(numbers) == expected
        assert ecrt_service.stop(signal.SIGTERM) == 0  # drained, socket removed
        assert not ecrt_service.socket.exists()
        # The batch connects again first, and there is nothing to connect to: the whole batch
        # fails, errors="none" included (it stands in for bad items, not for a missing service).
        for errors in ("raise", "none"):
            with pytest.raises(ecrt.DeviceError, match="no ecrt service at") as raised:
                decryptor.decrypt(numbers, errors=errors)
            assert str(ecrt_service.socket) in str(raised.value)
        assert not decryptor.closed

        ecrt_service.start()
        got = decryptor.decrypt(numbers)
        assert all(same(g, e) for g, e in zip(got, expected)), (got, expected)


def test_a_service_killed_mid_batch_fails_the_unanswered_items_and_a_restart_serves_the_next(
    ecrt_service: Service,
) -> None:
    public, numbers, expected = numbers_and_values(1024)
    plaintexts = list(range(1, 51))
    # 20,000 items: several seconds on one thread, so the kill lands mid-batch.
    batch = [public.raw_encrypt(v) for v in plaintexts] * 400
    killed = threading.Event()

    def kill_once_decrypting() -> None:
        deadline = time.monotonic() + 20
        while ecrt_service.decryptions() == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        ecrt_service.process.kill()
        killed.set()

    with ecrt.Decryptor(public, backend="service", socket=ecrt_service.socket) as decryptor:
        killer = threading.Thread(target=kill_once_decrypting)
        killer.start()
        try:
            with pytest.raises(ecrt.BatchError) as raised:
                decryptor.raw_decrypt(batch)
        finally:
            killer.join()
        assert killed.is_set()
        error = raised.value
        assert 0 < len(error.errors) <= len(batch) and len(error.results) == len(batch)
        for item in error.errors:
            assert isinstance(item.exception, ecrt.DeviceError), item
            assert "closed the connection" in item.reason and str(ecrt_service.socket) in item.reason, item
        bad = {item.index for item in error.errors}
        assert all(
            (r is None) if i in bad else r == plaintexts[i % 50] for i, r in enumerate(error.results)
        )

        ecrt_service.stop()  # reaps the killed process; its socket file stays, and is replaced
        ecrt_service.start()
        assert decryptor.decrypt(numbers) == expected
