#!/usr/bin/env bash
# run.sh FILE [SPATE_BIN]: time peer tools (wc, ripgrep, DuckDB, jq) on the
# same NDJSON file and the same queries as `spate query`, check that their
# answers agree, and print a Markdown report (table + agreement + notes) on
# stdout. Progress goes to stderr. See README.md beside this file.
#
# Environment:
#   REPEAT=3        runs per command (the median is reported)
#   REPEAT_JQ=1     runs per jq command (jq reads ~50 MB/s: minutes on 2 GiB)
#   SKIP="jq"       tools to leave out: spate rg wc cat duckdb jq sort
#   QUERIES="a b c d e f"   which queries to run
#   JQ_QUERIES=...  which queries jq runs (default: QUERIES)
#   TIMEOUT=0       seconds before a run is killed (0: never)
#   PY=/tmp/peers-venv/bin/python   python with duckdb (install.sh makes it)
#   OUT_DIR=...     where raw outputs and timings go (default: a new /tmp dir)
#   CACHE=readback  before the first run, drop the file's pages from the page
#                   cache (dd iflag=nocache) and read it back once, as
#                   `spate bench io` does for warm runs: the file then sits
#                   in large folios where the filesystem has them, whatever
#                   wrote it. CACHE=asis only reads it once (the state then
#                   depends on the file's history; see README.md)
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 || $1 == -h || $1 == --help ]]; then
	awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
	exit 2
fi
F=$(realpath "$1")
SPATE=${2:-}
[[ -n $SPATE && $SPATE != */* ]] && SPATE=$(command -v "$SPATE" || echo "$SPATE")
[[ -n $SPATE && -e $SPATE ]] && SPATE=$(realpath "$SPATE")
HERE=$(cd "$(dirname "$0")" && pwd)
DQ=$HERE/duckdb_query.py
PY=${PY:-/tmp/peers-venv/bin/python}
REPEAT=${REPEAT:-3}
REPEAT_JQ=${REPEAT_JQ:-1}
SKIP=" ${SKIP:-} "
QUERIES=${QUERIES:-a b c d e f}
JQ_QUERIES=${JQ_QUERIES:-$QUERIES}
TIMEOUT=${TIMEOUT:-0}
CACHE=${CACHE:-readback}
OUT=${OUT_DIR:-$(mktemp -d /tmp/peers-run.XXXXXX)}
mkdir -p "$OUT"
export F SPATE DQ PY

[[ -r $F ]] || { echo "run.sh: cannot read $F" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "run.sh: GNU time missing: run install.sh" >&2; exit 1; }
BYTES=$(stat -c %s "$F")
log() { printf '%s\n' "$*" >&2; }

# ---------------------------------------------------------------- queries
# Each query: its LogsQL, the kind of answer (for normalize.py), and the
# peers' commands. A command is a bash snippet run with bash -c; it sees
# $F (the file), $PY and $DQ (python and duckdb_query.py), $SPATE.
declare -A LOGSQL KIND
declare -a ORDER=()        # "qid<TAB>tool" in run order
declare -A CMD

LOGSQL[a]='* | stats count()'
LOGSQL[b]='level:error | stats count()'
LOGSQL[c]='~"timeout" | stats count()'
LOGSQL[d]='* | stats by (service) count()'
LOGSQL[e]='status:>=500 | stats by (service) count(), avg(latency_ms), quantile(0.95, latency_ms)'
# f filters on bytes first: without it, the ~0.3% of paths seen only on lines
# without bytes sum to NaN, which LogsQL sorts above every number, and the
# top 10 is ten of those NaN groups, in no fixed order.
LOGSQL[f]='bytes:>=0 | stats by (path) sum(bytes) s | sort by (s desc) | limit 10'
KIND=([a]=scalar [b]=scalar [c]=scalar [d]=group [e]=group [f]=ordered)

def() { # qid tool; the command on stdin
	local q=$1 tool=$2
	CMD[$q$'\t'$tool]=$(cat)
	ORDER+=("$q"$'\t'"$tool")
}

for q in a b c d e f; do
	def "$q" spate <<EOF
"\$SPATE" query --format ndjson '${LOGSQL[$q]}' "\$F"
EOF
done

# a. * | stats count()
def a cat <<'EOF'
cat "$F" >/dev/null
EOF
def a 'wc -l' <<'EOF'
wc -l <"$F"
EOF
def a rg <<'EOF'
rg -c '' "$F"
EOF
def a duckdb <<'EOF'
"$PY" "$DQ" "$F" "SELECT count(*) FROM logs"
EOF
def a jq <<'EOF'
jq -n 'reduce inputs as $x (0; .+1)' "$F"
EOF

# b. level:error | stats count()
def b rg <<'EOF'
rg -c '"level":"error"' "$F"
EOF
def b duckdb <<'EOF'
"$PY" "$DQ" "$F" "SELECT count(*) FROM logs WHERE level = 'error'"
EOF
def b jq <<'EOF'
jq -n 'reduce (inputs | select(.level == "error")) as $x (0; .+1)' "$F"
EOF

# c. ~"timeout" | stats count()   (LogsQL: a regexp on _msg, here "msg")
def c rg <<'EOF'
rg -c timeout "$F"
EOF
def c 'rg (msg only)' <<'EOF'
rg -c '"msg":"([^"\\]|\\.)*timeout' "$F"
EOF
def c duckdb <<'EOF'
"$PY" "$DQ" "$F" "SELECT count(*) FROM logs WHERE msg LIKE '%timeout%'"
EOF
def c jq <<'EOF'
jq -n 'reduce (inputs | select(.msg | strings | contains("timeout"))) as $x (0; .+1)' "$F"
EOF

# jq 1.6 copies the reduce state (an object) on update whenever anything else
# still holds a reference to it: `.[$k] += v`, `.[$k] |= f` and `E as $k | ...`
# inside the reduce body all do, which makes a group-by quadratic in the number
# of keys (hours for the ~350,000 distinct paths of 256 MiB). setpath/getpath
# with the key taken from the reduce variable updates in place; e collects the
# 5xx lines into an array and uses group_by.

# d. * | stats by (service) count()
def d 'rg | sort | uniq -c' <<'EOF'
rg -o -r '$1' '"service":"([^"]*)"' "$F" | LC_ALL=C sort | uniq -c | awk '{print $2 "\t" $1}'
EOF
def d duckdb <<'EOF'
"$PY" "$DQ" "$F" "SELECT service, count(*) FROM logs GROUP BY service"
EOF
def d jq <<'EOF'
jq -rn 'reduce (inputs | .service // "") as $s ({}; setpath([$s]; getpath([$s]) + 1)) | to_entries[] | [.key, .value] | @tsv' "$F"
EOF

# e. status:>=500 | stats by (service) count(), avg(latency_ms), quantile(0.95, latency_ms)
# LogsQL's quantile (VictoriaLogs, and spate) sorts all the group's values and
# takes the one at index floor(phi*n); a line without the field counts in n
# and sorts lowest, as an empty value. DuckDB's quantile_disc(x, 0.95) skips
# NULLs and takes index ceil(0.95*n)-1, which is another value now and then,
# so duckdb_query.py defines a macro logsql_quantile and jq spells it out.
def e duckdb <<'EOF'
"$PY" "$DQ" "$F" "SELECT service, count(*), avg(latency_ms), logsql_quantile(0.95, latency_ms) FROM logs WHERE status >= 500 GROUP BY service"
EOF
def e jq <<'EOF'
jq -rn '[inputs | select(.status >= 500) | {s: (.service // ""), l: .latency_ms}] | group_by(.s)[] | (map(.l | numbers) | sort) as $l | ((length * 0.95 | floor) - (length - ($l | length))) as $i | [.[0].s, length, (if $l == [] then null else ($l | add / length) end), (if $i < 0 then null else $l[$i] end)] | @tsv' "$F"
EOF

# f. bytes:>=0 | stats by (path) sum(bytes) s | sort by (s desc) | limit 10
def f duckdb <<'EOF'
"$PY" "$DQ" "$F" "SELECT path, sum(bytes) AS s FROM logs WHERE bytes >= 0 GROUP BY path ORDER BY s DESC LIMIT 10"
EOF
def f jq <<'EOF'
jq -rn 'reduce (inputs | select((.bytes | type) == "number" and .bytes >= 0) | {k: (.path // ""), v: .bytes}) as $x ({}; setpath([$x.k]; getpath([$x.k]) + $x.v)) | to_entries | sort_by(-.value) | .[:10][] | [.key, .value] | @tsv' "$F"
EOF

toolkey() { # tool name -> the word SKIP matches
	case $1 in
	'wc -l') echo wc ;;
	'rg (msg only)') echo rg ;;
	'rg | sort | uniq -c') echo sort ;;
	*) echo "$1" ;;
	esac
}

wanted() { # qid tool
	local q=$1 tool=$2 k
	k=$(toolkey "$tool")
	[[ " $QUERIES " == *" $q "* ]] || return 1
	[[ $SKIP == *" $k "* ]] && return 1
	[[ $k == sort && $SKIP == *" rg "* ]] && return 1
	[[ $k == jq && " $JQ_QUERIES " != *" $q "* ]] && return 1
	if [[ $k == spate && -z $SPATE ]]; then return 1; fi
	return 0
}

display() { # command template -> what the table shows
	local s=$1
	s=${s//'"$PY" "$DQ"'/python3 duckdb_query.py}
	s=${s//'"$SPATE"'/spate}
	s=${s//'"$F"'/FILE}
	printf '%s' "$s"
}

# ---------------------------------------------------------------- environment
versions() {
	echo "- file: \`$F\`, $BYTES bytes ($(awk -v b="$BYTES" 'BEGIN{printf "%.2f GiB", b/2^30}'))"
	echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), $(awk '/MemTotal/{printf "%.1f GiB", $2/2^20}' /proc/meminfo) RAM, $(uname -sr), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- ripgrep $(rg --version 2>/dev/null | head -1 | cut -d' ' -f2) (deb $(dpkg-query -W -f='${Version}' ripgrep 2>/dev/null || echo '?')), jq $(jq --version 2>/dev/null | sed 's/^jq-//') (deb $(dpkg-query -W -f='${Version}' jq 2>/dev/null || echo '?')), DuckDB $("$PY" -c 'import duckdb; print(duckdb.__version__)' 2>/dev/null || echo 'n/a') (python module), $(wc --version | head -1), GNU time $(dpkg-query -W -f='${Version}' time 2>/dev/null || echo '?')"
	if [[ -n $SPATE ]]; then
		local v
		v=$("$SPATE" version 2>/dev/null | head -1 || true)
		[[ -z $v ]] && v=$("$SPATE" --version 2>/dev/null | head -1 || true)
		echo "- spate: \`$SPATE\`${v:+ ($v)}"
	fi
	if [[ $SKIP != *" duckdb "* ]] && "$PY" -c 'import duckdb' 2>/dev/null; then
		local ms
		ms=$(for _ in 1 2 3; do
			t0=$(date +%s%N)
			"$PY" -c 'import duckdb; duckdb.connect().execute("SELECT 1").fetchall()'
			echo $((($(date +%s%N) - t0) / 1000000))
		done | sort -n | sed -n 2p)
		echo "- python + duckdb start-up (import, connect, SELECT 1), included in the duckdb times: ${ms} ms"
	fi
	echo "- runs: REPEAT=$REPEAT, REPEAT_JQ=$REPEAT_JQ; $(date -u +%Y-%m-%dT%H:%MZ)"
}

# ---------------------------------------------------------------- measuring
declare -A TIMES CPU RSS RC HASH SUM NOTE
spate_ok=1
if [[ -n $SPATE && ! -x $SPATE ]]; then
	log "run.sh: $SPATE is not an executable: spate rows will say n/a"
	spate_ok=0
fi

run_one() { # qid tool round
	local q=$1 tool=$2 r=$3 key=$1$'\t'$2 id rc t0 t1 line wall cpu rss h sum
	id="$q-$(toolkey "$tool")-$(printf '%s' "$tool" | md5sum | cut -c1-4)"
	local raw=$OUT/$id.out err=$OUT/$id.err tf=$OUT/$id.time
	t0=$(date +%s%N)
	set +e
	/usr/bin/time -f '%e %U %S %M' -o "$tf" timeout "$TIMEOUT" bash -c "${CMD[$key]}" >"$raw" 2>"$err"
	rc=$?
	set -e
	t1=$(date +%s%N)
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", (b-a)/1e9}')
	line=$(tail -n1 "$tf")
	cpu=$(awk '{printf "%.2f", $2+$3}' <<<"$line")
	rss=$(awk '{printf "%.0f", $4/1024}' <<<"$line")
	# rg -c exits 1 when nothing matched: that is an answer (0), not a failure.
	if [[ $(toolkey "$tool") == rg && $rc == 1 && ! -s $err ]]; then rc=0; fi
	if [[ $rc != 0 ]]; then
		RC[$key]=$rc
		if [[ $rc == 124 ]]; then NOTE[$key]="timed out after ${TIMEOUT}s"; else NOTE[$key]="exit $rc: $(head -c 200 "$err" | tr '\n|' '  ')"; fi
		log "  $q $tool round $r: FAILED ($rc) $(head -c 200 "$err")"
		return
	fi
	TIMES[$key]+="$wall "
	CPU[$key]+="$cpu "
	[[ ${RSS[$key]:-0} -lt $rss ]] && RSS[$key]=$rss
	local kind=${KIND[$q]}
	[[ $tool == cat ]] && kind=none
	IFS=$'\t' read -r h sum < <("$PY" "$HERE/normalize.py" "$kind" "$raw" "$OUT/$id.canon")
	if [[ -n ${HASH[$key]:-} && ${HASH[$key]} != "$h" ]]; then
		NOTE[$key]="answers differ between runs"
	fi
	HASH[$key]=$h
	SUM[$key]=$sum
	log "  $q $tool round $r: ${wall}s, cpu ${cpu}s, ${rss} MiB: $sum"
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{if (NR==0) exit; if (NR%2) printf "%.3f", a[(NR+1)/2]; else printf "%.3f", (a[NR/2]+a[NR/2+1])/2}'; }

case $CACHE in
readback)
	log "warm-up: dd iflag=nocache (drop the file's cached pages), then cat $F > /dev/null"
	dd if="$F" iflag=nocache count=0 status=none
	cache_note="dropped from the page cache (\`dd iflag=nocache count=0\`) and read back once (\`cat\`) before the first run, as \`spate bench io\` does for warm runs"
	;;
asis)
	log "warm-up: cat $F > /dev/null"
	cache_note="read once (\`cat\`) before the first run, its cached pages left as they were"
	;;
*)
	echo "run.sh: CACHE must be readback or asis, not $CACHE" >&2
	exit 2
	;;
esac
cat "$F" >/dev/null
resident=""
if command -v fincore >/dev/null; then
	resident=$(fincore -b -n -o RES "$F" 2>/dev/null | awk -v b="$BYTES" '{printf "%.0f%%", 100*$1/b}' || true)
	log "page cache holds $resident of the file"
fi
VERSIONS=$(versions)

for q in a b c d e f; do
	[[ " $QUERIES " == *" $q "* ]] || continue
	log "query $q: ${LOGSQL[$q]}"
	maxr=$REPEAT
	((REPEAT_JQ > maxr)) && maxr=$REPEAT_JQ
	# Rounds are interleaved over the tools, so that drift on a busy machine
	# spreads over all of them.
	for ((r = 1; r <= maxr; r++)); do
		for entry in "${ORDER[@]}"; do
			eq=${entry%%$'\t'*}
			tool=${entry#*$'\t'}
			[[ $eq == "$q" ]] || continue
			wanted "$q" "$tool" || continue
			n=$REPEAT
			[[ $(toolkey "$tool") == jq ]] && n=$REPEAT_JQ
			((r <= n)) || continue
			[[ -n ${RC[$entry]:-} ]] && continue  # failed once: don't retry
			if [[ $tool == spate && $spate_ok == 0 ]]; then RC[$entry]=127; NOTE[$entry]="not executable"; continue; fi
			run_one "$q" "$tool" "$r"
		done
	done
done

# ---------------------------------------------------------------- report
mdcode() { # a command as a Markdown code span in a table cell
	local s=$1
	s=${s//|/\\|}
	printf '`%s`' "$s"
}

echo "## spate vs peers, same file, same run"
echo
echo "$VERSIONS"
echo "- warm cache: the file was $cache_note${resident:+; page cache then held $resident of it}"
echo
echo "| query | tool | command | runs | median s | GB/s | CPU s | peak RSS MiB | result |"
echo "|---|---|---|---:|---:|---:|---:|---:|---|"
for q in a b c d e f; do
	[[ " $QUERIES " == *" $q "* ]] || continue
	first=1
	for entry in "${ORDER[@]}"; do
		eq=${entry%%$'\t'*}
		tool=${entry#*$'\t'}
		[[ $eq == "$q" ]] || continue
		wanted "$q" "$tool" || continue
		qcell=""
		if [[ $first == 1 ]]; then qcell="$q. $(mdcode "${LOGSQL[$q]}")"; first=0; fi
		cmdcell=$(mdcode "$(display "${CMD[$entry]}")")
		if [[ -n ${RC[$entry]:-} || -z ${TIMES[$entry]:-} ]]; then
			echo "| $qcell | ${tool//|/\\|} | $cmdcell | – | n/a | n/a | n/a | n/a | n/a (${NOTE[$entry]:-no run}) |"
			continue
		fi
		runs=$(wc -w <<<"${TIMES[$entry]}")
		med=$(median <<<"${TIMES[$entry]}")
		cpu=$(median <<<"${CPU[$entry]}")
		gbs=$(awk -v b="$BYTES" -v s="$med" 'BEGIN{ if (s > 0) printf "%.2f", b/s/1e9; else print "–" }')
		res=${SUM[$entry]}
		[[ ${HASH[$entry]} != - ]] && res="$res · md5 ${HASH[$entry]}"
		[[ -n ${NOTE[$entry]:-} ]] && res="$res (${NOTE[$entry]})"
		echo "| $qcell | ${tool//|/\\|} | $cmdcell | $runs | $med | $gbs | $cpu | ${RSS[$entry]} | ${res//|/\\|} |"
	done
done

echo
echo "### Do the answers agree?"
echo
for q in a b c d e f; do
	[[ " $QUERIES " == *" $q "* ]] || continue
	declare -A groups=()
	declare -a hashes=()
	for entry in "${ORDER[@]}"; do
		eq=${entry%%$'\t'*}
		tool=${entry#*$'\t'}
		[[ $eq == "$q" && -n ${HASH[$entry]:-} && ${HASH[$entry]} != - ]] || continue
		h=${HASH[$entry]}
		[[ -z ${groups[$h]:-} ]] && hashes+=("$h")
		groups[$h]+="${groups[$h]:+, }$tool"
	done
	if ((${#hashes[@]} == 0)); then
		echo "- $q: no answers"
	elif ((${#hashes[@]} == 1)); then
		t=${groups[${hashes[0]}]%%,*}
		echo "- $q: all agree (${groups[${hashes[0]}]}): ${SUM[$q$'\t'$t]}"
	else
		echo "- $q: **answers differ**:"
		for h in "${hashes[@]}"; do
			t=${groups[$h]%%,*}
			echo "  - ${groups[$h]}: ${SUM[$q$'\t'$t]} (md5 $h)"
		done
	fi
	unset groups hashes
done

cat <<'EOF'

Notes:
- Times are wall-clock medians over the runs, from the start of the process to its exit (process start-up included: ~0.1–0.2 s for python + duckdb). GB/s = file bytes / median seconds. CPU s = user + system (median). Peak RSS is GNU time's `%M` (max RSS of the largest process; for a pipeline, of its largest member, not the sum).
- `wc -l`, `rg` and `jq` use one core on one file; DuckDB and spate use all cores.
- rg maps the file with mmap, so its RSS counts the page-cache pages it has mapped (up to the file size); spate's mmap windows count the same way.
- The jq commands avoid jq 1.6's quadratic object updates in `reduce` (see the comment in run.sh); written the obvious way (`.[$x.path] += $x.bytes`), query f takes hours.
- rg counts *lines* whose text contains the pattern anywhere; LogsQL, DuckDB and jq look at one field. `rg -c timeout` also counts a "timeout" in a path, user agent or another field (`rg (msg only)` anchors it to the msg string), and `rg -c '"level":"error"'` assumes the exact spelling `"level":"error"` (no spaces). On files from `spate gen` they agree; on other files they need not.
- LogsQL `~"timeout"` is a regexp on `_msg`: spate maps the NDJSON `msg` field to `_msg`; DuckDB and jq read `msg`. All are case-sensitive.
- Missing fields: `count()` counts every matching line; `avg`, `quantile` and `sum` skip lines without a numeric value (SQL NULL, jq `type == "number"`).
- quantile(0.95): LogsQL (VictoriaLogs, spate) takes element floor(0.95·n) of all the group's values sorted, where a line without the field counts in n and sorts lowest (as an empty value). DuckDB's `quantile_disc(x, 0.95)` skips NULLs and takes element ceil(0.95·n)−1, a different value for about a third of the groups here; `logsql_quantile` in duckdb_query.py is a macro with LogsQL's definition, and the jq command spells it out.
- Query f filters `bytes:>=0` first: without it, paths seen only on lines without `bytes` sum to NaN, which LogsQL sorts above every number, and the top 10 is ten such paths in no fixed order.
- Comparison: numbers are rounded to 3 decimals (avg is a float sum whose last digits depend on the order of addition) and group-by rows are sorted before hashing (see normalize.py).
EOF
log "raw outputs: $OUT"
