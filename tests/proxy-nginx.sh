# SPDX-License-Identifier: LGPL-2.1-or-later
# A real nginx (Debian's package) in front of a small S3 stand-in, both in
# a network namespace of their own (`unshare -n`: nothing on the host
# changes; nginx runs with its own prefix, configuration, pid and logs in
# $TMP and never reads the host's /etc/nginx):
#  1. nginx's default body cap: hosttune's audit of the configuration names
#     it critical before any upload is tried; a 9 MiB PUT gets 413 from
#     nginx; with the directive hosttune prints written where it says, the
#     same PUT reaches the stand-in whole;
#  2. proxy_set_header Host $host on port 8080: hosttune calls it critical,
#     and the stand-in gets "s3.test", the client's "s3.test:8080" without
#     its port;
#  3. no upstream keepalive: 100 requests through nginx open 100
#     connections to the stand-in (counted as it accepts them); with the
#     fix hosttune prints (an upstream block with keepalive, HTTP/1.1,
#     Connection ""), at most 10.
# Needs root, unshare, nginx and python3; skipped ("# SKIP") otherwise.
. "${HT_TESTS_DIR:-$(dirname "$0")}/lib.sh"

skip() {
	echo "# SKIP: $1"
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (unshare -n)"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || skip "nginx not installed (tools/install-deps --test installs nginx-light)"
# Debian's python3 (a python3 earlier in PATH may be a wrapper that takes a second to start).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || skip "python3 not installed"
unshare -n true 2>/dev/null || skip "unshare -n refused"

# The audited host: the field's Garage VM with a garage.toml (S3 on 3900)
# and the nginx configuration nginx itself runs from.
R=$TMP/root
cp -a "$FIXTURES/garage-vm/root" "$R"
mkdir -p "$R/etc/nginx/sites-enabled" "$TMP/run"
cat >"$R/etc/garage.toml" <<'EOF'
metadata_dir = "/var/lib/garage/meta"
data_dir = "/var/lib/garage/data"
rpc_bind_addr = "[::]:3901"
[s3_api]
api_bind_addr = "127.0.0.1:3900"
s3_region = "garage"
EOF
# nginx.conf: relative includes, resolved against its own directory by
# nginx (-c) and against /etc/nginx by hosttune (--root).
cat >"$R/etc/nginx/nginx.conf" <<'EOF'
user root;
worker_processes 1;
daemon off;
events {
	worker_connections 256;
}
http {
	access_log off;
	include sites-enabled/*;
}
EOF
# The site as many write it: Host $host, no body cap, proxy_pass to an address.
cat >"$R/etc/nginx/sites-enabled/s3" <<'EOF'
server {
	listen 127.0.0.1:8080;
	server_name s3.test;
	location / {
		proxy_set_header Host $host;
		proxy_pass http://127.0.0.1:3900;
	}
}
EOF

# The stand-in: accepts PUT (reads the body whole) and GET, records each
# accepted connection in conns, each request's Host and body size in log.
cat >"$TMP/s3.py" <<'EOF'
import http.server, sys, threading
tmp = sys.argv[1]
lock = threading.Lock()
conns = 0
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def setup(self):
        global conns
        with lock:
            conns += 1
            with open(tmp + "/conns", "w") as f:
                f.write("%d\n" % conns)
        super().setup()
    def reply(self, n):
        with lock, open(tmp + "/log", "a") as f:
            f.write("%s %s %d\n" % (self.command, self.headers.get("Host", "-"), n))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def do_PUT(self):
        left = int(self.headers.get("Content-Length", "0"))
        n = 0
        while left > 0:
            b = self.rfile.read(min(left, 65536))
            if not b:
                break
            n += len(b)
            left -= len(b)
        self.reply(n)
    def do_GET(self):
        self.reply(0)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 3900), H)
open(tmp + "/s3.ready", "w").close()
s.serve_forever()
EOF
# The client: put SIZE HOST prints the status; get N HOST prints the
# statuses of N requests, one connection each.
cat >"$TMP/client.py" <<'EOF'
import http.client, sys
def req(method, host, body=None):
    c = http.client.HTTPConnection("127.0.0.1", 8080, timeout=10)
    c.putrequest(method, "/bucket/key", skip_host=True)
    c.putheader("Host", host)
    c.putheader("Content-Length", str(len(body) if body else 0))
    c.putheader("Connection", "close")
    c.endheaders()
    if body:
        try:
            c.send(body)
        except OSError:
            pass
    r = c.getresponse()
    r.read()
    c.close()
    return r.status
if sys.argv[1] == "put":
    print(req("PUT", sys.argv[3], b"x" * int(sys.argv[2])))
else:
    print(" ".join(sorted(set(str(req("GET", sys.argv[3])) for _ in range(int(sys.argv[2]))))))
EOF

# run.sh STEP: in the namespace, the stand-in and nginx up, then STEP's requests.
cat >"$TMP/run.sh" <<'EOF'
set -u
ip link set lo up || exit 10
rm -f "$TMP/s3.ready" "$TMP/conns" "$TMP/log"
"$PY" "$TMP/s3.py" "$TMP" 2>"$TMP/s3.err" &
s3=$!
"$NGINX" -p "$TMP/run/" -c "$R/etc/nginx/nginx.conf" -e "$TMP/run/error.log" \
	-g "pid $TMP/run/nginx.pid;" 2>"$TMP/nginx.err" &
ngx=$!
# Both end with the script, on every exit: by their PIDs only.
trap 'kill "$ngx" "$s3" 2>/dev/null; wait "$ngx" "$s3" 2>/dev/null' EXIT
i=0
until [ -e "$TMP/s3.ready" ] && "$PY" -c 'import socket; socket.create_connection(("127.0.0.1", 8080), 1).close()' 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 100 ] || exit 12
	sleep 0.1
done
# The probe above is nginx's client side only: no connection to the stand-in yet.
case $1 in
put) "$PY" "$TMP/client.py" put 9437184 s3.test:8080 >"$TMP/put.out" ;;
conns) "$PY" "$TMP/client.py" get 100 s3.test:8080 >"$TMP/get.out" ;;
esac
EOF
# netns STEP: run.sh in a namespace of its own.
netns() {
	TMP=$TMP R=$R PY=$PY NGINX=$NGINX unshare -n sh "$TMP/run.sh" "$1"
}

# f RULE FIELD: of the audit's only path, nginx-1
f() { jget "$TMP/a.json" ".findings[] | select(.rule == \"$1\" and .instance == \"nginx-1\") | $2"; }
audit() {
	ht --root "$R" --profile garage --format json audit >"$TMP/a.json"
}

# ---- 1. the body cap ----
audit
expect_eq "before any upload: the body cap is critical" critical "$(f proxy.body_size .severity)"
remedy=$(f proxy.body_size .remedy)
expect_contains "the fix names the location's proxy_pass line" \
	"in the location of /etc/nginx/sites-enabled/s3:6" "$remedy"
# The directive between the quotes of 'write "...;"'.
directive=$(printf '%s\n' "$remedy" | sed -n 's/^write "\([^"]*;\)".*/\1/p')
expect_eq "the directive printed: ceil(8 MiB / 1 MiB) + 1 = 9m" "client_max_body_size 9m;" "$directive"

netns put
expect_eq "the namespace ran" 0 $?
# 9437184 bytes > nginx's 1048576: 413 from nginx, nothing reaches the stand-in.
expect_eq "9 MiB PUT with the default cap: 413" 413 "$(cat "$TMP/put.out")"
expect_eq "the stand-in saw no PUT" "" "$(grep PUT "$TMP/log" 2>/dev/null)"

# The directive written where hosttune says: in the location of line 6.
sed -i "s|^\t\tproxy_pass http://127.0.0.1:3900;|\t\t$directive\n&|" "$R/etc/nginx/sites-enabled/s3"
netns put
expect_eq "9 MiB PUT with the printed fix: 200" 200 "$(cat "$TMP/put.out")"
# 9 MiB = 9437184 bytes reached the stand-in whole.
expect_eq "the stand-in got all 9437184 bytes" "PUT s3.test 9437184" "$(grep PUT "$TMP/log")"
audit
expect_eq "with the fix: the body cap is ok" ok "$(f proxy.body_size .severity)"

# ---- 2. Host without its port ----
# The client sent "s3.test:8080" (above); $host is the name alone.
expect_eq "Host \$host on 8080: critical" critical "$(f proxy.host_header .severity)"
expect_eq "the stand-in got the Host without the client's port" "s3.test" \
	"$(awk '$1 == "PUT" { print $2 }' "$TMP/log")"

# ---- 3. connections to the store without and with keepalive ----
netns conns
expect_eq "100 requests through nginx: all 200" 200 "$(cat "$TMP/get.out")"
# nginx's defaults (HTTP/1.0, Connection: close): one connection a request.
expect_eq "without keepalive: 100 connections to the stand-in" 100 "$(cat "$TMP/conns")"
expect_eq "without keepalive: hosttune says so" warning "$(f proxy.upstream_keepalive .severity)"
remedy=$(f proxy.upstream_keepalive .remedy)
expect_contains "the keepalive fix: an upstream block" "keepalive 16;" "$remedy"
expect_contains "the keepalive fix: HTTP/1.1" '"proxy_http_version 1.1;"' "$remedy"
# The fix as printed: the upstream block with keepalive 16, HTTP/1.1, Connection "".
cat >"$R/etc/nginx/sites-enabled/s3" <<'EOF'
upstream s3store {
	server 127.0.0.1:3900;
	keepalive 16;
}
server {
	listen 127.0.0.1:8080;
	server_name s3.test;
	location / {
		proxy_set_header Host $http_host;
		proxy_set_header Connection "";
		proxy_http_version 1.1;
		client_max_body_size 9m;
		proxy_pass http://s3store;
	}
}
EOF
audit
expect_eq "with the fix: keepalive ok" ok "$(f proxy.upstream_keepalive .severity)"
expect_eq "with the fix: Host ok" ok "$(f proxy.host_header .severity)"
netns conns
expect_eq "with keepalive: 100 requests, all 200" 200 "$(cat "$TMP/get.out")"
n=$(cat "$TMP/conns")
# One worker, sequential requests: the first connection is reused; at most 10 allowed.
if [ "$n" -ge 1 ] && [ "$n" -le 10 ]; then ok "with keepalive: $n connections (at most 10)"
else not_ok "with keepalive: at most 10 connections" "got: $n"; fi
expect_eq "with keepalive: Host keeps the port" "s3.test:8080" \
	"$(awk '$1 == "GET" { print $2 }' "$TMP/log" | sort -u)"

finish
