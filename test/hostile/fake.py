#!/usr/bin/python3
# fake.py — a scripted server that misbehaves, for the hostile suite.
#
#   fake.py PROTOCOL MODE PORT PORT2
#
# Listens on 127.0.0.1:PORT and 127.0.0.1:PORT2 and serves every connection
# in a thread.  It speaks just enough of the protocol (NATS, RESP or AMQP
# 0-9-1) for the store's handshake to succeed, then answers the store's
# first real request the way MODE says: the store must end that call by its timeout_ms, or at
# once on a cancel, whatever arrives.  PORT2 is a second server for the
# modes that send the store on (a cluster node or a master named by a
# sentinel on PORT); the other modes serve the same on both.  Stdlib only;
# stops when killed.
import re
import socket
import struct
import sys
import threading
import time

PROTO, MODE, PORT, PORT2 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
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


def nats_serve(conn, _port):
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


def addr(port):
    return b"127.0.0.1:%d" % port


def crc16(data):
    """CRC16-CCITT (XMODEM), the hash of Redis Cluster."""
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def hash_slot(args):
    """The slot of the command's first key "prefix:{tag}:...", as a node would
    judge it; a key of the prefix without a tag ("prefix:format") is hashed
    whole, as Redis does."""
    for a in args[1:]:
        m = re.match(rb"[A-Za-z0-9_-]+:\{([^}]+)\}", a)
        if m:
            return crc16(m.group(1)) & 16383
    if len(args) > 1 and re.match(rb"[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$", args[1]):
        return crc16(args[1]) & 16383
    return 0


def resp_redirect(args, port):
    """A cluster node's or a sentinel's answer to cmd on port, or None to
    answer as a plain master.  PORT is the node (or sentinel) of the URL;
    PORT2 the other node, or the master the sentinel names."""
    cmd = args[0].upper()
    other = PORT2 if port == PORT else PORT
    slot = hash_slot(args)
    if cmd == b"CLUSTER":
        # Every slot on the node asked, wherever it sends commands next.
        return b"*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n" + bulk(b"127.0.0.1") + b":%d\r\n" % port
    if cmd == b"ASKING":
        return b"+OK\r\n"
    if cmd == b"SENTINEL":
        named = PORT if MODE == "sentinel-self" else PORT2
        return b"*2\r\n" + bulk(b"127.0.0.1") + bulk(b"%d" % named)
    if cmd == b"ROLE" and MODE == "sentinel-self":
        return b"*2\r\n" + bulk(b"sentinel") + b"*1\r\n" + bulk(b"mymaster")
    if cmd == b"ROLE" and MODE == "sentinel-replica":
        return b"*5\r\n" + bulk(b"slave") + bulk(b"127.0.0.1") + b":%d\r\n" % PORT + bulk(b"connected") + b":0\r\n"
    if cmd in (b"INFO", b"ROLE", b"TIME"):
        return None
    if cmd == b"SCRIPT":
        # No key to redirect by: loaded, so that the claim's EVALSHA comes next.
        return bulk(b"0" * 40)
    if MODE == "cluster-moved-self":
        return b"-MOVED %d %s\r\n" % (slot, addr(port))
    if MODE == "cluster-ask-loop":
        return b"-ASK %d %s\r\n" % (slot, addr(port))
    if MODE in ("cluster-bounce", "cluster-moved-silent"):
        return b"-MOVED %d %s\r\n" % (slot, addr(other))
    if MODE == "sentinel-readonly":
        return b"-READONLY You can't write against a read only replica.\r\n"
    return None


def resp_serve(conn, port):
    f = conn.makefile("rb")
    # The silent server: it takes everything and never answers.
    if port == PORT2 and MODE.endswith("-silent"):
        for _ in resp_commands(f):
            pass
        return
    for args in resp_commands(f):
        cmd = args[0].upper() if args else b""
        answer = resp_redirect(args, port) if MODE.startswith(("cluster-", "sentinel-")) else None
        if answer is not None:
            conn.sendall(answer)
        elif cmd == b"INFO":
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


# ---------------------------------------------------------------- AMQP 0-9-1
FRAME_END = b"\xce"


def frame(kind, ch, payload, end=FRAME_END):
    return struct.pack(">BHI", kind, ch, len(payload)) + payload + end


def method(ch, cls, mid, args=b""):
    return frame(1, ch, struct.pack(">HH", cls, mid) + args)


def shortstr(b):
    return bytes([len(b)]) + b


HEARTBEAT = frame(8, 0, b"")


def amqp_frames(f):
    """The client's frames after its protocol header: (type, channel, class, method, payload)."""
    if f.read(8)[:4] != b"AMQP":
        return
    while True:
        head = f.read(7)
        if len(head) < 7:
            return
        kind, ch, size = struct.unpack(">BHI", head)
        payload = f.read(size + 1)[:-1]
        cls, mid = struct.unpack(">HH", payload[:4]) if kind == 1 else (0, 0)
        yield kind, ch, cls, mid, payload


def deliver(ch):
    """A message for a consumer that is not there: basic.deliver, its header and body."""
    body = b"not for you"
    return (method(ch, 60, 60, shortstr(b"ctag.someone") + struct.pack(">QB", 1, 0) + shortstr(b"") + shortstr(b"q"))
            + frame(2, ch, struct.pack(">HHQH", 60, 0, len(body), 0)) + frame(3, ch, body))


def returned(ch):
    """basic.return of someone else's message, with its header and body."""
    return (method(ch, 60, 50, struct.pack(">H", 312) + shortstr(b"NO_ROUTE") + shortstr(b"") + shortstr(b"other.queue"))
            + frame(2, ch, struct.pack(">HHQH", 60, 0, 1, 0)) + frame(3, ch, b"x"))


def amqp_hostile(conn, ch):
    declare_ok = method(ch, 50, 11, shortstr(b"gate") + struct.pack(">II", 0, 0))
    if MODE == "heartbeat-flood":
        flood(conn, HEARTBEAT * 512)
    elif MODE == "huge":
        conn.sendall(struct.pack(">BHI", 1, ch, 1 << 30))
        flood(conn, b"y" * 65536)
    elif MODE == "drip":
        drip(conn, declare_ok)
    elif MODE == "bad-end":
        conn.sendall(declare_ok[:-1] + b"\x00")
        time.sleep(FLOOD_S)
    elif MODE == "unknown-type":
        conn.sendall(frame(9, ch, b"what is this"))
        time.sleep(FLOOD_S)
    elif MODE == "wrong-method":
        conn.sendall(method(ch, 60, 11))      # basic.qos-ok, for a queue.declare
        time.sleep(FLOOD_S)
    elif MODE == "deliver-flood":
        flood(conn, deliver(ch) * 64)
    elif MODE == "return-flood":
        flood(conn, returned(ch) * 64)


def amqp_serve(conn, _port):
    conn.sendall(method(0, 10, 10, b"\x00\x09" + struct.pack(">I", 0) + struct.pack(">I", 5) + b"PLAIN"
                        + struct.pack(">I", 5) + b"en_US"))
    if MODE == "login-flood":
        threading.Thread(target=guard, args=(flood, conn, HEARTBEAT * 512), daemon=True).start()
    if MODE.startswith("login-"):
        for _ in amqp_frames(conn.makefile("rb")):
            pass
        return
    f = conn.makefile("rb")
    for kind, ch, cls, mid, payload in amqp_frames(f):
        if (cls, mid) == (10, 11):              # start-ok: tune
            conn.sendall(method(0, 10, 30, struct.pack(">HIH", 2047, 131072, 0)))
        elif (cls, mid) == (10, 40):            # connection.open
            conn.sendall(method(0, 10, 41, shortstr(b"")))
        elif (cls, mid) == (20, 10):            # channel.open
            conn.sendall(method(ch, 20, 11, struct.pack(">I", 0)))
        elif (cls, mid) == (85, 10):            # confirm.select
            conn.sendall(method(ch, 85, 11))
        elif (cls, mid) == (10, 50):            # connection.close
            conn.sendall(method(0, 10, 51))
            return
        elif (cls, mid) == (50, 10) and b".format." in payload[6:6 + payload[6] + 1]:
            # The format markers (amqp_format.c), answered as a broker would for
            # a prefix of this release: the hostile part is the claim's.
            name = payload[7:7 + payload[6]]
            if name.endswith(b".format.3"):     # a later release's: none (404 closes the channel)
                conn.sendall(method(ch, 20, 40, struct.pack(">H", 404) + shortstr(b"NOT_FOUND - no queue")
                                    + struct.pack(">HH", 50, 10)))
            else:
                conn.sendall(method(ch, 50, 11, shortstr(name) + struct.pack(">II", 0, 0)))
        elif (cls, mid) == (20, 41):            # channel.close-ok
            pass
        elif (cls, mid) == (50, 10):            # queue.declare of the gate: the claim's first question
            threading.Thread(target=guard, args=(amqp_hostile, conn, ch), daemon=True).start()
            for _ in amqp_frames_rest(f):
                pass
            return


def amqp_frames_rest(f):
    """Whatever the client sends next, read and dropped."""
    while f.read(65536):
        yield


def guard(fn, *args):
    """A client that hung up ends its thread quietly."""
    try:
        fn(*args)
    except OSError:
        pass


def listen(port):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(16)
    return srv


def accept_all(srv, port):
    """Serve every connection to port in a thread of its own."""
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=guard, args=(SERVE[PROTO], conn, port), daemon=True).start()


def main():
    # Both bound before either accepts: once PORT answers, the suite starts.
    servers = [(listen(PORT2), PORT2), (listen(PORT), PORT)]
    threading.Thread(target=accept_all, args=servers[0], daemon=True).start()
    accept_all(*servers[1])


SERVE = {"nats": nats_serve, "resp": resp_serve, "amqp": amqp_serve}
main()
