#!/usr/bin/python3
"""Independent replica-sync peer for kvselect's interop test, on libzmq and msgpack-python.

Shaped like a Dynamo selector: a PUB bound on 127.0.0.1 (random port) sends two-frame messages
[topic, msgpack map with named fields], and a SUB connected to kvselect's PUB (--connect)
receives kvselect's. Prints "PUB <port>" once bound. Reads one command per stdin line, builds the
Dynamo-shaped payload itself, sends it and prints "SENT <n>":

  add REQUEST_ID WORKER_ID DP_RANK ROUTER_ID BLOCK_SIZE PREFILL_TOKENS [MODEL [GROUP]]
  free REQUEST_ID WORKER_ID DP_RANK ROUTER_ID BLOCK_SIZE
  done REQUEST_ID WORKER_ID DP_RANK ROUTER_ID BLOCK_SIZE   (MarkPrefillCompleted)
  legacy REQUEST_ID WORKER_ID ROUTER_ID                    (tenant_id instead of routing_group)
  garbage                                                  (a payload that is not msgpack)
  frames3                                                  (three frames instead of two)
  bind SESSION_ID WORKER_ID DP_RANK SEQUENCE WRITER_ID     (session-affinity topic)

Every message received from kvselect is printed as "RECV <topic> <json>" with the map's keys in
wire order. Exits when stdin is closed or after --max-seconds.
"""
import argparse
import json
import sys
import threading
import time

import msgpack
import zmq

SEQ_TOPIC = b"dynamo.slot-tracker.v1"
AFF_TOPIC = b"dynamo.session-affinity.v1"


def envelope(request_id, worker_id, dp_rank, router_id, block_size, data, model="default", group="default"):
    return {
        "model_name": model,
        "routing_group": group,
        "block_size": block_size,
        "event": {
            "request_id": request_id,
            "worker": {"worker_id": worker_id, "dp_rank": dp_rank},
            "data": data,
            "router_id": router_id,
            "lora_name": None,
        },
    }


def build(words):
    kind = words[0]
    if kind == "add":
        rid, wid, dp, router, bs, prefill = words[1], int(words[2]), int(words[3]), int(words[4]), int(words[5]), int(words[6])
        model = words[7] if len(words) > 7 else "default"
        group = words[8] if len(words) > 8 else "default"
        data = {"AddRequest": {
            "token_sequence": [18446744073709551615, 4945711292740353085],
            "track_prefill_tokens": True,
            "expected_output_tokens": None,
            "prefill_load_hint": {"initial_effective_prefill_tokens": prefill, "expected_prefill_duration": None},
        }}
        return [SEQ_TOPIC, msgpack.packb(envelope(rid, wid, dp, router, bs, data, model, group), use_bin_type=True)]
    if kind in ("free", "done"):
        rid, wid, dp, router, bs = words[1], int(words[2]), int(words[3]), int(words[4]), int(words[5])
        data = "Free" if kind == "free" else "MarkPrefillCompleted"
        return [SEQ_TOPIC, msgpack.packb(envelope(rid, wid, dp, router, bs, data), use_bin_type=True)]
    if kind == "legacy":
        payload = {
            "model_name": "default",
            "tenant_id": "default",
            "block_size": 4,
            "event": {"request_id": words[1], "worker": {"worker_id": int(words[2]), "dp_rank": 0},
                      "data": "Free", "router_id": int(words[3]), "lora_name": None},
        }
        return [SEQ_TOPIC, msgpack.packb(payload, use_bin_type=True)]
    if kind == "garbage":
        return [SEQ_TOPIC, b"\xc1\xc1\xc1 not msgpack"]
    if kind == "frames3":
        return [SEQ_TOPIC, msgpack.packb({"a": 1}), b"extra"]
    if kind == "bind":
        payload = {
            "model_name": "default",
            "routing_group": "default",
            "session_id": words[1],
            "worker_id": int(words[2]),
            "dp_rank": int(words[3]),
            "sequence": int(words[4]),
            "writer_id": int(words[5]),
        }
        return [AFF_TOPIC, msgpack.packb(payload, use_bin_type=True)]
    raise ValueError("unknown command " + kind)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--connect", required=True)
    ap.add_argument("--max-seconds", type=float, default=120)
    args = ap.parse_args()

    ctx = zmq.Context()
    pub = ctx.socket(zmq.PUB)
    pub.setsockopt(zmq.LINGER, 0)
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, SEQ_TOPIC)
    sub.setsockopt(zmq.SUBSCRIBE, AFF_TOPIC)
    sub.connect(args.connect)
    out_lock = threading.Lock()

    def say(line):
        with out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    say("PUB %d" % port)
    stop = threading.Event()

    def commands():
        sent = 0
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            frames = build(words)
            pub.send_multipart(frames)
            sent += 1
            say("SENT %d" % sent)
        stop.set()

    threading.Thread(target=commands, daemon=True).start()
    deadline = time.time() + args.max_seconds
    poller = zmq.Poller()
    poller.register(sub, zmq.POLLIN)
    while not stop.is_set() and time.time() < deadline:
        if dict(poller.poll(100)).get(sub):
            frames = sub.recv_multipart()
            body = msgpack.unpackb(frames[1], raw=False) if len(frames) == 2 else None
            say("RECV %s %s" % (frames[0].decode(), json.dumps(body)))
    pub.close()
    sub.close()
    ctx.term()


if __name__ == "__main__":
    main()
