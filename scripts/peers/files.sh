#!/usr/bin/env bash
# Compares `spate serve --files` with nginx serving the same files, on one
# machine in one run, with wrk (keep-alive, closed loop): a 100 MiB file at
# 1, 10 and 64 connections (MB/s) and a 4 KiB file at the same (requests/s),
# plus spate's peak RSS. For the 4 KiB file it also measures a bare net/http
# handler answering those bytes from memory (scripts/peers/httpmem): the
# ceiling of a Go server there. nginx runs with sendfile on, tcp_nopush on, access
# log off and one worker per CPU, as a tuned nginx would.
#
#   bash scripts/peers/files.sh                 # 5 s per run, ~2 min
#   DURATION=10s bash scripts/peers/files.sh
#
# Needs nginx and wrk (apt: nginx=1.22.1-9+deb12u11 wrk=4.1.0-3+b2); spate
# is built from this tree unless SPATE names a binary.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DURATION=${DURATION:-5s}
SP_PORT=${SP_PORT:-19461}
NG_PORT=${NG_PORT:-19462}
MEM_PORT=${MEM_PORT:-19463}
OUT=$(mktemp -d /tmp/spate-files.XXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	[[ -f $OUT/nginx.pid ]] && kill "$(cat "$OUT/nginx.pid")" 2>/dev/null || true
	rm -rf "$OUT"
}
trap cleanup EXIT
say() { echo "files: $*" >&2; }
command -v nginx >/dev/null && command -v wrk >/dev/null || { echo "files.sh needs nginx and wrk" >&2; exit 1; }

SPATE=${SPATE:-}
if [[ -z $SPATE ]]; then
	SPATE=$OUT/spate
	(cd "$ROOT" && go build -o "$SPATE" ./cmd/spate)
fi
(cd "$ROOT" && go build -o "$OUT/httpmem" ./scripts/peers/httpmem)
mkdir -p "$OUT/www"
head -c $((100 << 20)) /dev/urandom >"$OUT/www/big.bin"
head -c 4096 /dev/urandom >"$OUT/www/small.bin"
# nginx's workers run as another user: they must be able to read the files.
chmod 755 "$OUT" "$OUT/www"
chmod 644 "$OUT"/www/*

cat >"$OUT/nginx.conf" <<NGINX
worker_processes $(nproc);
pid $OUT/nginx.pid;
error_log $OUT/nginx.err warn;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile on;
	tcp_nopush on;
	keepalive_requests 1000000;
	client_body_temp_path $OUT/tmp; proxy_temp_path $OUT/tmp; fastcgi_temp_path $OUT/tmp;
	uwsgi_temp_path $OUT/tmp; scgi_temp_path $OUT/tmp;
	types { application/octet-stream bin; }
	server {
		listen 127.0.0.1:$NG_PORT;
		location /files/ { alias $OUT/www/; }
	}
}
NGINX
mkdir -p "$OUT/tmp"
nginx -c "$OUT/nginx.conf" -p "$OUT"
"$SPATE" serve --files "$OUT/www" --listen "127.0.0.1:$SP_PORT" --log-level warn 2>"$OUT/spate.err" &
SPID=$!
PIDS+=("$SPID")
"$OUT/httpmem" -listen "127.0.0.1:$MEM_PORT" -file "$OUT/www/small.bin" &
PIDS+=("$!")
sleep 1
for port in "$SP_PORT" "$NG_PORT"; do
	for f in big.bin small.bin; do
		code=$(curl -sS -o "$OUT/check" -w '%{http_code}' "http://127.0.0.1:$port/files/$f")
		[[ $code == 200 ]] && cmp -s "$OUT/check" "$OUT/www/$f" || { echo "files.sh: port $port gave $code for $f" >&2; exit 1; }
	done
done

# run PORT FILE CONNS: prints "requests/s MB/s p99-ms"
run() {
	local threads=$(($3 < 2 ? 1 : 2))
	wrk -t"$threads" -c"$3" -d"$DURATION" --latency "http://127.0.0.1:$1/files/$2" >"$OUT/wrk.out" 2>&1
	if grep -q "Non-2xx" "$OUT/wrk.out"; then
		echo "files.sh: port $1 answered errors for $2:" >&2
		cat "$OUT/wrk.out" >&2
		exit 1
	fi
	awk '
		/Requests\/sec/ { rps = $2 }
		/Transfer\/sec/ { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[A-Za-z]+/, "", v)
			m = (u == "GB" ? 1024 : u == "MB" ? 1 : u == "KB" ? 1 / 1024 : 1 / 1048576); mbs = v * m * 1.048576 }
		/ 99%/ { p = $2; if (p ~ /us$/) { sub(/us/, "", p); p /= 1000 } else if (p ~ /ms$/) { sub(/ms/, "", p) } else if (p ~ /s$/) { sub(/s/, "", p); p *= 1000 }; p99 = p }
		END { printf "%.0f %.1f %.2f\n", rps, mbs, p99 }' "$OUT/wrk.out"
}
echo "| file | connections | spate | nginx | spate / nginx | p99 spate / nginx (ms) | net/http from memory | its / nginx |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for f in big.bin small.bin; do
	for c in 1 10 64; do
		say "$f, $c connections"
		read -r s_rps s_mbs s_p99 < <(run "$SP_PORT" "$f" "$c")
		read -r n_rps n_mbs n_p99 < <(run "$NG_PORT" "$f" "$c")
		if [[ $f == big.bin ]]; then
			echo "| 100 MiB | $c | $s_mbs MB/s | $n_mbs MB/s | $(awk -v a="$s_mbs" -v b="$n_mbs" 'BEGIN { printf "%.2f", a / b }') | $s_p99 / $n_p99 | | |"
		else
			read -r m_rps _ _ < <(run "$MEM_PORT" "$f" "$c")
			echo "| 4 KiB | $c | $s_rps req/s | $n_rps req/s | $(awk -v a="$s_rps" -v b="$n_rps" 'BEGIN { printf "%.2f", a / b }') | $s_p99 / $n_p99 | $m_rps req/s | $(awk -v a="$m_rps" -v b="$n_rps" 'BEGIN { printf "%.2f", a / b }') |"
		fi
	done
done
echo
echo "spate peak RSS: $(awk '/VmHWM/ { printf "%.0f MiB", $2 / 1024 }' "/proc/$SPID/status"); $(nproc) cores; $(nginx -v 2>&1 | cut -d' ' -f3); wrk $DURATION per run."
