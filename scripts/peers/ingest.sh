#!/usr/bin/env bash
# Times one big upload into spate serve and into VictoriaLogs, sent the same
# way: curl -X POST -T FILE, alternated ROUNDS times, and prints one line per
# run (seconds, MB/s of the file, the server's peak RSS) and the medians.
#
#   go build -o /tmp/spate ./cmd/spate
#   go run ./cmd/spate gen --size 1GiB --seed 1 -o /tmp/big.ndjson
#   bash scripts/peers/ingest.sh /tmp/big.ndjson /tmp/spate
#   ARGS='_time_field=ts&_msg_field=msg' bash scripts/peers/ingest.sh /tmp/big.ndjson /tmp/spate
#
# VictoriaLogs comes from the Go module proxy at the pinned version unless
# VICTORIA_LOGS names a binary. spate runs with its defaults (--fsync
# batch: acknowledged after fsync); VictoriaLogs acknowledges after parsing
# and keeps the logs for 100 years (-retentionPeriod), so that old
# timestamps are kept, not dropped. The data directories stay until the end
# (OUT_DIR): removing a large directory on a disk mounted with discard slows
# the next run's writes. Progress goes to stderr, results to stdout.
set -euo pipefail

FILE=${1:?usage: ingest.sh FILE SPATE_BINARY}
SPATE=${2:?usage: ingest.sh FILE SPATE_BINARY}
ROUNDS=${ROUNDS:-3}
PAUSE=${PAUSE:-10}
ARGS=${ARGS:-}
VL_VERSION=v1.52.1
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/ingest-run.XXXX)}
mkdir -p "$OUT_DIR"
trap 'rm -rf "$OUT_DIR"/data.*' EXIT

VL=${VICTORIA_LOGS:-}
if [[ -z $VL ]]; then
	GOBIN="$OUT_DIR/bin" go install "github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs@$VL_VERSION"
	VL=$OUT_DIR/bin/victoria-logs
fi
MB=$(stat -c %s "$FILE" | awk '{print $1 / 1e6}')

wait_up() { # url
	for _ in $(seq 200); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done
	echo "ingest.sh: $1 did not come up" >&2
	exit 1
}

# upload NAME URL PID: one upload; prints "NAME seconds MB/s peak-RSS-kB"
upload() {
	local name=$1 url=$2 pid=$3 start end code
	start=$(date +%s.%N)
	code=$(curl -sS -o "$OUT_DIR/answer" -w '%{http_code}' -X POST -T "$FILE" \
		-H 'Content-Type: application/stream+json' "$url?$ARGS")
	end=$(date +%s.%N)
	[[ $code == 200 ]] || { echo "ingest.sh: $name answered $code: $(head -c 300 "$OUT_DIR/answer")" >&2; exit 1; }
	echo "$name $(echo "$end - $start" | bc) $(echo "$MB / ($end - $start)" | bc) $(awk '/VmHWM/{print $2}' /proc/$pid/status)"
}

run_vl() {
	local d port=19428
	d=$(mktemp -d "$OUT_DIR/data.vl.XXXX")
	"$VL" -storageDataPath="$d" -httpListenAddr=127.0.0.1:$port -loggerLevel=WARN -retentionPeriod=100y >"$d.log" 2>&1 &
	local pid=$!
	wait_up http://127.0.0.1:$port/health
	upload victoria-logs http://127.0.0.1:$port/insert/jsonline $pid
	kill -TERM $pid
	wait $pid || true
}

run_spate() {
	local d port=19429
	d=$(mktemp -d "$OUT_DIR/data.spate.XXXX")
	"$SPATE" serve --data "$d" --listen 127.0.0.1:$port --log-level warn 2>"$d.log" &
	local pid=$!
	wait_up http://127.0.0.1:$port/healthz
	upload spate http://127.0.0.1:$port/insert/jsonline $pid
	kill -TERM $pid
	wait $pid
}

echo "file $FILE ($MB MB), args '$ARGS', $ROUNDS rounds, $PAUSE s pauses" >&2
for i in $(seq "$ROUNDS"); do
	for tool in vl spate; do
		sync
		sleep "$PAUSE"
		echo "round $i: $tool" >&2
		"run_$tool" | tee -a "$OUT_DIR/runs"
	done
done
echo
echo "| tool | median s | median MB/s | runs (s) | peak RSS (MB) |"
echo "|---|---|---|---|---|"
for tool in victoria-logs spate; do
	awk -v t=$tool '$1 == t' "$OUT_DIR/runs" | sort -k2 -n | awk -v t=$tool -v mb="$MB" '
		{ s[NR] = $2; rss = rss " " int($4 / 1000); runs = runs " " $2 }
		END { m = s[int((NR + 1) / 2)]; printf "| %s | %.2f | %.0f |%s |%s |\n", t, m, mb / m, runs, rss }'
done
