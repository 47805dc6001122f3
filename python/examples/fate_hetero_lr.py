"""Vertical ("hetero") logistic regression as FATE trains it, written small: the arbiter, which
holds the Paillier key, decrypts the parties' gradients through ecrt.

Three parties, FATE's roles, all in this process: the guest holds the labels and some features of
every sample, the host the other features of the same samples, the arbiter the key
(``fate_utils.paillier.keygen``). Each iteration, with FATE's Taylor approximation of the logistic
loss and ``fate_utils`` for all the encrypted arithmetic:

1. the host sends the guest [[X_h·w_h]], encrypted under the arbiter's public key;
2. the guest computes [[d]] = 0.25·([[X_h·w_h]] + X_g·w_g) − 0.5·y (labels ±1) and sends it to
   the host;
3. each party computes its encrypted gradient [[X·d]] / n, adds a random mask and sends it to
   the arbiter;
4. the arbiter decrypts both gradients at once (one ``FixedpointPaillierVector``) and returns
   them: ``decryptor.decrypt_to_encoded(vector)`` where FATE calls ``sk.decrypt_to_encoded(vector)``;
5. each party removes its mask and steps its weights.

The same training runs twice, with the same masks: once decrypting with ``fate_utils`` alone and
once through ``ecrt.fate.Decryptor``; the example checks that the models are the same, bit for bit,
and prints the weights and the accuracy on the training data.

    python examples/fate_hetero_lr.py                        # ecrt's cpu backend
    python examples/fate_hetero_lr.py --backend sim --samples 40 --iterations 2   # the accelerator's model
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable, Tuple

import numpy as np

import ecrt.fate

try:
    from fate_utils import paillier  # FATE 2's Paillier: pip install fate-utils
except ImportError as error:
    sys.exit(f"this example needs fate_utils ({error}): pip install fate-utils (CPython 3.11, x86_64 Linux)")


def data(samples: int, guest_features: int, host_features: int, seed: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each party's features, and the guest's labels (±1) from a hidden linear model."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(samples, guest_features + host_features))
    truth = rng.normal(size=guest_features + host_features)
    y = np.where(x @ truth + 0.3 * rng.normal(size=samples) > 0, 1.0, -1.0)
    return x[:, :guest_features], x[:, guest_features:], y


def train(
    decrypt_to_encoded: Callable[[Any], Any],
    pk: Any,
    coder: Any,
    x_guest: np.ndarray,
    x_host: np.ndarray,
    y: np.ndarray,
    iterations: int,
    learning_rate: float,
    seed: int,
) -> Tuple[np.ndarray, np.ndarray]:
    """The protocol above; the arbiter decrypts with ``decrypt_to_encoded``."""
    masks = np.random.default_rng(seed)  # the parties' masks: the same in both runs
    samples = len(y)
    w_guest = np.zeros(x_guest.shape[1])
    w_host = np.zeros(x_host.shape[1])

    def encrypt(values: np.ndarray) -> Any:
        return pk.encrypt_encoded(coder.encode_f64_vec(np.ascontiguousarray(values, dtype=np.float64)), True)

    def gradient(x: np.ndarray, d: Any) -> Any:
        # [[xᵀ·d]] / n: the (features × samples) plaintext matrix times the (samples × 1) vector.
        xt = coder.encode_f64_vec(np.ascontiguousarray((x / samples).T.ravel()))
        return d.rmatmul(pk, xt, [samples, 1], [x.shape[1], samples])

    for _ in range(iterations):
        # 1. host -> guest
        u_host = encrypt(x_host @ w_host)
        # 2. guest -> host
        d = u_host.mul_scalar(pk, coder.encode_f64(0.25)).add(pk, encrypt(0.25 * (x_guest @ w_guest) - 0.5 * y))
        # 3. guest and host -> arbiter, masked
        r_guest = masks.uniform(-1, 1, x_guest.shape[1])
        r_host = masks.uniform(-1, 1, x_host.shape[1])
        masked = paillier.Evaluator.cat(
            [gradient(x_guest, d).add(pk, encrypt(r_guest)), gradient(x_host, d).add(pk, encrypt(r_host))]
        )
        # 4. the arbiter decrypts: the one line ecrt changes
        plain = coder.decode_f64_vec(decrypt_to_encoded(masked))
        # 5. each party unmasks its own and steps
        w_guest -= learning_rate * (plain[: len(r_guest)] - r_guest)
        w_host -= learning_rate * (plain[len(r_guest) :] - r_host)
    return w_guest, w_host


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="cpu", help="ecrt's backend: cpu, sim or xdma (default cpu)")
    parser.add_argument("--device", help="the XDMA nodes' prefix (xdma backend)")
    parser.add_argument("--bits", type=int, default=1024, help="key size (default 1024)")
    parser.add_argument("--samples", type=int, default=120)
    parser.add_argument("--guest-features", type=int, default=4)
    parser.add_argument("--host-features", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--learning-rate", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    sk, pk, coder = paillier.keygen(args.bits)  # the arbiter's
    x_guest, x_host, y = data(args.samples, args.guest_features, args.host_features, args.seed)
    common = (pk, coder, x_guest, x_host, y, args.iterations, args.learning_rate, args.seed)

    started = time.perf_counter()
    alone = train(sk.decrypt_to_encoded, *common)
    print(f"fate_utils alone: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    started = time.perf_counter()
    with ecrt.fate.Decryptor(sk, backend=args.backend, device=args.device) as decryptor:
        offloaded = train(decryptor.decrypt_to_encoded, *common)
    print(f"through ecrt ({args.backend}): {time.perf_counter() - started:.1f} s", file=sys.stderr)

    same = all(np.array_equal(a, b) for a, b in zip(alone, offloaded))
    w = np.concatenate(offloaded)
    accuracy = np.mean(np.where(np.hstack([x_guest, x_host]) @ w > 0, 1.0, -1.0) == y)
    print(f"guest weights {np.round(offloaded[0], 6).tolist()}")
    print(f"host weights  {np.round(offloaded[1], 6).tolist()}")
    print(f"training accuracy {accuracy:.3f} after {args.iterations} iterations")
    if not same:
        print("the models differ: ecrt decrypted something other than fate_utils", file=sys.stderr)
        return 1
    print("the same model as with fate_utils alone, bit for bit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
