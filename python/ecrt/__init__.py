"""Offload python-paillier (``phe``) decryptions to the ecrt accelerator, its simulator, or the CPU.

>>> import phe, ecrt
>>> public, private = phe.generate_paillier_keypair(n_length=2048)
>>> xs = [public.encrypt(v) for v in (3, -7, 2.5)]
>>> with ecrt.Decryptor(private) as decryptor:
...     decryptor.decrypt(xs)
[3, -7, 2.5]

:class:`Decryptor` opens a key in a backend once and decrypts batches with the GIL released, on
every thread the backend has. Values are those ``PaillierPrivateKey.decrypt`` returns, ints and
floats alike. A batch with bad items raises :class:`BatchError`, which carries every good result
and the index and reason of every bad item (or, with ``errors="none"``, gives ``None`` in their
place). phe, numpy and tqdm are optional: the package takes phe's objects when phe is installed.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, TypeVar, Union

from ._ecrt import MAX_QUEUE_DEPTH, DeviceError, _Decryptor

__all__ = [
    "BatchError",
    "Decryptor",
    "DeviceError",
    "EcrtError",
    "ItemError",
    "decrypt",
    "MAX_QUEUE_DEPTH",
    "PROGRESS_THRESHOLD",
]

#: Batches of at least this many items show a progress bar (with tqdm installed, on a terminal).
PROGRESS_THRESHOLD = 2048

KeySource = Union["os.PathLike[str]", str, Any]
_Self = TypeVar("_Self", bound="_Opened")
# The options of a backend, as Decryptor takes them.
_OPTIONS = ("threads", "device", "socket", "queue_depth", "timeout", "cores")

# Exponents the decoder takes (phe's are small: -32 for its floats); beyond them, 16**e is absurd.
_MAX_EXPONENT = 2**63


class EcrtError(Exception):
    """Base class of the errors this package defines (:class:`DeviceError` is a RuntimeError)."""


class ItemError(NamedTuple):
    """One bad item of a batch: its index, why it failed, and the exception it stands for."""

    index: int
    reason: str
    exception: BaseException


class BatchError(EcrtError):
    """Some items of a batch could not be decrypted; nothing is lost.

    ``errors`` lists each bad item (:class:`ItemError`: index, reason, exception) and ``results``
    holds one entry per item, the value for a good one and ``None`` for a bad one. The exception of
    an item is the one phe would raise for it where phe has one (``OverflowError`` with phe's
    message for an encoding overflow, ``ValueError`` for a number under another key, ``TypeError``
    for an object that is not an ``EncryptedNumber``); a device's failure is a :class:`DeviceError`.
    """

    def __init__(self, errors: List[ItemError], results: List[Any]) -> None:
        self.errors = errors
        self.results = results
        shown = "; ".join(f"item {e.index}: {type(e.exception).__name__}: {e.reason}" for e in errors[:5])
        more = f"; and {len(errors) - 5} more" if len(errors) > 5 else ""
        super().__init__(f"{len(errors)} of {len(results)} items failed: {shown}{more}")

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.errors, self.results))


_EXCEPTIONS = {
    "ValueError": ValueError,
    "TypeError": TypeError,
    "OverflowError": OverflowError,
    "DeviceError": DeviceError,
}


def _default_socket() -> str:
    return os.environ.get("ECRT_SOCKET", "/run/ecrt/ecrt.sock")


def _phe() -> Any:
    try:
        import phe  # type: ignore[import-not-found]
    except ImportError:
        return None
    return phe


class _Opened:
    """A key opened in a backend of the extension: what :class:`Decryptor` and
    :class:`ecrt.fate.Decryptor` share (the backend's options, raw decryption, batches with
    per-item errors and a progress bar, closing, a repr without secrets)."""

    _inner: _Decryptor

    def _open(self, key: Dict[str, Any], backend: str, **options: Any) -> None:
        """Opens ``key`` (the extension's ``key_file``, ``primes`` or ``public_n``) in ``backend``
        with :class:`Decryptor`'s options (``threads``, ``device``, ``socket``, ``queue_depth``,
        ``timeout``, ``cores``)."""
        for name in options:
            if name not in _OPTIONS:
                raise TypeError(f"unexpected option {name!r}: the options are {', '.join(_OPTIONS)}")
        device = options.pop("device", None)
        socket = options.pop("socket", None)
        timeout = options.pop("timeout", 30.0)
        self._inner = _Decryptor(
            **key,
            backend=backend,
            device=None if device is None else os.fspath(device),
            socket=os.fspath(socket) if socket is not None else _default_socket() if backend == "service" else None,
            timeout=timeout if backend in ("xdma", "service") else None,
            **options,
        )

    @property
    def n(self) -> int:
        """The public modulus."""
        return self._inner.n

    @property
    def backend(self) -> str:
        """The backend's name: ``"cpu"``, ``"sim"``, ``"xdma"`` or ``"service"``."""
        return self._inner.backend

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run."""
        return self._inner.closed

    def raw_decrypt(
        self, ints: Iterable[int], *, errors: str = "raise", progress: Optional[bool] = None
    ) -> List[Optional[int]]:
        """Decrypts raw ciphertexts (ints 0 < c < n²) to raw plaintexts (ints mod n), as phe's
        ``PaillierPrivateKey.raw_decrypt``.

        Args:
            ints: the ciphertexts.
            errors: ``"raise"`` raises :class:`BatchError` if any item fails; ``"none"`` gives
                ``None`` in its place.
            progress: show a tqdm progress bar; by default on batches of at least
                :data:`PROGRESS_THRESHOLD` items when stderr is a terminal and tqdm is installed.
        """
        results, failures = self._batch(list(ints), None, [], errors, progress)
        _raise_failures(failures, results, errors)
        return results

    def _batch(
        self,
        ciphertexts: List[Any],
        exponents: Optional[List[int]],
        refused: Sequence[Tuple[int, BaseException]],
        errors: str,
        progress: Optional[bool],
    ) -> Tuple[List[Any], Dict[int, BaseException]]:
        """Runs a batch through the backend: one value per item (``None`` for a bad one) and the
        exception of each bad item by index, ``refused`` (items refused before the backend, given
        as ``None``) among them."""
        if errors not in ("raise", "none"):
            raise ValueError(f'errors must be "raise" or "none", not {errors!r}')
        bar = _progress_bar(len(ciphertexts), progress)
        try:
            report = None if bar is None else _reporter(bar)
            results = self._inner.run(ciphertexts, exponents, report)
        finally:
            if bar is not None:
                bar.close()
        failures = {i: e for i, e in refused}
        for i, r in enumerate(results):
            if type(r) is tuple:
                kind, reason = r
                if i not in failures:
                    failures[i] = _EXCEPTIONS[kind](reason)
                results[i] = None
        return results, failures

    def close(self) -> None:
        """Waits for the items in flight and releases the backend. Idempotent."""
        self._inner.close()

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        name = f"{type(self).__module__}.{type(self).__qualname__}"
        return f"<{name} backend={self.backend!r} key_bits={self.n.bit_length()} {state}>"


def _raise_failures(failures: Dict[int, BaseException], results: List[Any], errors: str) -> None:
    """Raises :class:`BatchError` for the failed items when ``errors="raise"``."""
    if failures and errors == "raise":
        bad = [ItemError(i, str(e), e) for i, e in sorted(failures.items())]
        raise BatchError(bad, results)


class Decryptor(_Opened):
    """A Paillier private key opened in a backend, ready to decrypt batches.

    Args:
        private_key: a phe ``PaillierPrivateKey``, or the path of a JWK private key file (pheutil's
            ``genpkey`` or ``ecrt keygen``). The key is validated (p·q = n, p ≠ q, both prime).
            With ``backend="service"``, the service holds the private key: a phe
            ``PaillierPublicKey`` or a public key file is enough.
        backend: ``"cpu"`` (OpenSSL's constant-time exponentiation on the host's threads), ``"sim"``
            (the accelerator's Verilator model, built on first use and cached), ``"xdma"`` (the
            accelerator behind Xilinx's XDMA driver) or ``"service"`` (a running ``ecrt serve``).
        threads: CPU threads (cpu backend); all of the machine's by default.
        device: the XDMA nodes' prefix (xdma backend), ``/dev/xdma0`` by default.
        socket: the service's socket (service backend); ``$ECRT_SOCKET``, or
            ``/run/ecrt/ecrt.sock``, by default. After the service went away, the next batch
            connects again.
        queue_depth: most ciphertexts in flight at the backend.
        timeout: seconds to wait for the next result before the device is declared stalled (xdma
            backend; ``None`` or 0 waits forever).
        cores: the simulated accelerator's cores (sim backend).

    Raises:
        ValueError: the key is invalid, or an option is out of range.
        DeviceError: the backend cannot be used (no device, a bitstream for another key size, a
            device another process holds, a failed Verilator build, no service at the socket, a
            key the service does not hold or will not let this user decrypt under).

    A context manager: ``with ecrt.Decryptor(key) as d: ...`` closes it on exit. Neither its repr
    nor any error shows the key's secrets.
    """

    def __init__(
        self,
        private_key: KeySource,
        backend: str = "cpu",
        *,
        threads: Optional[int] = None,
        device: Optional[Union[str, "os.PathLike[str]"]] = None,
        socket: Optional[Union[str, "os.PathLike[str]"]] = None,
        queue_depth: int = 256,
        timeout: Optional[float] = 30.0,
        cores: Optional[int] = None,
    ) -> None:
        if isinstance(private_key, (str, os.PathLike)):
            key: dict = {"key_file": os.fspath(private_key)}
            self._public_key = None
        elif backend == "service" and hasattr(private_key, "n") and not hasattr(private_key, "p"):
            key = {"public_n": private_key.n}
            self._public_key = private_key
        else:
            try:
                if backend == "service":  # the service holds the private key: send nothing of it
                    key = {"public_n": private_key.public_key.n}
                else:
                    key = {"primes": (private_key.public_key.n, private_key.p, private_key.q)}
            except AttributeError:
                raise TypeError(
                    "private_key must be a phe PaillierPrivateKey or the path of a JWK key file, "
                    f"not {type(private_key).__name__}"
                ) from None
            self._public_key = private_key.public_key
        self._open(
            key,
            backend,
            threads=threads,
            device=device,
            socket=socket,
            queue_depth=queue_depth,
            timeout=timeout,
            cores=cores,
        )

    @property
    def public_key(self) -> Any:
        """The phe ``PaillierPublicKey`` of the key (needs phe)."""
        if self._public_key is None:
            phe = _phe()
            if phe is None:
                raise ImportError("public_key needs python-paillier: pip install phe")
            self._public_key = phe.PaillierPublicKey(self.n)
        return self._public_key

    def decrypt(
        self, numbers: Iterable[Any], *, errors: str = "raise", progress: Optional[bool] = None
    ) -> List[Union[int, float, None]]:
        """Decrypts phe ``EncryptedNumber`` objects: what ``PaillierPrivateKey.decrypt`` returns
        for each, an ``int`` or a ``float``, in order.

        Args:
            numbers: an iterable of ``EncryptedNumber``, all under this key.
            errors: ``"raise"`` raises :class:`BatchError` if any item fails; ``"none"`` gives
                ``None`` in its place.
            progress: show a tqdm progress bar; by default on batches of at least
                :data:`PROGRESS_THRESHOLD` items when stderr is a terminal and tqdm is installed.

        The GIL is released while the backend works; Ctrl-C stops the batch with
        ``KeyboardInterrupt`` and leaves the decryptor usable.
        """
        items = list(numbers)
        ciphertexts: List[Optional[int]] = []
        exponents: List[int] = []
        refused: List[Tuple[int, BaseException]] = []
        n = self.n
        for i, x in enumerate(items):
            try:
                if x.public_key.n != n:
                    raise ValueError("encrypted_number was encrypted against a different key!")
                exponent = x.exponent
                if not -_MAX_EXPONENT <= exponent < _MAX_EXPONENT:
                    raise ValueError(f"the exponent {exponent} is out of range (a 64-bit integer)")
                ciphertext = x.ciphertext(be_secure=False)
            except AttributeError:
                error: BaseException = TypeError(f"Expected encrypted_number to be an EncryptedNumber not: {type(x)}")
            except ValueError as e:
                error = e
            else:
                ciphertexts.append(ciphertext)
                exponents.append(exponent)
                continue
            # Refused here; the extension skips the None and the refusal stands in its place.
            refused.append((i, error))
            ciphertexts.append(None)
            exponents.append(0)
        results, failures = self._batch(ciphertexts, exponents, refused, errors, progress)
        _raise_failures(failures, results, errors)
        return results

    def decrypt_numpy(self, array: Any, *, errors: str = "raise", progress: Optional[bool] = None) -> Any:
        """:meth:`decrypt` for a numpy object array of ``EncryptedNumber``: an object array of the
        same shape (needs numpy). With ``errors="none"``, bad items are ``None``."""
        try:
            import numpy as np
        except ImportError:
            raise ImportError("decrypt_numpy needs numpy: pip install numpy") from None
        array = np.asarray(array, dtype=object)
        values = self.decrypt(array.ravel().tolist(), errors=errors, progress=progress)
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out.reshape(array.shape)



def decrypt(private_key: KeySource, numbers: Iterable[Any], **options: Any) -> List[Any]:
    """One-off :meth:`Decryptor.decrypt`: opens the key, decrypts ``numbers``, closes.

    ``options`` are :class:`Decryptor`'s (``backend``, ``threads``, ...) and :meth:`Decryptor.decrypt`'s
    (``errors``, ``progress``).
    """
    batch = {k: options.pop(k) for k in ("errors", "progress") if k in options}
    with Decryptor(private_key, **options) as decryptor:
        return decryptor.decrypt(numbers, **batch)


def _progress_bar(total: int, progress: Optional[bool]) -> Any:
    if progress is False or (progress is None and (total < PROGRESS_THRESHOLD or not sys.stderr.isatty())):
        return None
    try:
        from tqdm import tqdm  # type: ignore[import-untyped]
    except ImportError:
        if progress:
            raise ImportError("progress=True needs tqdm: pip install tqdm") from None
        return None
    return tqdm(total=total, unit="dec", desc="ecrt")


def _reporter(bar: Any) -> Callable[[int], None]:
    def report(done: int) -> None:
        bar.update(done - bar.n)

    return report
