#!/usr/bin/env python3
"""How a gateway calls kvselect, with the Python standard library only.

For each request: ask kvselect which worker should serve the prompt (and book it there), send the
request to that worker yourself, report the first token (prefill done) and the end (free).

    python3 examples/python/select_client.py --node http://127.0.0.1:8092 --tokens 1,2,3,4,5,6,7,8

prints one JSON line per step; exits 1 with one line naming the URL when kvselect does not answer.
"""
import argparse
import json
import sys
import urllib.error
import urllib.request
import uuid


class KvselectError(Exception):
    """kvselect answered with an error status, or could not be reached."""


class Kvselect:
    def __init__(self, base_url, timeout=5.0):
        self.base = base_url.rstrip("/")
        self.timeout = timeout

    def _call(self, method, path, body=None):
        url = self.base + path
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            req.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                return json.loads(res.read() or b"null")
        except urllib.error.HTTPError as e:
            # every kvselect failure is {"error": "..."} with a 4xx/5xx status
            try:
                message = json.loads(e.read()).get("error", "")
            except ValueError:
                message = e.reason
            raise KvselectError(f"{method} {url}: {e.code} {message}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise KvselectError(f"{method} {url}: {reason}") from None

    def select_and_reserve(self, token_ids, model_name=None, session_id=None, selection_id=None):
        """Chooses a worker for the prompt and books it; returns kvselect's answer."""
        body = {"selection_id": selection_id or str(uuid.uuid4()), "token_ids": token_ids}
        if model_name:
            body["model_name"] = model_name
        if session_id:
            body["session_id"] = session_id
        return self._call("POST", "/select_and_reserve", body)

    def prefill_complete(self, selection_id):
        """The first token came back: the worker's prefill load is released."""
        return self._call("POST", f"/reservations/{selection_id}/prefill_complete")

    def free(self, selection_id):
        """The request ended (or failed): the booking is released."""
        return self._call("DELETE", f"/reservations/{selection_id}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--node", default="http://127.0.0.1:8092", help="kvselect base URL")
    ap.add_argument("--tokens", required=True, help="prompt token ids, comma separated")
    ap.add_argument("--model-name", default=None)
    ap.add_argument("--session-id", default=None)
    args = ap.parse_args(argv)
    tokens = [int(t) for t in args.tokens.split(",") if t.strip()]
    kv = Kvselect(args.node)
    try:
        choice = kv.select_and_reserve(tokens, args.model_name, args.session_id)
        sid = choice["selection_id"]
        print(json.dumps({"step": "selected", "selection_id": sid, "worker_id": choice["worker_id"],
                          "dp_rank": choice["dp_rank"], "endpoint": choice["endpoint"],
                          "overlap_tokens": choice["overlap"]["longest_matched"],
                          "effective_prefill_tokens": choice["effective_prefill_tokens"]}), flush=True)
        try:
            # here the gateway sends the request to choice["endpoint"] (the engine's HTTP API)
            kv.prefill_complete(sid)
            print(json.dumps({"step": "prefill_complete", "selection_id": sid}), flush=True)
        finally:
            kv.free(sid)
            print(json.dumps({"step": "freed", "selection_id": sid}), flush=True)
    except KvselectError as e:
        print(f"select_client: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
