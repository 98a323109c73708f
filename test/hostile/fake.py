#!/usr/bin/python3
# fake.py — a scripted server that misbehaves, for the hostile suite.
#
#   fake.py PROTOCOL MODE PORT
#
# Listens on 127.0.0.1:PORT and serves every connection in a thread.  It
# speaks just enough of the protocol (NATS or RESP) for the store's
# handshake to succeed, then answers the store's first real request the way
# MODE says: the store must end that call by its timeout_ms, or at once on a
# cancel, whatever arrives.  Stdlib only; stops when killed.
import socket
import sys
import threading
import time

PROTO, MODE, PORT = sys.argv[1], sys.argv[2], int(sys.argv[3])
# How long a flood goes on at most: far past any timeout_ms the suite uses,
# so a client that does not stop by itself is seen hanging.
FLOOD_S = 60


def flood(conn, chunk):
    """Send chunk again and again, without pause, until the client leaves."""
    end = time.monotonic() + FLOOD_S
    while time.monotonic() < end:
        conn.sendall(chunk)


def drip(conn, data, gap=0.05):
    """Send data one byte at a time, gap seconds apart."""
    for b in data:
        conn.sendall(bytes([b]))
        time.sleep(gap)


# ---------------------------------------------------------------- NATS
def nats_lines(f):
    """The client's commands: (line, payload or None)."""
    while True:
        line = f.readline()
        if not line:
            return
        words = line.split()
        payload = None
        if words and words[0].upper() in (b"PUB", b"HPUB"):
            payload = f.read(int(words[-1]) + 2)
        yield words, payload


def nats_hostile(conn, reply):
    junk = b"x" * 200
    if MODE == "info-flood":
        flood(conn, b'INFO {"server_id":"fake","headers":true}\r\nPING\r\n' * 64)
    elif MODE == "msg-flood":
        flood(conn, b"MSG _INBOX.someone.else.1 1 5\r\nhello\r\n" * 64)
    elif MODE == "drip":
        body = b'{"type":"io.nats.jetstream.api.v1.stream_info_response","config":' + junk + b"}"
        drip(conn, b"MSG %s 1 %d\r\n%s\r\n" % (reply, len(body), body))
    elif MODE == "huge":
        conn.sendall(b"MSG %s 1 1073741824\r\n" % reply)
        flood(conn, b"y" * 65536)
    elif MODE == "long-line":
        flood(conn, b"INFO " + b"z" * 65536)
    elif MODE == "malformed":
        conn.sendall(b"MSG %s 1 notasize\r\n" % reply)
        time.sleep(FLOOD_S)


def nats_serve(conn):
    conn.sendall(b'INFO {"server_id":"fake","version":"2.9.10","headers":true,"max_payload":1048576}\r\n')
    f = conn.makefile("rb")
    for words, payload in nats_lines(f):
        cmd = words[0].upper() if words else b""
        if cmd == b"PING":
            conn.sendall(b"PONG\r\n")
        elif cmd in (b"PUB", b"HPUB"):
            # The reply subject: PUB subject reply n / HPUB subject reply h n.
            reply = words[2]
            threading.Thread(target=guard, args=(nats_hostile, conn, reply), daemon=True).start()
            # Keep reading (the client's PONGs) so its sends never block.
            for _ in nats_lines(f):
                pass
            return


# ---------------------------------------------------------------- RESP
def resp_commands(f):
    """The client's commands, each a list of byte strings."""
    while True:
        line = f.readline()
        if not line:
            return
        if not line.startswith(b"*"):
            continue
        args = []
        for _ in range(int(line[1:])):
            n = int(f.readline()[1:])
            args.append(f.read(n + 2)[:-2])
        yield args


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


def resp_hostile(conn):
    if MODE == "pong-flood":
        flood(conn, b"+PONG\r\n" * 512)
    elif MODE == "bulk-1g":
        conn.sendall(b"$1073741824\r\n")
        flood(conn, b"y" * 65536)
    elif MODE == "array-1g":
        conn.sendall(b"*1000000000\r\n")
        flood(conn, b":1\r\n" * 16384)
    elif MODE == "drip":
        drip(conn, bulk(b"w" * 200))
    elif MODE == "malformed":
        conn.sendall(b"?what is this\r\n")
        time.sleep(FLOOD_S)


def resp_serve(conn):
    f = conn.makefile("rb")
    for args in resp_commands(f):
        cmd = args[0].upper() if args else b""
        if cmd == b"INFO":
            conn.sendall(bulk(b"# Server\r\nredis_version:7.0.15\r\n"))
        elif cmd == b"ROLE":
            conn.sendall(b"*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n")
        elif cmd == b"TIME":
            s = time.time()
            conn.sendall(b"*2\r\n" + bulk(b"%d" % int(s)) + bulk(b"%d" % int((s % 1) * 1e6)))
        elif MODE == "wrong-type":
            # Every command, TIME pipelined after it too, answered with an integer.
            conn.sendall(b":42\r\n")
        else:
            threading.Thread(target=guard, args=(resp_hostile, conn), daemon=True).start()
            for _ in resp_commands(f):
                pass
            return


def guard(fn, *args):
    """A client that hung up ends its thread quietly."""
    try:
        fn(*args)
    except OSError:
        pass


def main():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", PORT))
    srv.listen(16)
    serve = nats_serve if PROTO == "nats" else resp_serve
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=guard, args=(serve, conn), daemon=True).start()


main()
