#!/usr/bin/env python3
"""normalize.py KIND RAW CANON: turn one tool's output into a canonical form,
so that the outputs of different tools can be compared, and print a one-line
summary of it.

RAW is what the tool printed: tab-separated rows (duckdb_query.py, jq @tsv,
wc, rg), or NDJSON objects (spate query --format ndjson), whose values are
taken in key order. CANON receives the canonical form: one row a line, fields
tab-separated, every number written the same way (an integral value as an
integer, anything else rounded to 3 decimals), rows sorted for KIND=group.

KIND: scalar (one number; no output counts as 0, as with rg -c on no match),
group (rows in any order: sorted), ordered (rows in the order given),
none (output ignored: the cat read floor).

The summary line is: MD5 of CANON (first 8 hex digits), a tab, a short text.
"""
import hashlib
import json
import sys


def num(s):
    try:
        v = float(s)
    except ValueError:
        return s
    if v != v or v in (float("inf"), float("-inf")):
        return s
    r = round(v, 3)
    if r.is_integer() and abs(r) < 2**53:
        return str(int(r))
    return "%.3f" % r


def rows_of(text):
    rows = []
    for line in text.splitlines():
        line = line.strip("\r")
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            obj = json.loads(line)
            fields = ["" if v is None else str(v) for v in obj.values()]
        else:
            fields = line.split("\t")
            if len(fields) == 1:
                # wc -l prints "N" or "N FILE"; uniq -c prints "  N key"
                fields = line.split()
        rows.append([num(f.strip()) for f in fields])
    return rows


def main():
    kind, raw, canon = sys.argv[1:4]
    with open(raw, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if kind == "none":
        open(canon, "w").close()
        print("-\t–")
        return
    rows = rows_of(text)
    if kind == "scalar":
        if not rows:
            rows = [["0"]]
        rows = [[rows[0][0]]] if len(rows) == 1 else rows
    elif kind == "group":
        rows.sort()
    out = "".join("\t".join(r) + "\n" for r in rows)
    with open(canon, "w") as f:
        f.write(out)
    h = hashlib.md5(out.encode()).hexdigest()[:8]

    if kind == "scalar":
        summary = " ".join(r[0] for r in rows) if len(rows) <= 3 else "%d rows?" % len(rows)
    elif kind == "group":
        def count(r):
            try:
                return int(r[1])
            except (IndexError, ValueError):
                return 0
        total = sum(count(r) for r in rows)
        summary = "%d groups, Σcount %d" % (len(rows), total)
        if rows and len(rows[0]) > 2:
            big = max(rows, key=count)
            summary += "; " + big[0] + ": " + " / ".join(big[1:])
    else:
        summary = "%d rows" % len(rows)
        if rows:
            summary += "; 1st " + " ".join(rows[0])
        if len(rows) > 1:
            summary += "; last " + " ".join(rows[-1])
    print(h + "\t" + summary)


if __name__ == "__main__":
    main()
