#!/usr/bin/env python3
"""An extender that records what kube-scheduler sends (tests/e2e/capture_wire.sh).

POST /filter and /prioritize: the first body of each verb is written byte for byte to
OUT/<verb>-request.json and its headers to OUT/<verb>-headers.txt; filter passes every candidate,
prioritize scores each 0. GET /healthz answers ok. Binds 127.0.0.1:PORT only.
Usage: capture_extender.py PORT OUT
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OUT = sys.argv[2]


def names(args):
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"])
    return [n["metadata"]["name"] for n in ((args.get("Nodes") or {}).get("items") or [])]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply({"status": "ok"})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        verb = self.path.strip("/").split("/")[-1]
        if verb not in ("filter", "prioritize"):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path = os.path.join(OUT, verb + "-request.json")
        if not os.path.exists(path):
            with open(path + ".tmp", "wb") as f:
                f.write(raw)
            with open(os.path.join(OUT, verb + "-headers.txt"), "w") as f:
                for k in sorted(self.headers.keys()):
                    if k.lower() not in ("content-length", "host"):
                        f.write("%s: %s\n" % (k, self.headers[k]))
            os.rename(path + ".tmp", path)
        args = json.loads(raw)
        nodes = names(args)
        if verb == "filter":
            self.reply({"Nodes": args.get("Nodes"), "NodeNames": args.get("NodeNames"),
                        "FailedNodes": {}, "FailedAndUnresolvableNodes": {}, "Error": ""})
        else:
            self.reply([{"Host": n, "Score": 0} for n in nodes])


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
