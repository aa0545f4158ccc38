#!/usr/bin/env bash
# A query fanned out over 2 storage nodes holding half the logs each, against one node holding all
# of them, on this machine (every server shares its CPUs).
#
# Generates SIZE of logs, feeds all of it to one spate serve --data and alternate lines to two
# others, starts spate serve --select-peers over the two, and times each query REPEAT times on
# the single node and on the fan-out, alternating, printing the medians and their ratio. The
# answers must be equal.
#
# NODE_CPUS=N runs the two nodes with GOMAXPROCS=N (their share of the machine); the single node
# and the front keep every CPU.
#
#   bash scripts/cluster/fanout.sh            SIZE=512MiB REPEAT=5 NODE_CPUS=
set -euo pipefail
cd "$(dirname "$0")/../.."
SIZE=${SIZE:-512MiB}
REPEAT=${REPEAT:-5}
NODE_CPUS=${NODE_CPUS:-}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/spate" ./cmd/spate
"$work/spate" gen --size "$SIZE" --seed 3 >"$work/all.ndjson"
awk 'NR % 2 == 1' "$work/all.ndjson" >"$work/a.ndjson"
awk 'NR % 2 == 0' "$work/all.ndjson" >"$work/b.ndjson"

waitfor() {
	for _ in $(seq 200); do
		u=$(grep -o "spate serve: listening on http://[0-9.:]*" "$1" | head -1 | sed 's/.*on //') && [[ -n $u ]] && { echo "$u"; return; }
		sleep 0.05
	done
	cat "$1" >&2; exit 1
}
serve() { # serve NAME ARGS...: starts spate serve (in this shell, not a subshell)
	local name=$1; shift
	local env=()
	if [[ -n $NODE_CPUS && ($name == na || $name == nb) ]]; then env=(GOMAXPROCS="$NODE_CPUS"); fi
	env "${env[@]}" "$work/spate" serve --listen 127.0.0.1:0 --log-level warn "$@" 2>"$work/$name.log" &
}
serve one --data "$work/one" --compress-delay 0
serve na --data "$work/na" --compress-delay 0
serve nb --data "$work/nb" --compress-delay 0
one=$(waitfor "$work/one.log") na=$(waitfor "$work/na.log") nb=$(waitfor "$work/nb.log")
for p in "one all" "na a" "nb b"; do
	set -- $p
	u=${!1}
	curl -sf -T "$work/$2.ndjson" "$u/api/v1/ingest?_stream_fields=service" >/dev/null
done
# Restart the nodes, which seals every segment, and wait until all are compressed and indexed:
# the single node and the two halves then have the same layout (sealed, with sidecars).
kill $(jobs -p)
wait || true
for n in one na nb; do
	rm "$work/$n.log"
	serve "$n" --data "$work/$n" --compress-delay 0
done
one=$(waitfor "$work/one.log") na=$(waitfor "$work/na.log") nb=$(waitfor "$work/nb.log")
for u in "$one" "$na" "$nb"; do
	until [[ $(curl -s "$u/metrics" | awk '$1=="spate_compress_pending" {print $2}') == 0 ]]; do sleep 0.2; done
done
serve fan --select-peers "$na,$nb"
fan=$(waitfor "$work/fan.log")
queries=(
	'* | stats by (service) count()'
	'status:>=500 | stats by (service) count(), avg(latency_ms), quantile(0.95, latency_ms)'
	'level:=error | stats count()'
	'* | stats by (path) sum(bytes) b | sort by (b) desc | limit 10'
	'* | stats count_uniq(user_id)'
	'level:error | fields _time, trace_id, service | sort by (_time, trace_id, service) desc | limit 10'
	'level:error | fields _time, trace_id, service'
	'trace_id:=4bf92f3577b34da6a3ce929d0e0e4736 | fields _time, service'
)
ask() { curl -sf "$1/select/logsql/query" --data-urlencode "query=$2" | sort; }
# same A B: whether two answers (files of sorted NDJSON rows) are equal, numbers within a relative 1e-9:
# sums added in another order differ in their last digits (640.4891875 and 640.48918750000001).
same() {
	python3 - "$1" "$2" <<'PY'
import json, math, sys
a, b = ([json.loads(l) for l in open(p) if l.strip()] for p in sys.argv[1:3])
def eq(x, y):
    if x == y:
        return True
    try:
        return math.isclose(float(x), float(y), rel_tol=1e-9)
    except ValueError:
        return x == y
sys.exit(0 if len(a) == len(b) and all(r.keys() == t.keys() and all(eq(r[k], t[k]) for k in r) for r, t in zip(a, b)) else 1)
PY
}
printf '%-90s %9s %9s %6s\n' query single fan-out ratio
for q in "${queries[@]}"; do
	ask "$one" "$q" >"$work/a1" && ask "$fan" "$q" >"$work/a2"
	if ! same "$work/a1" "$work/a2"; then
		echo "answers differ for: $q" >&2
		diff "$work/a1" "$work/a2" | head -5 >&2
		[[ -n ${DEBUG:-} ]] && { cat "$work/a1"; echo ---; cat "$work/a2"; } >&2
	fi
	s=() f=()
	for _ in $(seq "$REPEAT"); do
		s+=("$(curl -s -o /dev/null -w '%{time_total}' "$one/select/logsql/query" --data-urlencode "query=$q")")
		f+=("$(curl -s -o /dev/null -w '%{time_total}' "$fan/select/logsql/query" --data-urlencode "query=$q")")
	done
	ms=$(printf '%s\n' "${s[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	mf=$(printf '%s\n' "${f[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	printf '%-90s %8.3fs %8.3fs %5.2fx\n' "$q" "$ms" "$mf" "$(awk -v a="$mf" -v b="$ms" 'BEGIN {print a / b}')"
done
