"""quorum_probe.py — can a quorum queue be a gate?  (the amqp suite)

    quorum_probe.py PORT GATES

A gate is a queue of x-max-length 1 with x-overflow reject-publish: of the
claims published into it at once, the broker must ack exactly one.  For each
queue type (classic, quorum) this declares GATES fresh gates, has 16
processes, each on its own connection with publisher confirms, publish into
each gate at the same moment, and prints the most acks one gate gave:

    classic 1
    quorum 16

pika (python3-pika) is the client: the probe asks the broker a question about
itself, and needs no code of the project.
"""
import multiprocessing
import sys
import time

import pika

PROCS = 16


def channel(port):
    conn = pika.BlockingConnection(pika.ConnectionParameters("127.0.0.1", port))
    ch = conn.channel()
    ch.confirm_delivery()
    return conn, ch


def publisher(port, qtype, gates, start, out):
    conn, ch = channel(port)
    acks = []
    for g in range(gates):
        name = "probe.%s.%d.%d" % (qtype, start, g)
        args = {"x-max-length": 1, "x-overflow": "reject-publish", "x-expires": 600000}
        if qtype == "quorum":
            args["x-queue-type"] = "quorum"
        ch.queue_declare(name, durable=True, arguments=args)
        # Every process publishes into gate g at the same moment.
        time.sleep(max(0.0, start / 1000 + g * 0.2 - time.time()))
        try:
            ch.basic_publish("", name, b"claim", pika.BasicProperties(delivery_mode=2), mandatory=True)
            acks.append(1)
        except pika.exceptions.NackError:
            acks.append(0)
    conn.close()
    out.put(acks)


def most_acks(port, qtype, gates):
    start = int(time.time() * 1000) + 2000
    out = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=publisher, args=(port, qtype, gates, start, out))
             for _ in range(PROCS)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join()
    return max(sum(r[g] for r in results) for g in range(gates))


def main():
    port, gates = int(sys.argv[1]), int(sys.argv[2])
    for qtype in ("classic", "quorum"):
        print(qtype, most_acks(port, qtype, gates))


if __name__ == "__main__":
    main()
