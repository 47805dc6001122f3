"""A batch releases the GIL, stops on Ctrl-C without hanging, shows progress, and documents itself."""

from __future__ import annotations

import os
import pydoc
import signal
import subprocess
import sys
import textwrap
import threading
import time

import ecrt
import phe
import pytest

from conftest import WORKSPACE


def test_a_batch_releases_the_gil(key_2048: phe.PaillierPrivateKey) -> None:
    ciphertexts = [key_2048.public_key.raw_encrypt(v) for v in range(1, 201)]
    count = 0
    stop = threading.Event()

    def spin() -> None:
        nonlocal count
        while not stop.is_set():
            count += 1

    with ecrt.Decryptor(key_2048, threads=1) as decryptor:
        spinner = threading.Thread(target=spin)
        spinner.start()
        try:
            time.sleep(0.05)
            before = count
            started = time.perf_counter()
            values = decryptor.raw_decrypt(ciphertexts)
            elapsed = time.perf_counter() - started
            during = count - before
        finally:
            stop.set()
            spinner.join()
    assert values == list(range(1, 201))
    # Holding the GIL for the whole batch would leave the spinner a few switch intervals at most;
    # released, it counts all along (millions per second).
    assert elapsed > 0.1 and during > 100_000 * elapsed, (during, elapsed)


def test_ctrl_c_stops_a_long_batch_and_nothing_hangs(tmp_path) -> None:
    script = textwrap.dedent(
        f"""
        import json, signal, sys, time
        # Ctrl-C as in an interactive Python: a background job may have inherited SIGINT ignored.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.path.insert(0, {str(WORKSPACE / "python" / "tests")!r})
        import ecrt
        from conftest import private_key_of, vectors
        key = private_key_of(vectors(2048)["private_key"])
        cts = [key.public_key.raw_encrypt(v) for v in range(1, 50)] * 400
        decryptor = ecrt.Decryptor(key, threads=1)
        print("ready", flush=True)
        try:
            decryptor.raw_decrypt(cts)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            assert decryptor.raw_decrypt(cts[:3]) == [1, 2, 3]
            decryptor.close()
            print("still usable", flush=True)
            raise
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    sent = time.perf_counter()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    waited = time.perf_counter() - sent
    assert out.splitlines() == ["interrupted", "still usable"], (out, err)
    assert process.returncode != 0 and "KeyboardInterrupt" in err, err
    # The whole batch takes about a minute on one thread; the interrupt ends it at once (the
    # items in flight finish first: at most the queue depth's 256).
    assert waited < 20, waited


def test_progress_bars_use_tqdm(key_1024: phe.PaillierPrivateKey, capsys) -> None:
    pytest.importorskip("tqdm")
    numbers = [key_1024.public_key.encrypt(v) for v in range(30)]
    with ecrt.Decryptor(key_1024) as decryptor:
        assert decryptor.decrypt(numbers, progress=True) == list(range(30))
        assert capsys.readouterr().err.count("30/30") >= 1
        decryptor.decrypt(numbers)  # small and not on a terminal: no bar
        assert capsys.readouterr().err == ""


def test_help_reads_well() -> None:
    text = pydoc.render_doc(ecrt.Decryptor, renderer=pydoc.plaintext)
    for words in ["private_key: a phe ``PaillierPrivateKey``", "backend:", "DeviceError", "decrypt_numpy", "raw_decrypt"]:
        assert words in text, words
    assert ecrt.BatchError.__doc__ and ecrt.decrypt.__doc__ and ecrt.DeviceError.__doc__
    stubs = WORKSPACE / "python" / "ecrt" / "_ecrt.pyi"
    assert "class _Decryptor" in stubs.read_text()
    assert os.path.exists(WORKSPACE / "python" / "ecrt" / "py.typed")
