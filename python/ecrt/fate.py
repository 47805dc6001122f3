"""FATE's Paillier (``fate_utils``) offloaded: decrypt ``FixedpointPaillierVector``s in any backend.

>>> from fate_utils import paillier
>>> import numpy as np, ecrt.fate
>>> sk, pk, coder = paillier.keygen(2048)
>>> vector = pk.encrypt_encoded(coder.encode_f64_vec(np.array([0.5, -1.25])), True)
>>> with ecrt.fate.Decryptor(sk) as decryptor:          # backend="cpu" | "sim" | "xdma" | "service"
...     coder.decode_f64_vec(decryptor.decrypt_to_encoded(vector))
array([ 0.5 , -1.25])

FATE 2 does its Paillier arithmetic in ``fate_utils.paillier`` (FATE calls its
``CiphertextVector`` a ``FixedpointPaillierVector`` and its ``PlaintextVector`` a
``FixedpointVector``). Its Paillier is phe's: g = n + 1, a ciphertext c = (1 + m·n)·rⁿ mod n²,
decryption by the Chinese remainder theorem, the same raw plaintext m mod n for the same c and
key. Only the encodings differ: FATE's ``Coder`` keeps a base-16 exponent beside each ciphertext as
phe's ``EncodedNumber`` does, but takes plaintexts up to n / 2 (phe: n / 3) as positive and the
rest as negative. :class:`Decryptor` takes over the modular exponentiations, the whole cost of
``SK.decrypt_to_encoded``: it returns the same ``PlaintextVector``, bit for bit (each raw
plaintext with its ciphertext's exponent). Encryption, the ``Coder`` and the homomorphic
operations stay in ``fate_utils``.

The objects cross in ``fate_utils``' own pickled states (``__getstate__`` / ``__setstate__``:
bincode of the rug integers, each a radix and its digits), so nothing of ``fate_utils`` is
reimplemented but that format. ``fate_utils`` must be installed (``pip install fate-utils``; wheels
exist for CPython 3.11 on x86_64 Linux).
"""

from __future__ import annotations

import re
import struct
from typing import Any, Dict, List, Optional, Tuple

from . import _Opened, _raise_failures

__all__ = ["Decryptor"]

# rug writes an integer as (radix: i32, digits: string); bincode puts a u64 length before a
# string or a sequence, everything little-endian.
_INTEGER_HEAD = struct.Struct("<iQ")
_U64 = struct.Struct("<Q")
_I32 = struct.Struct("<i")
# The integers of fate_utils' states, in order.
_SK_FIELDS = ("p", "q", "n", "p - 1", "q - 1", "p²", "q²", "p⁻¹ mod q", "hp", "hq")
_PK_FIELDS = ("n", "n²", "max_int")
# Digits an integer of a key's state may have (an 8192-bit n² in binary, and a sign).
_MAX_DIGITS = 2 * 8192 + 1
# What rug's parser takes: a sign and digits (Python's int() would also take "+", "_" and spaces).
_DIGITS = re.compile(rb"-?[0-9a-zA-Z]+")
# fate_utils' ciphertexts are -n² < c < n² (see Decryptor.decrypt_to_encoded).
_OUT_OF_RANGE = "a fate_utils ciphertext is an integer -n² < c < n² (n² has {bits} bits), this one has {c_bits} bits"


def _paillier() -> Any:
    try:
        from fate_utils import paillier  # type: ignore[import-not-found]
    except ImportError as error:
        raise ImportError(
            f"ecrt.fate needs fate_utils ({error}): pip install fate-utils "
            "(wheels exist for CPython 3.11 on x86_64 Linux)"
        ) from None
    return paillier


class _FormatError(ValueError):
    """A state that is not the bincode fate_utils writes; says where, never what."""


class _Reader:
    """Reads a bincode state of fate_utils, front to back."""

    def __init__(self, data: bytes, what: str) -> None:
        self.data = data
        self.offset = 0
        self.what = what

    def fail(self, reason: str) -> _FormatError:
        return _FormatError(f"not a fate_utils {self.what} state: {reason} at byte {self.offset}")

    def unpack(self, layout: struct.Struct) -> Tuple[Any, ...]:
        if self.offset + layout.size > len(self.data):
            raise self.fail("it ends early")
        values = layout.unpack_from(self.data, self.offset)
        self.offset += layout.size
        return values

    def integer(self, max_digits: Optional[int] = None) -> int:
        radix, length = self.unpack(_INTEGER_HEAD)
        if not 2 <= radix <= 36:
            raise self.fail(f"an integer's radix is {radix}")
        if max_digits is not None and length > max_digits:
            raise self.fail(f"an integer has {length} digits")
        if self.offset + length > len(self.data):
            raise self.fail("it ends early")
        digits = self.data[self.offset : self.offset + length]
        try:
            if not _DIGITS.fullmatch(digits):
                raise ValueError
            value = int(digits, radix)
        except ValueError:
            raise self.fail("an integer's digits do not parse") from None
        self.offset += length
        return value

    def end(self) -> None:
        if self.offset != len(self.data):
            raise self.fail(f"{len(self.data) - self.offset} bytes are left over")


def _write_integer(value: int) -> bytes:
    """An integer as rug writes it: in decimal up to 32 significant bits, in hex beyond."""
    if abs(value).bit_length() <= 32:
        radix, digits = 10, str(value)
    else:
        radix, digits = 16, format(value, "x")
    return _INTEGER_HEAD.pack(radix, len(digits)) + digits.encode("ascii")


def _key_of(source: Any) -> Tuple[Any, int, Optional[Tuple[int, int]]]:
    """``(public, n, (p, q))`` from a fate_utils SK, ``(public, n, None)`` from a PK, where
    ``public`` is the PK given or None; the key may also be FATE's wrapper of one, or its pickled
    state."""
    paillier = _paillier()
    for attribute in ("sk", "pk"):  # FATE's own SK and PK classes hold fate_utils' in .sk and .pk
        inner = getattr(source, attribute, None)
        if isinstance(inner, (paillier.SK, paillier.PK)):
            source = inner
    if isinstance(source, (paillier.SK, paillier.PK)):
        data = bytes(source.__getstate__())
        fields = _SK_FIELDS if isinstance(source, paillier.SK) else _PK_FIELDS
    elif isinstance(source, (bytes, bytearray, memoryview, list)):
        data = _state(source)
        count = _integer_count(data)
        if count not in (len(_SK_FIELDS), len(_PK_FIELDS)):
            raise ValueError(
                "not a fate_utils SK or PK state: "
                + ("it is not a sequence of integers" if count < 0 else f"it holds {count} integers (an SK 10, a PK 3)")
            )
        fields = _SK_FIELDS if count == len(_SK_FIELDS) else _PK_FIELDS
    else:
        raise TypeError(
            "the key must be a fate_utils SK (or PK, for the service backend) or its pickled state, "
            f"not {type(source).__name__}"
        )
    reader = _Reader(data, "SK" if fields is _SK_FIELDS else "PK")
    values = dict(zip(fields, [reader.integer(_MAX_DIGITS) for _ in fields]))
    reader.end()
    n = values["n"]
    if n <= 0:
        raise _FormatError(f"not a fate_utils {reader.what} state: its n is not positive")
    if fields is _SK_FIELDS:
        return None, n, (values["p"], values["q"])
    if values["n²"] != n * n:
        raise _FormatError("not a fate_utils PK state: its n² is not n·n")
    return source if isinstance(source, paillier.PK) else None, n, None


def _state(source: Any) -> bytes:
    """A pickled state given as bytes, or as the list of ints ``__getstate__`` returns."""
    if isinstance(source, list):
        try:
            return bytes(source)
        except (TypeError, ValueError):
            raise TypeError("a state is bytes, or a list of ints from 0 to 255") from None
    return bytes(source)


def _integer_count(data: bytes) -> int:
    """How many integers a key's state holds, read without parsing them (-1: not a state)."""
    offset = count = 0
    while offset + _INTEGER_HEAD.size <= len(data):
        _, length = _INTEGER_HEAD.unpack_from(data, offset)
        offset += _INTEGER_HEAD.size + length
        count += 1
    return count if offset == len(data) else -1


class Decryptor(_Opened):
    """A fate_utils Paillier key opened in a backend, ready to decrypt FATE's vectors.

    ``decryptor.decrypt_to_encoded(vector)`` stands in for ``sk.decrypt_to_encoded(vector)`` and
    returns the same ``PlaintextVector`` (FATE's ``FixedpointVector``), bit for bit;
    ``decrypt_to_encoded_scalar`` likewise for one ``Ciphertext``.

    Args:
        key: a fate_utils ``SK`` (what ``fate_utils.paillier.keygen`` returns first, or FATE's
            wrapper of one), or its pickled state (``sk.__getstate__()``: bytes or the list of
            ints it returns). It is validated as :class:`ecrt.Decryptor` validates a key (p·q = n,
            p ≠ q, both prime). With ``backend="service"``, the service holds the private key: a
            ``PK`` or its state is enough, and of an ``SK`` only n is sent.
        backend: as for :class:`ecrt.Decryptor`, and so are the ``options``: ``threads``,
            ``device``, ``socket``, ``queue_depth``, ``timeout`` and ``cores``.

    Raises:
        ImportError: fate_utils is not installed.
        TypeError: the key is not a fate_utils key or a state.
        ValueError: the key or its state is invalid, or an option is out of range.
        DeviceError: the backend cannot be used (as for :class:`ecrt.Decryptor`).

    A context manager. Neither its repr nor any error shows the key's secrets.
    """

    def __init__(self, key: Any, backend: str = "cpu", **options: Any) -> None:
        self._public_key, n, primes = _key_of(key)
        if backend == "service":
            opened: Dict[str, Any] = {"public_n": n}  # the service holds the private key
        elif primes is None:
            raise ValueError(f'the {backend} backend needs the private key (a fate_utils SK); a PK opens backend="service"')
        else:
            opened = {"primes": (n, *primes)}
        self._open(opened, backend, **options)

    @property
    def public_key(self) -> Any:
        """The key's fate_utils ``PK`` (the one given, or one made from n)."""
        if self._public_key is None:
            public = _paillier().PK()
            n = self.n
            public.__setstate__(_write_integer(n) + _write_integer(n * n) + _write_integer(n // 2))
            self._public_key = public
        return self._public_key

    def decrypt_to_encoded(self, vector: Any, *, errors: str = "raise", progress: Optional[bool] = None) -> Any:
        """Decrypts a fate_utils ``CiphertextVector`` (FATE's ``FixedpointPaillierVector``):
        the ``PlaintextVector`` (``FixedpointVector``) that ``sk.decrypt_to_encoded`` returns.

        Args:
            vector: a ``CiphertextVector`` under this key.
            errors: ``"raise"`` raises :class:`ecrt.BatchError` if any item fails, naming each
                by its index, with the good items' ``Plaintext`` in its ``results``; ``"none"``
                returns a list instead of a vector, each item's ``Plaintext`` (what
                ``PlaintextVector.tolist()`` gives) or ``None``. An item fails when its
                ciphertext is out of range (fate_utils' are -n² < c < n², a negative one standing
                for c + n²; c ≡ 0 fails too; one made under a larger key is out of range) or the
                device fails. As for :meth:`ecrt.Decryptor.raw_decrypt`, gcd(c, n) is not checked:
                a ciphertext made under another key of the same size decrypts to noise, here as in
                fate_utils, whose ciphertexts do not name their key.
            progress: as for :meth:`ecrt.Decryptor.decrypt`.

        The GIL is released while the backend works; Ctrl-C stops the batch with
        ``KeyboardInterrupt`` and leaves the decryptor usable.
        """
        paillier = _paillier()
        if not isinstance(vector, paillier.CiphertextVector):
            raise TypeError(
                "decrypt_to_encoded takes a fate_utils CiphertextVector (FATE's FixedpointPaillierVector), "
                f"not {type(vector).__name__}"
            )
        reader = _Reader(bytes(vector.__getstate__()), "CiphertextVector")
        (count,) = reader.unpack(_U64)
        if count > len(reader.data):
            raise reader.fail(f"it claims {count} items")
        ciphertexts: List[Optional[int]] = []
        exponents: List[int] = []
        refused: List[Tuple[int, BaseException]] = []
        n2 = self.n * self.n
        for i in range(count):
            c = reader.integer()
            exponents.append(reader.unpack(_I32)[0])
            if c < 0:
                # fate_utils' encryption of a negative significand, and its sums, leave c negative
                # (rug's remainder takes the dividend's sign): the same ciphertext as c + n².
                if c <= -n2:
                    refused.append((i, ValueError(_OUT_OF_RANGE.format(bits=n2.bit_length(), c_bits=c.bit_length()))))
                    c = None
                else:
                    c += n2
            ciphertexts.append(c)
        reader.end()
        plaintexts, failures = self._batch(ciphertexts, None, refused, errors, progress)
        if not failures and errors == "raise":
            return _plaintext_vector(paillier, plaintexts, exponents)
        values = _plaintext_vector(paillier, [0 if m is None else m for m in plaintexts], exponents).tolist()
        for i in failures:
            values[i] = None
        _raise_failures(failures, values, errors)
        return values

    def decrypt_to_encoded_scalar(self, ciphertext: Any, *, errors: str = "raise") -> Any:
        """Decrypts one fate_utils ``Ciphertext``: the ``Plaintext`` that
        ``sk.decrypt_to_encoded_scalar`` returns, or (``errors="none"``) ``None`` for a bad one.
        A bad one raises :class:`ecrt.BatchError` naming item 0."""
        paillier = _paillier()
        if not isinstance(ciphertext, paillier.Ciphertext):
            raise TypeError(f"decrypt_to_encoded_scalar takes a fate_utils Ciphertext, not {type(ciphertext).__name__}")
        # A Ciphertext has no state of its own: added to a vector's zero (the ciphertext 1), it is
        # copied as it is, exponent and all.
        vector = paillier.CiphertextVector.zeros(1).add_scalar(self.public_key, ciphertext)
        result = self.decrypt_to_encoded(vector, errors=errors, progress=False)
        return result[0] if isinstance(result, list) else result.tolist()[0]


def _plaintext_vector(paillier: Any, plaintexts: List[int], exponents: List[int]) -> Any:
    """The ``PlaintextVector`` of these raw plaintexts and exponents, built from its state."""
    parts = [_U64.pack(len(plaintexts))]
    for m, exponent in zip(plaintexts, exponents):
        parts.append(_write_integer(m))
        parts.append(_I32.pack(exponent))
    vector = paillier.PlaintextVector()
    vector.__setstate__(b"".join(parts))
    return vector
