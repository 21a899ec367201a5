#!/usr/bin/python3
"""Independent KV-event publisher for kvselect's interop tests.

Shaped like vLLM's ZmqEventPublisher, on libzmq (Debian's python3-zmq) and msgpack-python:
a PUB socket sending [topic][seq 8 bytes big-endian][msgpack batch] with seq 0, 1, 2, ...
and a ROUTER replay socket answering [identity][""][start seq] with every buffered batch
seq >= start as [identity][""][topic][seq][payload] (vLLM >= 0.26 layout), then the end
marker [identity][""][""][ff x 8][""].

Prints "PUB <port>" and "REPLAY <port>", then "SENT <seq>" after each batch and "DONE"
after the last one. Exits when stdin is closed or after --max-seconds.
"""
import argparse
import collections
import sys
import threading
import time

import msgpack
import zmq

END_SEQ = b"\xff" * 8


def batch(seq):
    """A vLLM-shaped batch: [ts, [BlockStored as a tagged array], dp_rank]."""
    tokens = list(range(seq * 16 + 1, seq * 16 + 17))
    stored = ["BlockStored", [1000 + seq], None if seq == 0 else 999 + seq, tokens, 16, None, "GPU", None]
    return msgpack.packb([time.time(), [stored], 0], use_bin_type=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--interval-ms", type=int, default=20)
    ap.add_argument("--topic", default="kv-events")
    ap.add_argument("--max-seconds", type=float, default=60)
    args = ap.parse_args()

    stop = threading.Event()

    def watch_stdin():
        sys.stdin.read()
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()

    ctx = zmq.Context()
    pub = ctx.socket(zmq.PUB)
    pub.setsockopt(zmq.LINGER, 0)
    pub.setsockopt(zmq.SNDHWM, 100000)
    pub_port = pub.bind_to_random_port("tcp://127.0.0.1")
    router = ctx.socket(zmq.ROUTER)
    router.setsockopt(zmq.LINGER, 0)
    replay_port = router.bind_to_random_port("tcp://127.0.0.1")
    print("PUB %d" % pub_port, flush=True)
    print("REPLAY %d" % replay_port, flush=True)

    topic = args.topic.encode()
    buffer = collections.deque(maxlen=10000)
    poller = zmq.Poller()
    poller.register(router, zmq.POLLIN)
    interval = args.interval_ms / 1000.0
    deadline = time.monotonic() + args.max_seconds
    next_send = time.monotonic()
    seq = 0
    try:
        while not stop.is_set() and time.monotonic() < deadline:
            now = time.monotonic()
            if seq < args.count and now >= next_send:
                payload = batch(seq)
                pub.send_multipart([topic, seq.to_bytes(8, "big"), payload])
                buffer.append((seq, payload))
                print("SENT %d" % seq, flush=True)
                seq += 1
                next_send += interval
                if seq == args.count:
                    print("DONE", flush=True)
            wait_ms = max(1, int((next_send - time.monotonic()) * 1000)) if seq < args.count else 50
            if dict(poller.poll(wait_ms)).get(router):
                frames = router.recv_multipart()
                if len(frames) != 3 or frames[1] != b"" or len(frames[2]) != 8:
                    continue
                ident, start = frames[0], int.from_bytes(frames[2], "big")
                for s, p in buffer:
                    if s >= start:
                        router.send_multipart([ident, b"", topic, s.to_bytes(8, "big"), p])
                router.send_multipart([ident, b"", b"", END_SEQ, b""])
    finally:
        pub.close()
        router.close()
        ctx.term()


if __name__ == "__main__":
    main()
