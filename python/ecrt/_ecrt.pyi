"""The native half of ``ecrt``: a key opened in a backend of the driver. Use :class:`ecrt.Decryptor`."""

from typing import Callable, List, Optional, Sequence, Tuple, Union

MAX_QUEUE_DEPTH: int

class DeviceError(RuntimeError):
    """The backend cannot be used: no device, a bitstream for another key size, a C2H node another
    process holds, a failed Verilator build."""

class _Decryptor:
    def __init__(
        self,
        *,
        key_file: Optional[str] = None,
        primes: Optional[Tuple[int, int, int]] = None,
        public_n: Optional[int] = None,
        backend: str = "cpu",
        threads: Optional[int] = None,
        device: Optional[str] = None,
        socket: Optional[str] = None,
        queue_depth: int = 256,
        timeout: Optional[float] = None,
        cores: Optional[int] = None,
    ) -> None: ...
    @property
    def n(self) -> int: ...
    @property
    def backend(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def run(
        self,
        ciphertexts: List[Optional[int]],
        exponents: Optional[Sequence[int]] = None,
        progress: Optional[Callable[[int], None]] = None,
    ) -> List[Union[int, float, Tuple[str, str]]]:
        """One entry per ciphertext: its plaintext (decoded when exponents are given), or
        ``(exception class name, message)``."""
    def close(self) -> None: ...
