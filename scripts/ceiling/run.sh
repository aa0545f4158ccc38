#!/usr/bin/env bash
# run.sh: measure simdjson's NDJSON validation speed on this machine, the
# ceiling for spate's full-validation queries (see README.md here).
#
# usage: scripts/ceiling/run.sh FILE [MODE...]
#   FILE   an NDJSON file, such as one from `spate gen --size 2GiB`
#   MODE   dom, dom-path, validate, ondemand or memchr (default: all five)
#
# It installs libsimdjson-dev (Debian's 3.0.1-1) and g++ if missing, builds
# simdjson-validate into $OUT (default /tmp/spate-ceiling), reads FILE into
# the page cache, and runs each mode REPEAT times (default 3) in one process
# over the whole file and in two processes over its halves at once. It
# prints every run and, per mode, the best GB/s (1e9 bytes/s) of each.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
if [[ $# -lt 1 ]]; then
	usage >&2
	exit 2
fi
if [[ $1 == -h || $1 == --help ]]; then
	usage
	exit 0
fi
file=$1
shift
modes=("$@")
[[ ${#modes[@]} -gt 0 ]] || modes=(dom dom-path validate ondemand memchr)
repeat=${REPEAT:-3}
out=${OUT:-/tmp/spate-ceiling}
here=$(cd "$(dirname "$0")" && pwd)

if [[ ! -f /usr/include/simdjson.h || ! -f /usr/include/absl/container/flat_hash_map.h ]] || ! command -v g++ >/dev/null; then
	apt-get update -qq
	apt-get install -y -qq libsimdjson-dev=3.0.1-1 libabsl-dev=20220623.1-1+deb12u2 g++ >/dev/null
fi
mkdir -p "$out"
g++ -O3 -march=native -o "$out/simdjson-validate" "$here/simdjson-validate.cpp" \
	-lsimdjson -labsl_hash -labsl_city -labsl_low_level_hash -labsl_raw_hash_set
bin=$out/simdjson-validate

size=$(stat -c %s "$file")
half=$((size / 2))
cat "$file" >/dev/null

# gbps BYTES SECONDS
gbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.3f", b / s / 1e9 }'; }

for mode in "${modes[@]}"; do
	best1=0 best2=0
	for _ in $(seq "$repeat"); do
		t0=$EPOCHREALTIME
		"$bin" "$mode" "$file" >"$out/one.txt"
		t1=$EPOCHREALTIME
		g=$(gbps "$size" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
		echo "$mode 1 process:   $g GB/s  ($(head -1 "$out/one.txt"))"
		best1=$(awk -v a="$best1" -v b="$g" 'BEGIN { print (b > a ? b : a) }')

		t0=$EPOCHREALTIME
		"$bin" "$mode" "$file" 0 "$half" >"$out/a.txt" &
		p=$!
		"$bin" "$mode" "$file" "$half" "$size" >"$out/b.txt"
		wait "$p"
		t1=$EPOCHREALTIME
		g=$(gbps "$size" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
		echo "$mode 2 processes: $g GB/s"
		best2=$(awk -v a="$best2" -v b="$g" 'BEGIN { print (b > a ? b : a) }')
	done
	echo "== $mode: best $best1 GB/s in 1 process, $best2 GB/s in 2 (wall time, process start included)"
done
