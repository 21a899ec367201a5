"""A scriptable fake LLM engine that publishes KV-cache events over libzmq, as vLLM and SGLang do.

Only Debian's python3-zmq (libzmq) and python3-msgpack are used; run it with /usr/bin/python3.
The wire layouts follow the KV-event wire notes, kv_events_wire.md (sections 1.3-1.6, 3, 4):

* a PUB socket sends 3-frame messages [topic][seq: 8 bytes big-endian][msgpack payload];
  the payload is [ts, events, dp_rank]; seq starts at 0 and grows by 1 per batch;
* a ROUTER socket answers replay requests [identity][""][start seq] with every buffered batch
  whose seq >= start, then an end marker (seq ff x 8, empty payload), in one of two layouts:
  "topic" (vLLM >= 0.26): ["", topic, seq, payload], end ["", "", ff x 8, ""];
  "legacy" (older vLLM, SGLang): ["", seq, payload], end ["", ff x 8, ""].

Both sockets bind to 127.0.0.1 on ephemeral ports. The first stdout line is a JSON object with
the endpoints; then every stdin line is one JSON command, answered by one JSON line on stdout:
{"ok": true, "seq": N} for a published batch (N = -1 when nothing was published) or
{"ok": false, "error": "..."}.

Commands (engine hashes are opaque unsigned 64-bit ids, given as JSON ints or decimal strings):
  {"op": "store", "parent": null | h, "hashes": [h, ...], "tokens": [...], "block_size": 4}
  {"op": "remove", "hashes": [h, ...]}
  {"op": "clear"}
  {"op": "batch", "events": [store/remove/clear commands]}   one batch of several events
  {"op": "restart"}      seq back to 0, replay buffer emptied (a new engine process)
  {"op": "drop_next"}    the next batch is buffered for replay but not published (forward gap)
  {"op": "set", ...}     change the defaults below for later commands
  {"op": "encode", "of": command}   the payload of that command as hex, nothing published
  {"op": "quit"}
Options, at start (--format etc.) or with "set"; the first three also per command (overriding
the defaults for that command only), "ts" per command only:
  "format": vllm_map | vllm_array | sglang_array | sglang_map
  "hash_repr": int | negative_int | bin32
  "topic": the topic string    "rank": the dp rank    "ts": float (default: now)
  "replay_layout": topic | legacy   (how the replies to later replay requests are framed)
The process exits on quit, at stdin EOF, or after --max-seconds (default 120), whichever first.
"""

import argparse
import hashlib
import json
import os
import sys
import time

import msgpack
import zmq

END_SEQ = b"\xff" * 8
FORMATS = ("vllm_map", "vllm_array", "sglang_array", "sglang_map")
HASH_REPRS = ("int", "negative_int", "bin32")
LAYOUTS = ("topic", "legacy")
U64 = 1 << 64


def engine_hash(value, repr_):
    """One opaque id (0 <= h < 2**64) as the engine would put it on the wire."""
    h = int(value)
    if not 0 <= h < U64:
        raise ValueError("hash out of the u64 range: %r" % (value,))
    if repr_ == "int":
        return h  # msgpack-python: shortest uint, uint64 (0xcf) above 2**63
    if repr_ == "negative_int":
        return h - U64 if h >= 1 << 63 else h  # int64 (0xd3) when the top bit is set
    # vLLM with VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=0: the 32-byte digest, whose last 8 bytes
    # big-endian are the int vLLM would otherwise send
    return hashlib.sha256(str(h).encode()).digest()[:24] + h.to_bytes(8, "big")


def stored(cmd, fmt, repr_):
    hashes = [engine_hash(h, repr_) for h in cmd["hashes"]]
    parent = None if cmd.get("parent") is None else engine_hash(cmd["parent"], repr_)
    tokens = [int(t) for t in cmd["tokens"]]
    size = int(cmd["block_size"])
    if fmt == "vllm_map":  # vLLM 0.26: map, extra_keys one nil per block, group 0, full attention
        return {"type": "BlockStored", "block_hashes": hashes, "parent_block_hash": parent,
                "token_ids": tokens, "block_size": size, "lora_id": None, "medium": "GPU",
                "lora_name": None, "extra_keys": [None] * len(hashes), "group_idx": 0,
                "kv_cache_spec_kind": "full_attention"}
    if fmt == "vllm_array":  # vLLM ~0.11 .. 0.23: 8 positions, up to lora_name
        return ["BlockStored", hashes, parent, tokens, size, None, "GPU", None]
    if fmt == "sglang_array":  # SGLang mid-2026: always 7 positions
        return ["BlockStored", hashes, parent, tokens, size, None, "GPU"]
    return {"type": "BlockStored", "block_hashes": hashes, "parent_block_hash": parent,
            "token_ids": tokens, "block_size": size, "lora_id": None, "medium": "GPU"}


def removed(cmd, fmt, repr_):
    hashes = [engine_hash(h, repr_) for h in cmd["hashes"]]
    if fmt == "vllm_map":
        return {"type": "BlockRemoved", "block_hashes": hashes, "medium": "GPU", "group_idx": 0}
    if fmt == "sglang_map":
        return {"type": "BlockRemoved", "block_hashes": hashes, "medium": "GPU"}
    return ["BlockRemoved", hashes, "GPU"]


def cleared(fmt):
    return {"type": "AllBlocksCleared"} if fmt.endswith("_map") else ["AllBlocksCleared"]


class Engine:
    def __init__(self, opts):
        self.defaults = {"format": opts.format, "hash_repr": opts.hash_repr,
                         "replay_layout": opts.replay_layout, "topic": opts.topic, "rank": 0}
        self.ctx = zmq.Context()
        self.pub = self.ctx.socket(zmq.PUB)
        self.pub.setsockopt(zmq.LINGER, 0)
        self.router = self.ctx.socket(zmq.ROUTER)
        self.router.setsockopt(zmq.LINGER, 0)
        pub_port = self.pub.bind_to_random_port("tcp://127.0.0.1")
        replay_port = self.router.bind_to_random_port("tcp://127.0.0.1")
        self.endpoints = {"pub": "tcp://127.0.0.1:%d" % pub_port,
                          "replay": "tcp://127.0.0.1:%d" % replay_port}
        self.seq = 0
        self.ring = []  # (seq, topic, payload), oldest first
        self.ring_size = opts.buffer_steps
        self.drop_next = False
        self.replays = 0

    def option(self, cmd, key, allowed=None):
        value = cmd.get(key, self.defaults[key])
        if allowed is not None and value not in allowed:
            raise ValueError("%s must be one of %s, got %r" % (key, allowed, value))
        return value

    def events(self, cmd):
        fmt = self.option(cmd, "format", FORMATS)
        repr_ = self.option(cmd, "hash_repr", HASH_REPRS)
        op = cmd["op"]
        if op == "store":
            return [stored(cmd, fmt, repr_)]
        if op == "remove":
            return [removed(cmd, fmt, repr_)]
        if op == "clear":
            return [cleared(fmt)]
        if op == "batch":
            out = []
            for sub in cmd["events"]:
                merged = {k: cmd[k] for k in ("format", "hash_repr") if k in cmd}
                merged.update(sub)
                out.extend(self.events(merged))
            return out
        raise ValueError("not an event command: %r" % (op,))

    def payload(self, cmd):
        ts = float(cmd.get("ts", time.time()))
        return msgpack.packb([ts, self.events(cmd), int(self.option(cmd, "rank"))],
                             use_bin_type=True)

    def publish(self, cmd):
        topic = self.option(cmd, "topic").encode()
        payload = self.payload(cmd)
        seq = self.seq
        self.seq += 1
        self.ring.append((seq, topic, payload))
        del self.ring[:-self.ring_size]
        if self.drop_next:
            self.drop_next = False
        else:
            self.pub.send_multipart([topic, seq.to_bytes(8, "big"), payload])
        return seq

    def serve_replay(self):
        while True:
            try:
                frames = self.router.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            if len(frames) != 3 or frames[1] != b"" or len(frames[2]) != 8:
                continue  # like vLLM: anything else is ignored, no reply
            ident, start = frames[0], int.from_bytes(frames[2], "big")
            legacy = self.defaults["replay_layout"] == "legacy"
            self.replays += 1
            for seq, topic, payload in self.ring:
                if seq >= start:
                    head = [ident, b""] if legacy else [ident, b"", topic]
                    self.router.send_multipart(head + [seq.to_bytes(8, "big"), payload])
            end = [ident, b""] if legacy else [ident, b"", b""]
            self.router.send_multipart(end + [END_SEQ, b""])

    def handle(self, cmd):
        op = cmd.get("op")
        if op in ("store", "remove", "clear", "batch"):
            return {"ok": True, "seq": self.publish(cmd)}
        if op == "encode":
            return {"ok": True, "hex": self.payload(cmd["of"]).hex()}
        if op == "restart":
            self.seq, self.ring, self.drop_next = 0, [], False
        elif op == "drop_next":
            self.drop_next = True
        elif op == "set":
            for key in ("format", "hash_repr", "replay_layout", "topic", "rank"):
                if key in cmd:
                    self.defaults[key] = cmd[key]
            self.option({}, "format", FORMATS)
            self.option({}, "hash_repr", HASH_REPRS)
            self.option({}, "replay_layout", LAYOUTS)
        elif op == "stats":
            return {"ok": True, "seq": -1, "next_seq": self.seq, "replays": self.replays}
        elif op != "quit":
            raise ValueError("unknown op %r" % (op,))
        return {"ok": True, "seq": -1}

    def close(self):
        self.pub.close(0)
        self.router.close(0)
        self.ctx.term()


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--format", default="vllm_map", choices=FORMATS)
    p.add_argument("--hash-repr", default="int", choices=HASH_REPRS)
    p.add_argument("--replay-layout", default="topic", choices=LAYOUTS)
    p.add_argument("--topic", default="kv-events")
    p.add_argument("--buffer-steps", type=int, default=10000)
    p.add_argument("--max-seconds", type=float, default=120.0)
    opts = p.parse_args()
    deadline = time.monotonic() + opts.max_seconds
    engine = Engine(opts)
    reply(dict(engine.endpoints, pid=os.getpid(), libzmq=zmq.zmq_version(),
               msgpack=".".join(map(str, msgpack.version))))
    stdin = sys.stdin.fileno()
    poller = zmq.Poller()
    poller.register(engine.router, zmq.POLLIN)
    poller.register(stdin, zmq.POLLIN)
    pending = b""
    running = True
    try:
        while running and time.monotonic() < deadline:
            ready = dict(poller.poll(100))
            if engine.router in ready:
                engine.serve_replay()
            if stdin not in ready:
                continue
            chunk = os.read(stdin, 65536)
            if not chunk:
                break  # stdin EOF: the test is gone
            pending += chunk
            while running and b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                if not line.strip():
                    continue
                try:
                    cmd = json.loads(line)
                    reply(engine.handle(cmd))
                    running = cmd.get("op") != "quit"
                except Exception as e:  # a bad command is answered, never fatal
                    reply({"ok": False, "error": "%s: %s" % (type(e).__name__, e)})
    finally:
        engine.close()


if __name__ == "__main__":
    main()
