#!/usr/bin/env bash
# A storage node's consume-and-fsync rate against Kafka's own consumer, on the same records.
#
# Needs a broker started by ../shared/kafka/start.sh (KAFKA_WORK, KAFKA_PORT as for it). Fills a
# new topic of PARTITIONS partitions through a spate gateway (spate bench ingest --url, VOLUME of
# generated lines), then reads it twice: kafka-consumer-perf-test (fetch only, no disk), and
# spate consume (checks every line, writes segments, fsyncs each batch and its checkpoint). The
# rate is counted from the first record stored to the last, so group joins are left out on both
# sides. Everything shares this machine: the broker's CPU and the disk (run `sync` is done before
# reading, so that the broker's own writeback of the topic does not compete with the node's fsyncs).
#
#   KAFKA_PORT=19092 KAFKA_WORK=/tmp/kwork bash scripts/cluster/consume_rate.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
VOLUME=${VOLUME:-256MiB}
PARTITIONS=${PARTITIONS:-4}
PORT=${KAFKA_PORT:-19092}
TOOL=../shared/kafka/tool.sh
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/spate" ./cmd/spate
topic=spate-rate-$RANDOM

waitfor() { # waitfor LOG PREFIX: prints the URL the process says it listens on
	for _ in $(seq 200); do
		u=$(grep -o "$2: listening on http://[0-9.:]*" "$1" | head -1 | sed 's/.*on //') && [[ -n $u ]] && { echo "$u"; return; }
		sleep 0.05
	done
	cat "$1" >&2; exit 1
}
metric() { curl -s "$1/metrics" | awk -v m="$2" '$1==m {printf "%.0f\n", $2}'; } # Prometheus writes 2.6e+06

"$work/spate" serve --listen 127.0.0.1:0 --log-level warn --kafka-brokers "127.0.0.1:$PORT" --kafka-topic "$topic" \
	--kafka-create-topic "$PARTITIONS" 2>"$work/gw.log" &
gw=$!
url=$(waitfor "$work/gw.log" "spate serve")
"$work/spate" bench ingest --url "$url" --volume "$VOLUME" 2>&1 | grep -E 'MB/s|lines' | head -3
kill $gw; wait $gw 2>/dev/null || true
n=$($TOOL offsets --topic "$topic" 2>/dev/null | awk -F: '{s+=$3} END {print s}')
echo "topic $topic: $n records in $PARTITIONS partitions"
sync # the broker's writeback of the topic would otherwise share the disk with the node's fsyncs

ROUNDS=${ROUNDS:-3}
for round in $(seq "$ROUNDS"); do
	echo "--- round $round: kafka-consumer-perf-test (fetch only)"
	$TOOL consumer-perf --topic "$topic" --num-records "$n" --group "perf-$round-$topic" --timeout 60000 2>/dev/null | tail -1 |
		awk -F', ' '{printf "kafka-consumer-perf-test: %.1f MB/s fetching (%.1f MiB/s), %.1f MB/s with the group join\n", $9 * 1.048576, $9, $4 * 1.048576}'
	echo "--- round $round: spate consume (check, write, fsync batch + checkpoint)"
	rm -rf "$work/node"
	sync
	"$work/spate" consume --listen 127.0.0.1:0 --log-level warn --kafka-brokers "127.0.0.1:$PORT" --kafka-topic "$topic" \
		--group "spate-$round-$topic" --data "$work/node" 2>"$work/node.log" &
	node=$!
	nurl=$(waitfor "$work/node.log" "spate consume")
	t0='' b0=0 r0=0
	while :; do
		r=$(metric "$nurl" spate_kafka_consumed_records_total); r=${r:-0}
		if [[ -z $t0 && $r -gt 0 ]]; then
			t0=$(date +%s.%N) b0=$(metric "$nurl" spate_kafka_consumed_bytes_total) r0=$r
		fi
		if [[ $r -ge $n ]]; then
			t1=$(date +%s.%N) b1=$(metric "$nurl" spate_kafka_consumed_bytes_total)
			break
		fi
		sleep 0.02
	done
	awk -v t0="$t0" -v t1="$t1" -v b0="$b0" -v b1="$b1" -v r0="$r0" -v n="$n" 'BEGIN {
		d = t1 - t0; printf "spate consume: %.1f MB/s (%.1f MiB/s), %.0f records/s (%d records, %.1f MB in %.2f s)\n", (b1 - b0) / 1e6 / d, (b1 - b0) / 1048576 / d, (n - r0) / d, n - r0, (b1 - b0) / 1e6, d }'
	kill $node; wait $node 2>/dev/null || true
	grep -iE 'level=(error|warn)' "$work/node.log" | head -5 || true
done
