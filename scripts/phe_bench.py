"""Times python-paillier (phe) decryption for `ecrt bench`, on the ciphertexts ecrt made.

Usage: python phe_bench.py KEY.jwk CIPHERTEXTS.jsonl
Loads the key and ciphertexts, prints {"ready": ..., "gmpy2": bool, "plaintexts": [...]} (the raw
plaintexts, so that ecrt checks phe agrees), then for each line "raw" or "decrypt" on stdin times
one pass over all ciphertexts with phe's raw_decrypt or decrypt and prints the seconds.
"""
import json
import sys
import time

import phe
import phe.util


def main():
    key_path, ciphertexts_path = sys.argv[1], sys.argv[2]
    with open(key_path) as f:
        jwk = json.load(f)
    public = phe.PaillierPublicKey(phe.util.base64_to_int(jwk["pub"]["n"]))
    private = phe.PaillierPrivateKey(
        public, phe.util.base64_to_int(jwk["p"]), phe.util.base64_to_int(jwk["q"])
    )
    with open(ciphertexts_path) as f:
        encrypted = [
            phe.EncryptedNumber(public, int(obj["v"]), exponent=obj["e"])
            for obj in map(json.loads, f)
        ]
    raw = [private.raw_decrypt(e.ciphertext(be_secure=False)) for e in encrypted]
    print(json.dumps({"ready": True, "gmpy2": bool(phe.util.HAVE_GMP), "plaintexts": [str(m) for m in raw]}), flush=True)
    for command in sys.stdin:
        command = command.strip()
        start = time.perf_counter()
        if command == "raw":
            for e in encrypted:
                private.raw_decrypt(e.ciphertext(be_secure=False))
        elif command == "decrypt":
            for e in encrypted:
                private.decrypt(e)
        else:
            break
        print(json.dumps({"seconds": time.perf_counter() - start}), flush=True)


if __name__ == "__main__":
    main()
