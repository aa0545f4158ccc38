"""Send logs with the official Elasticsearch Python client's helpers.bulk.

Usage: es_bulk.py URL N [--bad] [--header NAME=VALUE ...]

URL is the Elasticsearch base URL (spate: http://HOST:PORT/insert/elasticsearch).
N documents are sent as "create" actions; with --bad, two bad items are
mixed in: a document whose @timestamp is not a time, and a delete action.
Prints one JSON object: {"ok": stored items, "errors": [per-item errors]}.
"""
import argparse
import json

from elasticsearch import Elasticsearch, helpers


def docs(n, bad):
    for i in range(n):
        yield {
            "_op_type": "create",
            "_index": "app-logs",
            "_source": {
                "@timestamp": "2026-11-26T10:%02d:%02d.%03dZ" % (i // 60 % 60, i % 60, i % 1000),
                "message": "request %d served in %d ms" % (i, i % 97),
                "service": {"name": ["api", "web", "auth"][i % 3]},
                "http": {"status": [200, 404, 500][i % 3], "method": "GET"},
                "level": ["info", "warn", "error"][i % 3],
            },
        }
        if bad and i == n // 2:
            yield {"_op_type": "create", "_index": "app-logs",
                   "_source": {"@timestamp": "not a time", "message": "bad time"}}
            yield {"_op_type": "delete", "_index": "app-logs", "_id": "x"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("n", type=int)
    ap.add_argument("--bad", action="store_true")
    ap.add_argument("--header", action="append", default=[])
    a = ap.parse_args()
    headers = dict(h.split("=", 1) for h in a.header)
    es = Elasticsearch(a.url, headers=headers, request_timeout=60)
    ok, errors = helpers.bulk(es, docs(a.n, a.bad), raise_on_error=False, chunk_size=500)
    print(json.dumps({"ok": ok, "errors": errors}))


if __name__ == "__main__":
    main()
