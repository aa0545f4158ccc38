#!/usr/bin/env bash
# Times `spate get` against curl and aria2c downloading the same file from
# `spate serve --files` on loopback, alternating the tools round by round,
# each file checked by sha256 and dropped from the page cache between
# rounds (the served copy stays cached). Also interrupts a spate get
# midway and reports how much the rerun fetched.
#
#   bash scripts/peers/get.sh                  # 512 MiB, 3 rounds
#   SIZE_MIB=1024 ROUNDS=5 bash scripts/peers/get.sh
#
# Needs curl; aria2c is used when installed (apt: aria2=1.36.0-1). spate is
# built from this tree unless SPATE names a binary.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SIZE_MIB=${SIZE_MIB:-512}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-19471}
OUT=$(mktemp -d /tmp/spate-get.XXXX)
SPID=
cleanup() { [[ -n $SPID ]] && kill "$SPID" 2>/dev/null; rm -rf "$OUT"; }
trap cleanup EXIT
SPATE=${SPATE:-}
if [[ -z $SPATE ]]; then
	SPATE=$OUT/spate
	(cd "$ROOT" && go build -o "$SPATE" ./cmd/spate)
fi
mkdir -p "$OUT/www" "$OUT/dl"
head -c $((SIZE_MIB << 20)) /dev/urandom >"$OUT/www/big.bin"
want=$(sha256sum "$OUT/www/big.bin" | cut -d' ' -f1)
"$SPATE" serve --files "$OUT/www" --listen "127.0.0.1:$PORT" --log-level warn 2>"$OUT/spate.err" &
SPID=$!
sleep 1
URL=http://127.0.0.1:$PORT/files/big.bin
cat "$OUT/www/big.bin" >/dev/null

tools=(curl spate-get)
command -v aria2c >/dev/null && tools+=(aria2c)
declare -A times
fetch() { # TOOL -> seconds
	local f=$OUT/dl/big.bin start end
	rm -f "$f" "$f.spate-get" "$f.aria2"
	sync
	echo 1 >/proc/sys/vm/drop_caches 2>/dev/null || true
	start=$(date +%s.%N)
	case $1 in
	curl) curl -sS -o "$f" "$URL" ;;
	spate-get) "$SPATE" get -o "$f" --connections 4 "$URL" ;;
	aria2c) aria2c -q -x4 -s4 -k1M --file-allocation=none --allow-overwrite=true -d "$OUT/dl" -o big.bin "$URL" ;;
	esac
	end=$(date +%s.%N)
	[[ $(sha256sum "$f" | cut -d' ' -f1) == "$want" ]] || { echo "get.sh: $1 fetched a different file" >&2; exit 1; }
	awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}
for r in $(seq "$ROUNDS"); do
	for t in "${tools[@]}"; do
		s=$(fetch "$t")
		times[$t]+="$s "
		echo "get: round $r $t ${s}s" >&2
	done
done
echo "| tool | seconds per round (${SIZE_MIB} MiB) | best MB/s |"
echo "|---|---|---:|"
for t in "${tools[@]}"; do
	best=$(tr ' ' '\n' <<<"${times[$t]}" | grep . | sort -n | head -1)
	printf '| %s | %s| %.0f |\n' "$t" "${times[$t]}" "$(awk -v m="$SIZE_MIB" -v s="$best" 'BEGIN { print m * 1048576 / s / 1e6 }')"
done

# Interrupted: stop spate get once about half is on disk, then resume.
f=$OUT/dl/big.bin
rm -f "$f" "$f.spate-get"
"$SPATE" get -o "$f" --connections 4 --chunk-size 8MiB "$URL" &
gp=$!
while [[ ! -f $f.spate-get ]] || (($(du -k "$f" | cut -f1) < SIZE_MIB * 512)); do
	kill -0 "$gp" 2>/dev/null || break
	sleep 0.01
done
kill -INT "$gp" 2>/dev/null || true
wait "$gp" 2>/dev/null || true
served0=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^spate_files_sent_bytes_total\{encoding="identity"\}/ { print $2 }')
"$SPATE" get -o "$f" --connections 4 --chunk-size 8MiB "$URL" 2>"$OUT/resume.err"
served1=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^spate_files_sent_bytes_total\{encoding="identity"\}/ { print $2 }')
[[ $(sha256sum "$f" | cut -d' ' -f1) == "$want" ]] || { echo "get.sh: the resumed file differs" >&2; exit 1; }
printf 'resume: the rerun fetched %.1f MiB of %d MiB in 8 MiB chunks; it said: %s\n' \
	"$(awk -v a="$served0" -v b="$served1" 'BEGIN { print (b - a) / 1048576 }')" "$SIZE_MIB" "$(cat "$OUT/resume.err")"
