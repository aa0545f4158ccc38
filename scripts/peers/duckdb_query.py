#!/usr/bin/env python3
"""duckdb_query.py FILE SQL: run SQL over the NDJSON file FILE with DuckDB and
print the result rows, one a line, fields separated by tabs, nothing else.

SQL reads the view `logs`, which is

    read_ndjson(FILE, columns={...the schema below...})

Why an explicit schema, and not read_ndjson's auto-detection:

* Auto-detection samples the first 20,480 records (sample_size). A field that
  is absent or null in all of them is then typed wrongly or dropped. `spate
  gen` leaves a field out of about 1% of the lines and adds a rare extra one
  (retry, region, tags); on another file the first lines may well lack a
  field that later lines have. sample_size=-1 fixes that by reading the whole
  file once more before the query: on a 256 MiB file that costs ~4 s against
  ~0.3 s for the query itself, so it would measure the detection, not the
  query.
* With `columns` given, DuckDB skips detection, keys not listed are ignored,
  a key missing from a line is NULL, and only the columns the query uses are
  materialised (projection pushdown through the view), so listing the whole
  schema costs nothing.
* `ts` is VARCHAR: auto-detection would parse it as a TIMESTAMP, work none of
  the queries needs.
* ignore_errors stays false (the default): a malformed line or a value of
  the wrong type stops the query with an error instead of silently dropping
  the line, which would make the counts disagree without anyone noticing.

The macro logsql_quantile(phi, x) is LogsQL's quantile as VictoriaLogs and
spate define it: of all the group's values sorted, the one at index
floor(phi * n), where a missing value counts (n is the number of rows) and
sorts lowest, as an empty string; a missing result is NULL (printed empty).
DuckDB's own quantile_disc(x, phi) skips NULLs and takes the index
ceil(phi * n) - 1, so it picks another value now and then.

Set DUCKDB_AUTODETECT=1 to use plain read_ndjson(FILE) (default sampling)
instead, for a comparison.

Threads: DuckDB's default, one per core.
"""
import os
import sys

import duckdb

SCHEMA = {
    "ts": "VARCHAR",
    "level": "VARCHAR",
    "service": "VARCHAR",
    "host": "VARCHAR",
    "method": "VARCHAR",
    "path": "VARCHAR",
    "status": "BIGINT",
    "latency_ms": "DOUBLE",
    "bytes": "BIGINT",
    "trace_id": "VARCHAR",
    "user_id": "VARCHAR",
    "msg": "VARCHAR",
    "http": "STRUCT(proto VARCHAR, ua VARCHAR, remote_ip VARCHAR)",
    "retry": "BIGINT",
    "region": "VARCHAR",
    "tags": "VARCHAR[]",
}


def sql_string(s):
    return "'" + s.replace("'", "''") + "'"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: duckdb_query.py FILE SQL")
    path, sql = sys.argv[1], sys.argv[2]
    con = duckdb.connect()
    if os.environ.get("DUCKDB_AUTODETECT") == "1":
        src = "read_ndjson(%s)" % sql_string(path)
    else:
        cols = ", ".join("%s: %s" % (sql_string(k), sql_string(v)) for k, v in SCHEMA.items())
        src = "read_ndjson(%s, columns={%s}, ignore_errors=false)" % (sql_string(path), cols)
    con.execute("CREATE TEMP VIEW logs AS SELECT * FROM " + src)
    con.execute(
        "CREATE TEMP MACRO logsql_quantile(phi, x) AS"
        " CASE WHEN floor(phi * count(*)) < count(*) - count(x) THEN NULL"
        " ELSE list_sort(list(x) FILTER (WHERE x IS NOT NULL))"
        "[(floor(phi * count(*)) - (count(*) - count(x)))::BIGINT + 1] END"
    )
    out = sys.stdout
    for row in con.execute(sql).fetchall():
        out.write("\t".join("" if v is None else repr(v) if isinstance(v, float) else str(v) for v in row))
        out.write("\n")


if __name__ == "__main__":
    main()
