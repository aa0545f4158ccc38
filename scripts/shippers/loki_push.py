"""Push logs to a Loki push endpoint, built with the push API's protobuf
definitions (scripts/shippers/loki_push.proto, compiled here with
grpcio-tools' protoc) and compressed with snappy's block format, as
Promtail sends them; or, with --json, the same entries in the JSON
encoding.

Usage: loki_push.py URL N [--json]

URL is the push endpoint (spate: http://HOST:PORT/insert/loki/api/v1/push).
N entries go in two streams, with structured metadata on some, a JSON
object as the line of every third (which VictoriaLogs and spate turn into
fields), fixed timestamps. Prints {"entries": N, "status": HTTP status}.
"""
import argparse
import importlib
import json
import os
import sys
import tempfile
import urllib.request

import cramjam
from grpc_tools import protoc

T0 = 1795600000  # 2026-11-25T09:46:40Z


def compile_proto():
    here = os.path.dirname(os.path.abspath(__file__))
    out = tempfile.mkdtemp(prefix="loki-proto-")
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main(["protoc", "-I" + here, "-I" + include, "--python_out=" + out, os.path.join(here, "loki_push.proto")])
    if rc != 0:
        sys.exit("protoc failed: %d" % rc)
    sys.path.insert(0, out)
    return importlib.import_module("loki_push_pb2")


def entries(n):
    streams = [('{job="shop", env="prod"}', {"job": "shop", "env": "prod"}),
               ('{job="worker", env="prod", pod="w-1"}', {"job": "worker", "env": "prod", "pod": "w-1"})]
    for i in range(n):
        labels, labelmap = streams[i % 2]
        if i % 3 == 0:
            line = json.dumps({"level": "error", "detail": "payment %d failed" % i, "order": {"id": i, "amount": i * 1.5}})
        else:
            line = "GET /api/items/%d 200 %dms" % (i, i % 50)
        meta = {"trace_id": "t%04d" % i} if i % 4 == 0 else {}
        yield labels, labelmap, T0 + i, 1000 * i, line, meta


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("n", type=int)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.json:
        by = {}
        for labels, labelmap, sec, ns, line, meta in entries(a.n):
            v = [str(sec * 10**9 + ns), line]
            if meta:
                v.append(meta)
            by.setdefault(labels, (labelmap, []))[1].append(v)
        body = json.dumps({"streams": [{"stream": lm, "values": vals} for lm, vals in by.values()]}).encode()
        ct = "application/json"
    else:
        pb = compile_proto()
        req = pb.PushRequest()
        by = {}
        for labels, _, sec, ns, line, meta in entries(a.n):
            s = by.get(labels)
            if s is None:
                s = by[labels] = req.streams.add(labels=labels)
            e = s.entries.add(line=line)
            e.timestamp.seconds, e.timestamp.nanos = sec, ns
            for k, v in meta.items():
                e.structuredMetadata.add(name=k, value=v)
        body = bytes(cramjam.snappy.compress_raw(req.SerializeToString()))
        ct = "application/x-protobuf"
    r = urllib.request.Request(a.url, data=body, method="POST", headers={"Content-Type": ct})
    with urllib.request.urlopen(r, timeout=30) as resp:
        print(json.dumps({"entries": a.n, "status": resp.status}))


if __name__ == "__main__":
    main()
