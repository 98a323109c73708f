#!/usr/bin/env python3
"""proxy.py: a loopback TCP proxy that loses replies, for the fault suite.

    proxy.py LISTEN_PORT TARGET_PORT MODE PROBABILITY SEED COUNT_FILE

Every connection to 127.0.0.1:LISTEN_PORT is relayed to 127.0.0.1:TARGET_PORT.
MODE says what goes wrong, for each chunk with the given probability:

  request  a chunk from the client is passed to the server in full, then both
           sides are closed before any reply comes back: the server did the
           work, the client never hears of it (a lost reply);
  reply    a chunk from the server is cut in the middle: half of it reaches
           the client, then both sides are closed (a reply lost half way);
  pass     nothing goes wrong.

The number of cuts made is written to COUNT_FILE after each cut, so the suite
can say how many faults it injected.  Stopped by SIGTERM.
"""
import asyncio
import random
import signal
import sys


class Proxy:
    def __init__(self, target, mode, p, seed, count_file):
        self.target = target
        self.mode = mode
        self.p = p
        self.rng = random.Random(seed)
        self.count_file = count_file
        self.cuts = 0

    def cut(self):
        self.cuts += 1
        with open(self.count_file, "w") as f:
            f.write("%d\n" % self.cuts)

    async def relay(self, reader, writer, other, from_client, done):
        try:
            while not done.is_set():
                data = await reader.read(65536)
                if not data:
                    break
                hit = self.rng.random() < self.p
                if from_client and self.mode == "request" and hit:
                    # The request reaches the server whole; its answer is lost.
                    writer.write(data)
                    await writer.drain()
                    await asyncio.sleep(0.01)
                    self.cut()
                    break
                if not from_client and self.mode == "reply" and hit and len(data) > 1:
                    writer.write(data[: len(data) // 2])
                    await writer.drain()
                    self.cut()
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            done.set()
            for w in (writer, other):
                try:
                    w.transport.abort()
                except Exception:
                    pass

    async def handle(self, creader, cwriter):
        try:
            sreader, swriter = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            cwriter.transport.abort()
            return
        done = asyncio.Event()
        await asyncio.gather(
            self.relay(creader, swriter, cwriter, True, done),
            self.relay(sreader, cwriter, swriter, False, done),
        )


async def main():
    listen, target, mode, p, seed, count_file = sys.argv[1:7]
    if mode not in ("request", "reply", "pass"):
        sys.exit("proxy.py: MODE is request, reply or pass, not %r" % mode)
    proxy = Proxy(int(target), mode, float(p), int(seed), count_file)
    with open(count_file, "w") as f:
        f.write("0\n")
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", int(listen))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    async with server:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
