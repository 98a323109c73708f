"""nkeygen.py — make NATS nkeys for the tests with Python's cryptography,
independently of the C code under test: `user DIR` writes DIR/user.seed and
DIR/user.pub; `operator`/`account` kinds are made the same way."""
import base64, os, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization

PREFIX = {"seed": 18 << 3, "operator": 14 << 3, "account": 0, "user": 20 << 3}

def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc

def enc(raw):
    raw = raw + crc16(raw).to_bytes(2, "little")
    return base64.b32encode(raw).decode().rstrip("=")

def make(kind):
    seed = os.urandom(32)
    p = PREFIX[kind]
    s = enc(bytes([PREFIX["seed"] | (p >> 5), (p & 31) << 3]) + seed)
    pub = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return s, enc(bytes([p]) + pub), Ed25519PrivateKey.from_private_bytes(seed)

if __name__ == "__main__":
    kind, d = sys.argv[1], sys.argv[2]
    s, pub, _ = make(kind)
    open(os.path.join(d, kind + ".seed"), "w").write(s + "\n")
    open(os.path.join(d, kind + ".pub"), "w").write(pub + "\n")
    print(pub)


def b64u(b):
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def jwt(issuer_key, issuer_pub, subject_pub, name, nats):
    """A NATS v2 JWT: header, claims, Ed25519 signature by the issuer's key."""
    import hashlib, json, time
    header = {"typ": "JWT", "alg": "ed25519-nkey"}
    claims = {"jti": "", "iat": int(time.time()), "iss": issuer_pub, "name": name,
              "sub": subject_pub, "nats": dict(nats, version=2)}
    claims["jti"] = base64.b32encode(hashlib.sha256(json.dumps(claims).encode()).digest()).decode().rstrip("=")
    signing_input = b64u(json.dumps(header).encode()) + "." + b64u(json.dumps(claims).encode())
    return signing_input + "." + b64u(issuer_key.sign(signing_input.encode()))


def operator_setup(d, system=False):
    """Operator, account and user: writes DIR/operator.jwt, DIR/account.pub,
    DIR/account.jwt and DIR/user.creds (as NATS's tools write them).  With
    system, a system account too (DIR/sys.pub, DIR/sys.jwt), which JetStream
    in operator mode needs."""
    _, opub, okey = make("operator")
    _, apub, akey = make("account")
    useed, upub, _ = make("user")
    op = {"type": "operator"}
    if system:
        _, spub, _ = make("account")
        op["system_account"] = spub
        open(os.path.join(d, "sys.pub"), "w").write(spub)
        open(os.path.join(d, "sys.jwt"), "w").write(jwt(okey, opub, spub, "SYS", {"type": "account", "limits": {
            "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True,
            "conn": -1, "leaf": -1}}))
    ojwt = jwt(okey, opub, opub, "op", op)
    ajwt = jwt(okey, opub, apub, "acc", {"type": "account", "limits": {
        "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True,
        "conn": -1, "leaf": -1, "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}})
    ujwt = jwt(akey, apub, upub, "usr", {"type": "user", "pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1})
    open(os.path.join(d, "operator.jwt"), "w").write(ojwt)
    open(os.path.join(d, "account.pub"), "w").write(apub)
    open(os.path.join(d, "account.jwt"), "w").write(ajwt)
    open(os.path.join(d, "user.creds"), "w").write(
        "-----BEGIN NATS USER JWT-----\n%s\n------END NATS USER JWT------\n\n"
        "************************* IMPORTANT *************************\n"
        "NKEY Seed printed below can be used to sign and prove identity.\n"
        "NKEYs are sensitive and should be treated as secrets.\n\n"
        "-----BEGIN USER NKEY SEED-----\n%s\n------END USER NKEY SEED------\n\n"
        "*************************************************************\n" % (ujwt, useed))
