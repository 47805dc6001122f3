#!/usr/bin/env python3
"""Generate fixtures/encoding/phe-encoding.json: python-paillier's EncodedNumber, as ground truth.

Run with a Python that has phe 1.5.0 installed (gmpy2 optional; it does not affect encoding):

    python scripts/gen-encoding-fixture.py            # writes fixtures/encoding/phe-encoding.json

The output is deterministic (fixed seed) for a given Python/phe version. It is checked case by case by
golden-model/src/encoding.rs (`cargo test -p ecrt-golden encoding`).

Layout: {"generator", "python", "moduli": [{"name", "n", "max_int", "cases": [...]}], "repr": [...]}.
Integers are hex strings (Python's hex(): "0x..", "-0x.."), because str() of an int is limited to
4300 digits on Python >= 3.11. Floats are stored losslessly as their IEEE-754 bit pattern
("bits", 16 hex digits) with Python's repr() alongside. Each case is one of

  {"op": "encode_int",   "value": hex, "expect": R}
  {"op": "encode_float", "bits": .., "repr": .., "max_exponent": int or null, "expect": R}
      R = {"encoding": hex, "exponent": int}
  {"op": "decrease", "encoding": hex, "exponent": int, "new_exponent": int, "expect": R}
  {"op": "decode", "encoding": hex, "exponent": int, "expect": D}
      D = {"int": str(value)} | {"float": bits, "repr": repr(value)}

and any "expect" may instead be {"error": exception class name, "message": str(exception)}.
"repr" is a list of [bits, repr(float)] pairs checking the Rust float-to-JSON rendering.
"""

import json
import math
import os
import random
import struct
import sys
from decimal import Decimal

import phe
from phe import EncodedNumber, PaillierPublicKey
from phe.util import base64_to_int

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "fixtures", "encoding", "phe-encoding.json")

rng = random.Random(0xEC27)

# A 128-bit modulus: the product of the 64-bit primes 2^64-59 and 2^64-83. Encoding only depends on n,
# small n makes the overflow band and max_int easy to reach with floats.
N128 = (2**64 - 59) * (2**64 - 83)


def key_n(name):
    with open(os.path.join(ROOT, "fixtures", "vectors", name + ".json")) as f:
        return base64_to_int(json.load(f)["private_key"]["pub"]["n"])


def bits_of(x):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", x))[0]


def from_bits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def err(e):
    return {"error": type(e).__name__, "message": str(e)}


def enc_result(f):
    try:
        e = f()
    except (ValueError, OverflowError, ZeroDivisionError) as e:
        return err(e)
    return {"encoding": hex(e.encoding), "exponent": e.exponent}


def dec_result(pub, encoding, exponent):
    try:
        v = EncodedNumber(pub, encoding, exponent).decode()
    except (ValueError, OverflowError) as e:
        return err(e)
    if isinstance(v, float):
        return {"float": bits_of(v), "repr": repr(v)}
    return {"int": str(v)}


def random_double(finite=True):
    """A uniformly random bit pattern: covers the whole exponent range, subnormals included."""
    while True:
        x = from_bits(rng.getrandbits(64))
        if not finite or math.isfinite(x):
            return x


class Group:
    def __init__(self, name, n):
        self.name = name
        self.pub = PaillierPublicKey(n)
        self.n = n
        self.max_int = self.pub.max_int
        self.cases = []

    def encode_int(self, v):
        self.cases.append({"op": "encode_int", "value": hex(v),
                           "expect": enc_result(lambda: EncodedNumber.encode(self.pub, v))})

    def encode_float(self, x, max_exponent=None):
        r = enc_result(lambda: EncodedNumber.encode(self.pub, x, max_exponent=max_exponent))
        self.cases.append({"op": "encode_float", "bits": bits_of(x), "repr": repr(x),
                           "max_exponent": max_exponent, "expect": r})
        return r

    def decrease(self, encoding, exponent, new_exponent):
        r = enc_result(lambda: EncodedNumber(self.pub, encoding, exponent).decrease_exponent_to(new_exponent))
        self.cases.append({"op": "decrease", "encoding": hex(encoding), "exponent": exponent,
                           "new_exponent": new_exponent, "expect": r})
        return r

    def decode(self, encoding, exponent):
        self.cases.append({"op": "decode", "encoding": hex(encoding), "exponent": exponent,
                           "expect": dec_result(self.pub, encoding, exponent)})

    def pheutil_chain(self, x):
        """pheutil-like: encode with max_exponent=-32, fix the exponent at -32, decode."""
        r = self.encode_float(x, -32)
        if "error" not in r:
            enc = int(r["encoding"], 16)
            r2 = self.decrease(enc, r["exponent"], -32)
            if "error" not in r2:
                self.decode(int(r2["encoding"], 16), -32)
        # ... and what pheutil really does: plain encode, then decrease to -32 if the exponent is larger.
        r = self.encode_float(x)
        if "error" not in r and r["exponent"] > -32:
            r2 = self.decrease(int(r["encoding"], 16), r["exponent"], -32)
            if "error" not in r2:
                self.decode(int(r2["encoding"], 16), -32)

    def to_json(self):
        return {"name": self.name, "n": hex(self.n), "max_int": hex(self.max_int), "cases": self.cases}


def full_group(name, n, n_random, digit_limit):
    g = Group(name, n)
    m = g.max_int
    bits = n.bit_length()

    # --- encode ints: edges, random sizes, and the int-to-str digit limit of Python >= 3.11
    for v in [0, 1, -1, 2, -2, m, -m, m - 1, -(m - 1), m + 1, -(m + 1), n // 2, -(n // 2),
              n - m - 1, n - 1, n, -n, n + 1, 2**bits, -(2**bits)]:
        g.encode_int(v)
    for _ in range(n_random):
        v = rng.getrandbits(rng.randint(1, bits + 8))
        g.encode_int(v if rng.random() < 0.5 else -v)
    if digit_limit:
        g.encode_int(10**4299)   # 4300 digits: the message still formats
        g.encode_int(-10**4299)
        g.encode_int(10**4300)   # 4301 digits: '%d' itself raises ValueError

    # --- encode floats, default exponent (as phe's encrypt)
    special = [0.0, -0.0, 1.0, -1.0, 3.5, -0.125, 0.1, -0.1, 1e-07, 123456.789, 0.0001, 1e16, 1.5e16,
               1e22, 5e-324, -5e-324, 1e-323, 2.2250738585072014e-308, 2.225073858507201e-308,
               1.7976931348623157e+308, -1.7976931348623157e+308, 2.0**-1022, 2.0**-1023, 2.0**53,
               2.0**53 + 2, float(m), -float(m), float(n), float("inf"), float("-inf"), float("nan")]
    for x in special:
        g.encode_float(x)
    for k in range(-1074, 1024, 41):
        g.encode_float(2.0**k)
        g.encode_float(-(2.0**k))
    for _ in range(n_random):
        g.encode_float(random_double())
    for _ in range(n_random // 4):  # subnormals
        x = from_bits(rng.getrandbits(52) | (rng.getrandbits(1) << 63))
        g.encode_float(x)

    # --- encode floats with max_exponent: x * 16^-max_exponent near max_int, and random
    for me in [-32, -8, 0, 4]:
        edge = m / 16.0**-me   # float, close to max_int / 16^-me
        for x in [edge, math.nextafter(edge, 0.0), math.nextafter(edge, math.inf),
                  math.nextafter(math.nextafter(edge, math.inf), math.inf), -edge,
                  -math.nextafter(edge, math.inf)]:
            g.encode_float(x, me)
    for _ in range(n_random // 2):
        g.encode_float(random_double(), rng.randint(-300, 300))
    g.encode_float(0.0, -1000)
    g.encode_float(1.5, 1000)

    # --- the pheutil path
    for x in [0.0, -0.0, 1.0, -2.5, 0.1, 1e-07, 123456.789, 1e10, 1e20, 1e30, 2.0**100, 1e300, 5e-324,
              2.0**-1000, float(m), 1.7976931348623157e+308]:
        g.pheutil_chain(x)
    for _ in range(n_random // 4):
        g.pheutil_chain(random_double())

    # --- decrease_exponent_to on random encodings
    for _ in range(n_random // 4):
        e = rng.randint(-300, 20)
        g.decrease(rng.randrange(n), e, e - rng.randint(0, 40))
    g.decrease(5, -3, -3)
    g.decrease(5, -3, -2)    # exponent increase: ValueError (note phe's message lacks a space)
    g.decrease(n + 5, 0, -1)  # phe does not check encoding < n

    # --- decode: encodings spread over [0, n], edges, and the overflow band
    edges = [0, 1, 2, m - 1, m, m + 1, n // 2, n - m - 2, n - m - 1, n - m, n - m + 1, n - 2, n - 1,
             n, n + 1]
    for v in edges:
        for e in [0, 3, -1, -32, -270]:
            g.decode(v, e)
    for _ in range(n_random):
        r = rng.random()
        if r < 0.25:
            v = rng.randrange(m + 1)                 # positive
        elif r < 0.5:
            v = rng.randrange(n - m, n)              # negative
        elif r < 0.6:
            v = rng.randrange(m + 1, n - m)          # overflow band
        elif r < 0.9:                                 # small magnitude, either sign
            v = rng.getrandbits(rng.randint(1, min(bits - 3, 200))) * rng.choice([1, -1]) % n
        else:
            v = rng.randrange(n + 1, 2 * n)          # corrupted
        g.decode(v, rng.randint(-400, 8))
    # Rounding of the int / int division: ties (half-even), just above/below ties, subnormals, underflow.
    for sign in [1, -1]:
        for k in [1, 3, 20, 100]:
            for mant in [2**53 + 1, 2**53 + 3, 2**53 - 1, 2**54 + 2, 2**54 + 6]:
                low = min(bits - 60, 4 * k)
                for extra in [0, 1, -1]:
                    mm = (mant << low) + extra if low > 0 else mant
                    if mm <= m:
                        g.decode(sign * mm % n, -k)
        for mm, e in [(1, -268), (1, -269), (2, -269), (3, -269), (4, -269), (5, -269), (6, -269),
                      (7, -270), (8, -270), (9, -270), (24, -270), (25, -270), (2**52 - 1, -268),
                      (2**56 - 16, -269), (2**56 - 15, -269), (2**56 - 8, -269), (2**56 - 7, -269),
                      (2**56 - 9, -269), (3, -300), (2**20, -400), (2**200 + 1, -400)]:
            if mm <= m:
                g.decode(sign * mm % n, e)
    return g


def float_overflow_group(name, n):
    """Decoding a mantissa of more than 1024 bits with a small negative exponent: too large for a float."""
    g = Group(name, n)
    m = g.max_int
    top = (2**53 - 1) << 971          # the largest double, exactly
    half = 1 << 970                   # half an ulp of it
    for k in [1, 2, 5]:
        s = 16**k
        for mm in [top * s, top * s + half * s - 1, top * s + half * s, top * s + half * s + 1,
                   2**1024 * s, 2**1024 * s - 1, 2**1024 * s + 1, (2**1024 - half) * s - 1]:
            for sign in [1, -1]:
                if mm <= m:
                    g.decode(sign * mm % n, -k)
    for _ in range(10):
        g.decode(rng.randrange(m + 1), rng.randint(-20, -1))
        g.decode(rng.randrange(n - m, n), rng.randint(-20, -1))
    g.decode(m, -1)
    g.decode(n - m, -1)
    return g


def tiny_group(n):
    """Degenerate moduli: phe's max_int = n // 3 - 1 is negative for n < 3."""
    g = Group("tiny-%d" % n, n)
    for v in [0, 1, -1, 2]:
        g.encode_int(v)
    for x in [0.0, 1.0, -0.5]:
        g.encode_float(x)
    for v in range(0, n + 2):
        g.decode(v, 0)
        g.decode(v, -1)
    g.decrease(1, 0, -1)
    g.decrease(3, 2, 0)
    return g


def main():
    groups = [
        full_group("phe-1024", key_n("phe-1024"), 32, False),
        full_group("n128", N128, 60, True),
        float_overflow_group("phe-2048", key_n("phe-2048")),
    ] + [tiny_group(n) for n in [0, 1, 2, 3, 4, 7, 17]]

    reprs = []
    for _ in range(1000):
        x = random_double()
        reprs.append([bits_of(x), repr(x)])
    for _ in range(300):  # short decimal strings: the shortest round trip is often much shorter
        x = float("%.*e" % (rng.randint(0, 6), random_double()))
        if math.isfinite(x):
            reprs.append([bits_of(x), repr(x)])
    # x = m·5^p·2^e can lie exactly halfway between two equally short decimal candidates; repr then
    # picks the even one. Keep 100 such ties (and 100 near misses).
    ties, misses = 0, 0
    while ties < 100 or misses < 100:
        p = rng.randint(1, 22)
        mm = (rng.randrange(1, 2**53 // 5**p + 1) | 1) * 5**p
        x = math.ldexp(mm, rng.randint(-80, 60) if rng.random() < 0.8 else rng.randint(-1074, 971))
        if x == 0 or not math.isfinite(x):
            continue
        r = repr(x)
        half_ulp = Decimal((0, (5,), Decimal(r).as_tuple().exponent - 1))
        if abs(Decimal(x) - Decimal(r)) == half_ulp:
            ties += 1
        elif misses < 100:
            misses += 1
        else:
            continue
        reprs.append([bits_of(x), r])
    for x in [233891771783429.625, -2056329632651247.25, 21346066203752.5625]:
        reprs.append([bits_of(x), repr(x)])
    for k in range(-30, 30):
        for x in [10.0**k, 1.5 * 10.0**k, 9.999999999999999 * 10.0**k, -10.0**k]:
            reprs.append([bits_of(x), repr(x)])

    doc = {
        "generator": "scripts/gen-encoding-fixture.py with python-paillier (phe) %s" % phe.__version__,
        "python": sys.version.split()[0],
        "moduli": [g.to_json() for g in groups],
        "repr": reprs,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    # One case per line: reviewable diffs without a megabyte-long line.
    with open(OUT, "w") as f:
        f.write('{\n"generator": %s,\n"python": %s,\n"moduli": [\n'
                % (json.dumps(doc["generator"]), json.dumps(doc["python"])))
        for i, g in enumerate(doc["moduli"]):
            f.write('{"name": %s, "n": %s, "max_int": %s, "cases": [\n'
                    % (json.dumps(g["name"]), json.dumps(g["n"]), json.dumps(g["max_int"])))
            f.write(",\n".join(json.dumps(c) for c in g["cases"]))
            f.write("\n]}%s\n" % ("," if i + 1 < len(doc["moduli"]) else ""))
        f.write('],\n"repr": [\n')
        f.write(",\n".join(json.dumps(r) for r in doc["repr"]))
        f.write("\n]\n}\n")
    total = sum(len(g.cases) for g in groups)
    print("wrote %s: %d cases, %d repr checks" % (OUT, total, len(reprs)), file=sys.stderr)


if __name__ == "__main__":
    main()
