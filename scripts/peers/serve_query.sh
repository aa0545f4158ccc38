#!/usr/bin/env bash
# Compares spate serve with VictoriaLogs as a log server, on one machine in
# one run, and prints a Markdown report (progress to stderr, report to stdout):
#
#  1. ingest: SIZE of `spate gen` logs, rewritten to cover 24 h
#     (scripts/peers/spread), uploaded the same way (curl -X POST -T) into a
#     fresh data directory of each server, ROUNDS times alternated: MB/s;
#  2. ingest-then-answer: from the first byte sent to the first answer of
#     '* | stats count()' that counts every line (VictoriaLogs gets
#     /internal/force_flush before each try; spate needs none);
#  3. the query set over HTTP (/select/logsql/query), ROUNDS times each,
#     median curl time_total, and whether the two answers agree;
#  4. spate only: the same file ingested with small segments
#     (--segment-size SEG_SIZE, --compress-delay 0s), queried once every
#     sealed segment is .ndjson.zst, against `spate query` over the plain
#     file; and one hour (_time:[...)) of the 24 h store against all of it;
#  5. spate only: a second upload of the file into the store of step 1 while
#     8 clients loop over stats queries: peak RSS and MB/s against solo.
#
#   bash scripts/peers/serve_query.sh                  # SIZE=1GiB, ~4 min on 2 cores
#   SIZE=256MiB bash scripts/peers/serve_query.sh
#   SPATE=/tmp/spate VICTORIA_LOGS=/root/go/bin/victoria-logs bash scripts/peers/serve_query.sh 2GiB
#
# SPATE is built from this tree unless given; VictoriaLogs comes from the Go
# module proxy at the pinned version unless VICTORIA_LOGS names a binary
# (/root/go/bin/victoria-logs is used when it exists). Both servers get
# _time_field=ts&_msg_field=msg (the names `spate gen` writes); VictoriaLogs
# keeps 100 years (-retentionPeriod), so that the 2026-01-02 logs are kept.
# spate runs with its defaults (--fsync batch: acknowledged after fsync);
# VictoriaLogs acknowledges after parsing. Data directories stay until the
# end (removing a large one on a disk mounted with discard slows the next
# writes); the trap stops every server started here and removes OUT_DIR.
set -euo pipefail

SIZE=${1:-${SIZE:-1GiB}}
ROUNDS=${ROUNDS:-3}
PAUSE=${PAUSE:-3}
SEG_SIZE=${SEG_SIZE:-16MiB}
CLIENTS=${CLIENTS:-8}
VL_VERSION=v1.52.1
VL_PORT=${VL_PORT:-19441}
SP_PORT=${SP_PORT:-19442}
ARGS='_time_field=ts&_msg_field=msg'
DAY=2026-01-02
HOUR="_time:[${DAY}T12:00:00Z, ${DAY}T13:00:00Z)"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT_DIR=$(mktemp -d /tmp/serve-query.XXXX)

PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$OUT_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { echo "serve_query: $*" >&2; }
die() { say "$*"; exit 1; }
now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.3f\n", v[int((NR + 1) / 2)] }'; }

SPATE=${SPATE:-}
if [[ -z $SPATE ]]; then
	(cd "$ROOT" && go build -o "$OUT_DIR/spate" ./cmd/spate)
	SPATE=$OUT_DIR/spate
fi
VL=${VICTORIA_LOGS:-}
if [[ -z $VL && -x /root/go/bin/victoria-logs ]]; then VL=/root/go/bin/victoria-logs; fi
if [[ -z $VL ]]; then
	GOBIN="$OUT_DIR/bin" go install "github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs@$VL_VERSION"
	VL=$OUT_DIR/bin/victoria-logs
fi
(cd "$ROOT" && go build -o "$OUT_DIR/spread" ./scripts/peers/spread)

# ---- servers

wait_up() { # URL
	for _ in $(seq 300); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done
	die "$1 did not come up"
}

# start_vl DIR: starts VictoriaLogs on DIR; sets PID.
start_vl() {
	"$VL" -storageDataPath="$1" -httpListenAddr=127.0.0.1:$VL_PORT -loggerLevel=WARN \
		-retentionPeriod=100y >>"$1.log" 2>&1 &
	PID=$!
	PIDS+=("$PID")
	wait_up "http://127.0.0.1:$VL_PORT/health"
}

# start_spate DIR [FLAGS...]: starts spate serve on DIR; sets PID.
start_spate() {
	local d=$1
	shift
	"$SPATE" serve --data "$d" --listen 127.0.0.1:$SP_PORT --log-level warn "$@" 2>>"$d.log" &
	PID=$!
	PIDS+=("$PID")
	wait_up "http://127.0.0.1:$SP_PORT/healthz"
}

stop() { # PID
	kill -TERM "$1"
	wait "$1" || true
}

port_of() { if [[ $1 == vl ]]; then echo $VL_PORT; else echo $SP_PORT; fi; }

# query TOOL LOGSQL OUT: one query over HTTP, the answer in OUT; prints seconds.
query() {
	local code t
	read -r code t < <(curl -sS -o "$3" -w '%{http_code} %{time_total}\n' \
		"http://127.0.0.1:$(port_of "$1")/select/logsql/query" --data-urlencode "query=$2")
	[[ $code == 200 ]] || die "$1 answered $code to '$2': $(head -c 300 "$3")"
	echo "$t"
}

# count TOOL: '* | stats count()' now.
count() {
	query "$1" '* | stats count() n' "$OUT_DIR/count.$1" >/dev/null
	jq -r '.n' "$OUT_DIR/count.$1"
}

upload() { # TOOL
	local code
	code=$(curl -sS -o "$OUT_DIR/upload.$1" -w '%{http_code}' -X POST -T "$FILE" \
		-H 'Content-Type: application/stream+json' "http://127.0.0.1:$(port_of "$1")/insert/jsonline?$ARGS")
	[[ $code == 200 ]] || die "$1 upload answered $code: $(head -c 300 "$OUT_DIR/upload.$1")"
}

# segs DIR KIND: the number of spate segments: plain (no .zst yet), zst, both
# (the plain file not yet removed after compression).
segs() {
	local plain=0 zst=0 both=0 f
	for f in "$1"/0-0/*/seg-*.ndjson; do
		[[ -e $f ]] || continue
		if [[ -e $f.zst ]]; then both=$((both + 1)); else plain=$((plain + 1)); fi
	done
	zst=$(find "$1" -name 'seg-*.ndjson.zst' | wc -l)
	case $2 in plain) echo $plain ;; zst) echo "$zst" ;; both) echo $both ;; esac
}

# settle DIR: waits (up to 180 s) until every sealed segment is compressed and
# its plain copy removed: at most one plain segment (the open one) is left.
settle() {
	for _ in $(seq 900); do
		[[ $(segs "$1" plain) -le 1 && $(segs "$1" both) -eq 0 ]] && return 0
		sleep 0.2
	done
	say "settle: $1 still has $(segs "$1" plain) plain and $(segs "$1" both) doubled segments"
}

# ---- the file

say "gen $SIZE"
"$SPATE" gen --size "$SIZE" --seed 1 -o "$OUT_DIR/gen.ndjson" 2>/dev/null
FILE=$OUT_DIR/logs.ndjson
"$OUT_DIR/spread" -start "${DAY}T00:00:00Z" -span 24h "$OUT_DIR/gen.ndjson" "$FILE"
rm "$OUT_DIR/gen.ndjson"
BYTES=$(stat -c %s "$FILE")
MB=$(awk -v b="$BYTES" 'BEGIN { printf "%.1f", b / 1e6 }')
LINES=$(wc -l <"$FILE")
cat "$FILE" >/dev/null # into the page cache: both uploads read it warm

# ---- 1, 2: ingest and ingest-then-answer

# ingest_round TOOL DIR: one upload into a fresh server; appends
# "TOOL ingest-s answer-s tries VmHWM-kB" to runs.
ingest_round() {
	local tool=$1 d=$2 t0 t1 t2 tries=0 got rss
	if [[ $tool == vl ]]; then start_vl "$d"; else start_spate "$d"; fi
	sync
	sleep "$PAUSE"
	t0=$(now)
	upload "$tool"
	t1=$(now)
	while :; do
		tries=$((tries + 1))
		[[ $tool == vl ]] && curl -sf -o /dev/null "http://127.0.0.1:$VL_PORT/internal/force_flush"
		got=$(count "$tool")
		[[ $got == "$LINES" ]] && break
		[[ $tries -lt 2000 ]] || die "$tool counts $got lines, want $LINES"
		sleep 0.01
	done
	t2=$(now)
	rss=$(awk '/VmHWM/ { print $2 }' "/proc/$PID/status")
	stop "$PID"
	echo "$tool $(sub "$t1" "$t0") $(sub "$t2" "$t0") $tries $rss" | tee -a "$OUT_DIR/ingest.runs" >&2
}

say "file $FILE: $MB MB, $LINES lines over 24 h; $ROUNDS ingest rounds"
for i in $(seq "$ROUNDS"); do
	for tool in vl spate; do
		say "round $i: $tool"
		ingest_round $tool "$OUT_DIR/data.$tool.$i"
	done
done
col() { awk -v t="$1" -v c="$2" '$1 == t { print $c }' "$OUT_DIR/ingest.runs"; }
for tool in vl spate; do
	declare "ING_$tool=$(col $tool 2 | median)"
	declare "ANS_$tool=$(col $tool 3 | median)"
	declare "RSS_$tool=$(col $tool 5 | sort -n | tail -1)"
done

# ---- 3: the query set

# canon KIND FILE: the answer in a form both servers should share: rows sorted
# (group) or in order (ordered), numbers rounded to 3 decimals; for rows (a
# search with limit): the row count, and whether every _msg holds the word.
canon() {
	case $1 in
	group | ordered)
		jq -c -S 'with_entries(if (.value | type) == "string" and (.value | test("^-?[0-9]+[.][0-9]+$"))
			then .value |= ((tonumber * 1000 | round) / 1000 | tostring) else . end)' "$2" |
			if [[ $1 == group ]]; then sort; else cat; fi
		;;
	rows:*)
		jq -s -r --arg w "${1#rows:}" '"\(length) rows, all match: \(all(.[]; ._msg | test("\\b" + $w + "\\b")))"' "$2"
		;;
	esac
}
counts() { # the same without the averages and quantiles
	if [[ $1 == rows:* ]]; then canon "$1" "$2"; else canon "$1" "$2" | jq -c 'del(.avg_lat, .p95)'; fi
}

# name|kind|LogsQL
QUERIES=(
	"by service|group|* | stats by (service) count() n"
	"5xx by service|group|status:>=500 | stats by (service) count() n, avg(latency_ms) avg_lat, quantile(0.95, latency_ms) p95"
	"level:=error|group|level:=error | stats count() n"
	"top paths by bytes|ordered|bytes:>=0 | stats by (path) sum(bytes) s | sort by (s desc, path) | limit 10"
	"word error, limit 10|rows:error|error | limit 10"
	"word upstream, count|group|upstream | stats count() n"
	"1 h of 24, by service|group|$HOUR | stats by (service) count() n"
)

say "queries: restarting both on the round-$ROUNDS stores"
start_vl "$OUT_DIR/data.vl.$ROUNDS"
VL_PID=$PID
start_spate "$OUT_DIR/data.spate.$ROUNDS"
SP_PID=$PID
settle "$OUT_DIR/data.spate.$ROUNDS"
sleep "$PAUSE"
QROWS=()
for i in "${!QUERIES[@]}"; do
	IFS='|' read -r name kind q <<<"${QUERIES[$i]}"
	: >"$OUT_DIR/q.runs"
	for r in $(seq "$ROUNDS"); do
		for tool in vl spate; do
			t=$(query $tool "$q" "$OUT_DIR/q$i.$tool")
			echo "$tool $t" >>"$OUT_DIR/q.runs"
		done
	done
	tv=$(awk '$1 == "vl" { print $2 }' "$OUT_DIR/q.runs" | median)
	ts=$(awk '$1 == "spate" { print $2 }' "$OUT_DIR/q.runs" | median)
	if [[ $(canon "$kind" "$OUT_DIR/q$i.vl") == "$(canon "$kind" "$OUT_DIR/q$i.spate")" ]]; then
		agree=same
	elif [[ $(counts "$kind" "$OUT_DIR/q$i.vl") == "$(counts "$kind" "$OUT_DIR/q$i.spate")" ]]; then
		agree="counts same, other values differ"
	else
		agree="**DIFFER**"
	fi
	if [[ $agree != same ]]; then
		cp "$OUT_DIR/q$i.vl" "/tmp/serve_query.diff.$i.vl"
		cp "$OUT_DIR/q$i.spate" "/tmp/serve_query.diff.$i.spate"
		say "answers differ for '$q' ($agree): kept in /tmp/serve_query.diff.$i.{vl,spate}"
	fi
	[[ $kind == rows:* ]] && agree="$agree ($(canon "$kind" "$OUT_DIR/q$i.spate"))"
	say "query $name: vl $tv s, spate $ts s, $agree"
	QROWS+=("| \`${q//|/\\|}\` | $ts | $tv | $(div "$ts" "$tv") | | $agree |")
	[[ $i -eq 0 ]] && { FULL_vl=$tv; FULL_spate=$ts; }
	[[ $name == 1\ h* ]] && { HOUR_vl=$tv; HOUR_spate=$ts; }
done
stop "$VL_PID"
stop "$SP_PID"

# ---- 4: sealed .zst segments against the plain file

say "zst: ingest with --segment-size $SEG_SIZE --compress-delay 0s, then with --no-compress"
ZD=$OUT_DIR/data.zst
start_spate "$ZD" --segment-size "$SEG_SIZE" --compress-delay 0s
ZST_PID=$PID
t0=$(now)
upload spate
settle "$ZD"
ZST_WAIT=$(sub "$(now)" "$t0")
NSEG=$(($(segs "$ZD" zst) + $(segs "$ZD" plain)))
NZST=$(segs "$ZD" zst)
ZST_MB=$(du -sm --apparent-size "$ZD" | awk '{ print $1 }')
[[ $(count spate) == "$LINES" ]] || die "the zst store counts $(count spate) lines, want $LINES"
# the same segments left plain, on the next port, for the decompression cost
PD=$OUT_DIR/data.plain
SP_PORT=$((SP_PORT + 1)) start_spate "$PD" --segment-size "$SEG_SIZE" --no-compress
PLAIN_PID=$PID
SP_PORT=$((SP_PORT + 1)) upload spate
sleep "$PAUSE"
ZQ_COUNT='* | stats count() n'
ZQ_FILTER='status:>=500 | stats by (service) count() n'
ZQ_HOUR="$HOUR | stats by (service) count() n"
ZQ_FULL='* | stats by (service) count() n'
: >"$OUT_DIR/z.runs"
for r in $(seq "$ROUNDS"); do
	for w in count filter hour full; do
		v=ZQ_${w^^}
		t=$(query spate "${!v}" "$OUT_DIR/z.$w.http")
		echo "http-$w $t" >>"$OUT_DIR/z.runs"
		t=$(SP_PORT=$((SP_PORT + 1)) query spate "${!v}" "$OUT_DIR/z.$w.plain")
		echo "plain-$w $t" >>"$OUT_DIR/z.runs"
	done
	for w in count filter; do
		v=ZQ_${w^^}
		t0=$(now)
		"$SPATE" query --format ndjson "${!v}" "$FILE" >"$OUT_DIR/z.$w.cli"
		echo "cli-$w $(sub "$(now)" "$t0")" >>"$OUT_DIR/z.runs"
	done
done
stop "$ZST_PID"
stop "$PLAIN_PID"
zmed() { awk -v k="$1" '$1 == k { print $2 }' "$OUT_DIR/z.runs" | median; }
ZROWS=()
for w in count filter; do
	v=ZQ_${w^^}
	th=$(zmed "http-$w")
	tc=$(zmed "cli-$w")
	tp=$(zmed "plain-$w")
	same=same
	[[ $(canon group "$OUT_DIR/z.$w.http") == "$(canon group "$OUT_DIR/z.$w.cli")" ]] || same="**DIFFER**"
	[[ $(canon group "$OUT_DIR/z.$w.http") == "$(canon group "$OUT_DIR/z.$w.plain")" ]] || same="**DIFFER**"
	ZROWS+=("| \`${!v//|/\\|}\`: zst store (HTTP) vs plain file (\`spate query\`) | $th s, $(div "$MB" "$th") MB/s | $tc s, $(div "$MB" "$tc") MB/s | $(div "$tc" "$th") | >= 0.6 | $same |")
	ZROWS+=("| … zst store vs the same segments plain (--no-compress), both HTTP | $th s | $tp s, $(div "$MB" "$tp") MB/s | $(div "$tp" "$th") | | $same |")
done
th=$(zmed http-hour)
tf=$(zmed http-full)
ZROWS+=("| \`$HOUR\` vs \`*\`, \`stats by (service) count()\`, zst store | $th s | $tf s | $(div "$th" "$tf") | <= 0.1 | |")
th=$(zmed plain-hour)
tf=$(zmed plain-full)
ZROWS+=("| … the same on the plain store | $th s | $tf s | $(div "$th" "$tf") | <= 0.1 | |")

# ---- 5: a second upload during CLIENTS query loops

say "load: second upload into the round-$ROUNDS store with $CLIENTS query clients"
LD=$OUT_DIR/data.spate.$ROUNDS
start_spate "$LD"
LOAD_PID=$PID
LOOPQ=('* | stats count() n' 'status:>=500 | stats by (service) count() n, avg(latency_ms) a'
	'level:=error | stats by (host) count() n' 'bytes:>=0 | stats by (path) sum(bytes) s | sort by (s desc) | limit 10')
client() { # ID: queries in turn until the stop file appears; prints how many
	local n=0
	while [[ ! -e $OUT_DIR/stop ]]; do
		curl -sf -o /dev/null "http://127.0.0.1:$SP_PORT/select/logsql/query" \
			--data-urlencode "query=${LOOPQ[$(((n + $1) % ${#LOOPQ[@]}))]}" && n=$((n + 1))
	done
	echo "$n" >"$OUT_DIR/client.$1"
}
sampler() { # peak VmRSS and RssAnon (kB), sampled every 0.1 s
	local rss=0 anon=0 r a
	while [[ ! -e $OUT_DIR/stop ]]; do
		read -r r a < <(awk '/^VmRSS/ { r = $2 } /^RssAnon/ { a = $2 } END { print r, a }' "/proc/$LOAD_PID/status")
		((r > rss)) && rss=$r
		((a > anon)) && anon=$a
		sleep 0.1
	done
	echo "$rss $anon" >"$OUT_DIR/sampler"
}
BG=()
for c in $(seq "$CLIENTS"); do
	client "$c" &
	BG+=($!)
done
sampler &
BG+=($!)
PIDS+=("${BG[@]}")
sleep 1
t0=$(now)
upload spate
LOAD_ING=$(sub "$(now)" "$t0")
touch "$OUT_DIR/stop"
for p in "${BG[@]}"; do wait "$p"; done
LOAD_HWM=$(awk '/VmHWM/ { print $2 }' "/proc/$LOAD_PID/status")
read -r LOAD_RSS LOAD_ANON <"$OUT_DIR/sampler"
LOAD_Q=$(cat "$OUT_DIR"/client.* | awk '{ s += $1 } END { print s }')
[[ $(count spate) == $((2 * LINES)) ]] || die "after the second upload spate counts $(count spate), want $((2 * LINES))"
stop "$LOAD_PID"

# ---- report

mbs() { div "$MB" "$1"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
cat <<EOF
## spate serve vs VictoriaLogs $VL_VERSION

$(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM, $(go version | cut -d' ' -f3-), spate $(cd "$ROOT" && git rev-parse --short HEAD)$(cd "$ROOT" && git diff --quiet HEAD -- cmd internal || echo '+dirty'), $(uname -r).
File: \`spate gen --size $SIZE --seed 1\` spread over 24 h of $DAY: $MB MB, $LINES lines; args \`$ARGS\`.
Times are medians of $ROUNDS runs; ratio = spate / VictoriaLogs (time) unless said.

| measure | spate | VictoriaLogs | ratio | target | answers |
|---|---|---|---|---|---|
| ingest, s (MB/s) | $ING_spate ($(mbs "$ING_spate")) | $ING_vl ($(mbs "$ING_vl")) | $(div "$ING_spate" "$ING_vl") | | |
| ingest MB/s, spate / VL | | | $(div "$ING_vl" "$ING_spate") x | | |
| first byte → correct \`* \| stats count()\`, s | $ANS_spate | $ANS_vl | $(div "$ANS_spate" "$ANS_vl") | <= 0.2 | $LINES |
| peak RSS during ingest, MiB | $(mib "$RSS_spate") | $(mib "$RSS_vl") | | | |
$(printf '%s\n' "${QROWS[@]}")
| 1 h of 24 vs all, by service | $(div "$HOUR_spate" "$FULL_spate") | $(div "$HOUR_vl" "$FULL_vl") | | <= 0.1 | |

Queries (seconds, curl time_total) run against the stores of ingest round $ROUNDS after a restart;
spate's store had its sealed segments compressed (default --segment-size 128MiB).

### spate only

| measure | spate | baseline | ratio | target | answers |
|---|---|---|---|---|---|
$(printf '%s\n' "${ZROWS[@]}")
| $CLIENTS query clients during a 2nd upload: ingest s (MB/s) vs solo | $LOAD_ING ($(mbs "$LOAD_ING")) | $ING_spate ($(mbs "$ING_spate")) | $(div "$ING_spate" "$LOAD_ING") | >= 0.7 | $LOAD_Q queries done |
| peak RSS (VmHWM) under that load, MiB | $(mib "$LOAD_HWM") | | | < 512 | |
| … of which anonymous (RssAnon, sampled peak), MiB | $(mib "$LOAD_ANON") | | | | |

zst store: --segment-size $SEG_SIZE --compress-delay 0s (plain store: --no-compress); $NZST of $NSEG segments compressed
(${ZST_MB} MiB on disk) ${ZST_WAIT} s after the upload began. MB/s are of the plain file; the
plain-file time includes \`spate query\`'s process start. VmHWM counts file pages of mapped
segments too; RssAnon is the heap.
EOF
