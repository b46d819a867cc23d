#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The reverse proxy in front of the store, from --root trees laid out as
# Debian's nginx package (sites-available linked from sites-enabled, conf.d),
# Garage's cookbook (doc/book/cookbook/reverse-proxy.md: upstream blocks, a
# server on 443 with http2) and nginx-proxy (conf.d/default.conf generated
# with includes of vhost.d/NAME and vhost.d/NAME_location): each proxy rule's
# finding names the file:line that sets the value, or nginx's default.
# The hosts are the field's Garage VM (tests/fixtures/garage-vm) with a
# garage.toml (S3 on 3900, web on 3902) and an nginx configuration added.
. "$(dirname "$0")/lib.sh"

GARAGE_TOML='metadata_dir = "/var/lib/garage/meta"
data_dir = "/var/lib/garage/data"
rpc_bind_addr = "[::]:3901"
[s3_api]
api_bind_addr = "[::]:3900"
s3_region = "garage"
[s3_web]
bind_addr = "[::]:3902"
root_domain = ".web.garage.tld"'

# host NAME: a copy of the Garage VM with garage.toml, in $TMP/NAME; prints its path.
host() {
	cp -a "$FIXTURES/garage-vm/root" "$TMP/$1"
	mkdir -p "$TMP/$1/etc/nginx"
	printf '%s\n' "$GARAGE_TOML" >"$TMP/$1/etc/garage.toml"
	echo "$TMP/$1"
}

# audit ROOT [ARGS...]: the JSON audit with --profile garage into $TMP/a.json
audit() {
	r=$1
	shift
	ht --root "$r" --profile garage --format json "$@" audit >"$TMP/a.json"
}

# f RULE INSTANCE FIELD
f() { jget "$TMP/a.json" ".findings[] | select(.rule == \"$1\" and .instance == \"$2\") | $3"; }

# ---- 1. Debian's package with Garage's cookbook configuration ----
R=$(host debian)
cat >"$R/etc/nginx/nginx.conf" <<'EOF'
user www-data;
worker_processes auto;
pid /run/nginx.pid;
include /etc/nginx/modules-enabled/*.conf;

events {
	worker_connections 768;
}

http {
	sendfile on;
	include /etc/nginx/mime.types;
	include /etc/nginx/conf.d/*.conf;
	include /etc/nginx/sites-enabled/*;
}
EOF
mkdir -p "$R/etc/nginx/modules-enabled" "$R/etc/nginx/conf.d" "$R/etc/nginx/sites-available" \
	"$R/etc/nginx/sites-enabled"
printf 'types {\n\ttext/html html;\n}\n' >"$R/etc/nginx/mime.types"
cat >"$R/etc/nginx/sites-available/default" <<'EOF'
server {
	listen 80 default_server;
	root /var/www/html;
	location / {
		try_files $uri $uri/ =404;
	}
}
EOF
# The cookbook's garage.conf: lines counted below.
cat >"$R/etc/nginx/sites-available/garage.conf" <<'EOF'
upstream s3_backend {
  server 127.0.0.1:3900;
  server 192.168.1.3:3900;
}

upstream web_backend {
  server 127.0.0.1:3902;
}

server {
  listen [::]:443 http2 ssl;
  ssl_certificate /tmp/garage.crt;
  ssl_certificate_key /tmp/garage.key;
  server_name *.s3.garage.tld s3.garage.tld;

  location / {
    proxy_pass http://s3_backend;
    proxy_set_header Host $host;
  }
}

server {
  listen [::]:443 http2 ssl;
  server_name *.web.garage.tld;

  location / {
    proxy_pass http://web_backend;
  }
}
EOF
ln -s ../sites-available/default "$R/etc/nginx/sites-enabled/default"
ln -s /etc/nginx/sites-available/garage.conf "$R/etc/nginx/sites-enabled/garage.conf"

ht --root "$R" facts >"$TMP/d.facts"
expect_eq "two paths to the store, in the configuration's order" \
	'proxy.list = "nginx-1 nginx-2" from /etc/nginx/nginx.conf' "$(grep '^proxy.list = ' "$TMP/d.facts")"
expect_eq "the S3 path: its proxy_pass, through the link in sites-enabled" \
	'proxy.nginx-1.location = "/etc/nginx/sites-enabled/garage.conf:17" from /etc/nginx/sites-enabled/garage.conf:17' \
	"$(grep '^proxy.nginx-1.location = ' "$TMP/d.facts")"
expect_eq "the upstream's server on the S3 port" \
	'proxy.nginx-1.upstream = "127.0.0.1:3900" from /etc/nginx/sites-enabled/garage.conf:17' \
	"$(grep '^proxy.nginx-1.upstream = ' "$TMP/d.facts")"
expect_eq "the web path reaches 3902" \
	'proxy.nginx-2.store_port = 3902 from /etc/nginx/sites-enabled/garage.conf:27' \
	"$(grep '^proxy.nginx-2.store_port = ' "$TMP/d.facts")"
expect_eq "listen [::]:443 http2 ssl: port 443" \
	'proxy.nginx-1.listen = 443 from /etc/nginx/sites-enabled/garage.conf:11' \
	"$(grep '^proxy.nginx-1.listen = ' "$TMP/d.facts")"

audit "$R"
# No client_max_body_size anywhere: nginx's 1 MiB against parts of 8 MiB.
expect_eq "cookbook: body cap critical" critical "$(f proxy.body_size nginx-1 .severity)"
expect_eq "cookbook: body cap 1 MiB (1048576)" 1048576 "$(f proxy.body_size nginx-1 .current)"
# ceil(8 MiB / 1 MiB) + 1 = 9 MiB = 9437184 bytes
expect_eq "cookbook: 9 MiB recommended" 9437184 "$(f proxy.body_size nginx-1 .recommended)"
expect_contains "cookbook: the cap's source is nginx's default" \
	"from nginx's default client_max_body_size 1m" "$(f proxy.body_size nginx-1 .explanation)"
expect_contains "cookbook: the directive to write and where" \
	'write "client_max_body_size 9m;" in the location of /etc/nginx/sites-enabled/garage.conf:17' \
	"$(f proxy.body_size nginx-1 .remedy)"
# $host on 443 with ssl: clients leave 443 out of what they sign.
expect_eq "cookbook: Host \$host on 443 is fine" ok "$(f proxy.host_header nginx-1 .severity)"
expect_contains "cookbook: Host's source line" "from /etc/nginx/sites-enabled/garage.conf:18" \
	"$(f proxy.host_header nginx-1 .explanation)"
# The web path sets no Host: nginx sends $proxy_host, web_backend.
expect_eq "cookbook web: no Host line, \$proxy_host critical" critical \
	"$(f proxy.host_header nginx-2 .severity)"
expect_eq "cookbook web: current \$proxy_host" '$proxy_host' "$(f proxy.host_header nginx-2 .current)"
expect_eq "cookbook web: the web endpoint's case (no bucket by that name)" web \
	"$(f proxy.host_header nginx-2 .case)"
expect_contains "cookbook web: the Host fix" \
	'write "proxy_set_header Host $http_host;" in the location of /etc/nginx/sites-enabled/garage.conf:27' \
	"$(f proxy.host_header nginx-2 .remedy)"
# No keepalive in s3_backend; the Garage VM's table is 4096 entries and TIME_WAIT 120 s:
# 200 x 3 x 120 = 72000 hop entries, x 2 = 144000 >= 75% of 4096 -> warning.
expect_eq "cookbook: no keepalive, warning on a 4096-entry table" warning \
	"$(f proxy.upstream_keepalive nginx-1 .severity)"
expect_contains "cookbook: keepalive's source is the upstream block" \
	"no keepalive in upstream s3_backend (/etc/nginx/sites-enabled/garage.conf:1)" \
	"$(f proxy.upstream_keepalive nginx-1 .explanation)"
expect_contains "cookbook: 72000 hop entries" "(72000)" "$(f proxy.upstream_keepalive nginx-1 .explanation)"
# A default that costs disk writes but fails nothing: info (no counter shows harm).
expect_eq "cookbook: request buffering on by default, info" info \
	"$(f proxy.request_buffering nginx-1 .severity)"
expect_eq "cookbook: http2 toward clients, info" info "$(f proxy.http2 nginx-1 .severity)"
expect_contains "cookbook: http2's line" "from /etc/nginx/sites-enabled/garage.conf:11" \
	"$(f proxy.http2 nginx-1 .explanation)"
# The garage profile sets no upstream_pause: not judged.
expect_eq "cookbook: idle timeout not judged without a pause" "" \
	"$(f proxy.idle_timeout nginx-1 '.severity | select(. != "n/a")')"
# A facts file carries the paths: audited elsewhere, the same verdicts.
verdicts() { jget "$TMP/a.json" '[.findings[] | select(.rule | startswith("proxy.")) | "\(.rule)[\(.instance)] \(.severity)"] | join(" ")'; }
want=$(verdicts)
ht --root "$R" --profile garage facts >"$TMP/d.facts"
ht --facts "$TMP/d.facts" --profile garage --format json audit >"$TMP/a.json"
expect_eq "from a facts file: the same proxy verdicts" "$want" "$(verdicts)"
# With a 9 MiB cap the part fits: 9m >= 8 MiB.
sed -i 's|^  location / {$|  client_max_body_size 9m;\n  location / {|' "$R/etc/nginx/sites-available/garage.conf"
audit "$R"
expect_eq "cookbook with 9m: body cap ok" ok "$(f proxy.body_size nginx-1 .severity)"
expect_contains "cookbook with 9m: from the server's line" \
	"from /etc/nginx/sites-enabled/garage.conf:16" "$(f proxy.body_size nginx-1 .explanation)"

# ---- 2. nginx-proxy: conf.d/default.conf and vhost.d ----
R=$(host nginxproxy)
mkdir -p "$R/etc/nginx/conf.d" "$R/etc/nginx/vhost.d"
cat >"$R/etc/nginx/nginx.conf" <<'EOF'
events {
    worker_connections 1024;
}
http {
    include /etc/nginx/conf.d/*.conf;
}
EOF
# nginx-proxy's proxy settings, at the http level (its nginx.tmpl).
cat >"$R/etc/nginx/conf.d/00-proxy.conf" <<'EOF'
proxy_http_version 1.1;
proxy_set_header Host $http_host;
proxy_set_header Connection $proxy_connection;
EOF
cat >"$R/etc/nginx/conf.d/default.conf" <<'EOF'
upstream s3.example.com {
    # garage
    server 172.17.0.2:3900;
    keepalive 2;
}
server {
    server_name s3.example.com;
    listen 80;
    include /etc/nginx/vhost.d/s3.example.com;
    location / {
        proxy_pass http://s3.example.com;
        include /etc/nginx/vhost.d/s3.example.com_location;
    }
}
EOF
printf '# a cap for uploads\nclient_max_body_size 5m;\n' >"$R/etc/nginx/vhost.d/s3.example.com"
printf 'proxy_set_header X-Forwarded-Proto $scheme;\nproxy_read_timeout 30s;\n' \
	>"$R/etc/nginx/vhost.d/s3.example.com_location"
audit "$R" --set workload.upstream_pause=120s
expect_eq "nginx-proxy: 5m below 8 MiB parts, critical" critical "$(f proxy.body_size nginx-1 .severity)"
# 5m = 5 x 1048576 = 5242880
expect_eq "nginx-proxy: current 5242880" 5242880 "$(f proxy.body_size nginx-1 .current)"
expect_contains "nginx-proxy: the cap's vhost.d line" "from /etc/nginx/vhost.d/s3.example.com:2" \
	"$(f proxy.body_size nginx-1 .explanation)"
# The _location file's proxy_set_header replaces the http level's list: no Host there.
expect_eq "nginx-proxy: Host lost to inheritance, critical" critical \
	"$(f proxy.host_header nginx-1 .severity)"
expect_contains "nginx-proxy: names the line that hides the http level's Host" \
	"the proxy_set_header lines at /etc/nginx/vhost.d/s3.example.com_location:1 replace every one above them" \
	"$(f proxy.host_header nginx-1 .explanation)"
# keepalive 2, HTTP/1.1, but Connection $proxy_connection (not ""): not kept.
expect_eq "nginx-proxy: Connection not cleared, keepalive not in effect" warning \
	"$(f proxy.upstream_keepalive nginx-1 .severity)"
expect_contains "nginx-proxy: Connection's source is nginx's default, hidden too" \
	'Connection "close" (from nginx'"'"'s default Connection close' \
	"$(f proxy.upstream_keepalive nginx-1 .explanation)"
# 30 s of the _location file against a pause of 120 s.
expect_eq "nginx-proxy: 30 s below a 120 s pause" warning "$(f proxy.idle_timeout nginx-1 .severity)"
expect_eq "nginx-proxy: the shortest timer is 30" 30 "$(f proxy.idle_timeout nginx-1 .current)"
expect_contains "nginx-proxy: the timer's line" "from /etc/nginx/vhost.d/s3.example.com_location:2" \
	"$(f proxy.idle_timeout nginx-1 .explanation)"
expect_contains "nginx-proxy: the timeout fix" 'write "proxy_read_timeout 120s;"' \
	"$(f proxy.idle_timeout nginx-1 .remedy)"

# ---- 3. inheritance: location over server over http, a port that Host loses ----
R=$(host inherit)
cat >"$R/etc/nginx/nginx.conf" <<'EOF'
events {}
http {
    client_max_body_size 0;
    proxy_request_buffering off;
    proxy_http_version 1.1;
    upstream garage { server [::1]:3900; keepalive 16; }
    server {
        listen 8443 ssl;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        location /big/ {
            client_max_body_size 2m;
            location /big/nested/ {
                proxy_pass http://garage;
            }
        }
        location / {
            proxy_request_buffering on;
            proxy_pass http://[::1]:3900;
        }
    }
}
EOF
ht --root "$R" facts >"$TMP/i.facts"
expect_eq "nested location: the cap of its parent location" \
	'proxy.nginx-1.client_max_body_size = 2097152 bytes from /etc/nginx/nginx.conf:12' \
	"$(grep '^proxy.nginx-1.client_max_body_size = ' "$TMP/i.facts")"
expect_eq "a bracketed IPv6 address with its port" \
	'proxy.nginx-2.upstream = "[::1]:3900" from /etc/nginx/nginx.conf:19' \
	"$(grep '^proxy.nginx-2.upstream = ' "$TMP/i.facts")"
expect_eq "the http level's 0 where no location sets one" \
	'proxy.nginx-2.client_max_body_size = 0 bytes from /etc/nginx/nginx.conf:3' \
	"$(grep '^proxy.nginx-2.client_max_body_size = ' "$TMP/i.facts")"
audit "$R"
expect_eq "inherit: 2m in the parent location, critical" critical "$(f proxy.body_size nginx-1 .severity)"
expect_eq "inherit: 0 (no limit) at http, ok" ok "$(f proxy.body_size nginx-2 .severity)"
# listen 8443 ssl with Host $host: the port is dropped.
expect_eq "inherit: \$host on 8443 loses the port" critical "$(f proxy.host_header nginx-1 .severity)"
expect_contains "inherit: Host's line, inherited from the server" "from /etc/nginx/nginx.conf:10" \
	"$(f proxy.host_header nginx-1 .explanation)"
# keepalive 16, 1.1 from http, Connection "" from the server: kept.
expect_eq "inherit: keepalive in effect" ok "$(f proxy.upstream_keepalive nginx-1 .severity)"
expect_eq "inherit: keepalive 16" 16 "$(f proxy.upstream_keepalive nginx-1 .current)"
# proxy_pass to an address: no upstream block, no keepalive.
expect_eq "inherit: an address in proxy_pass keeps nothing" warning \
	"$(f proxy.upstream_keepalive nginx-2 .severity)"
# Uploads go straight through; downloads are still spooled (proxy_buffering on): info.
expect_eq "inherit: request buffering off from http, downloads spooled" info \
	"$(f proxy.request_buffering nginx-1 .severity)"
expect_eq "inherit: on again in the location (info, as by default)" info \
	"$(f proxy.request_buffering nginx-2 .severity)"
expect_contains "inherit: the location's line" "from /etc/nginx/nginx.conf:18" \
	"$(f proxy.request_buffering nginx-2 .explanation)"
# The registry profile's layers are unbounded: any cap is critical, 0 recommended.
sed -i 's/client_max_body_size 0;/client_max_body_size 4g;/' "$R/etc/nginx/nginx.conf"
sed -i 's/\[::1\]:3900/127.0.0.1:5000/' "$R/etc/nginx/nginx.conf"
ht --root "$R" --profile registry --format json audit >"$TMP/a.json"
# the registry's port 5000 is looked for too: nginx-2 now reaches it
expect_eq "registry: 4g is a cap on unbounded layers, critical" critical \
	"$(f proxy.body_size nginx-2 .severity)"
expect_eq "registry: 0 recommended" 0 "$(f proxy.body_size nginx-2 .recommended)"
expect_contains "registry: client_max_body_size 0" 'write "client_max_body_size 0;"' \
	"$(f proxy.body_size nginx-2 .remedy)"

# A cap of exactly the part size: plain parts pass, streaming-signed ones
# (aws-chunked, ~90 bytes more per 64 KiB) do not: warning, the part size
# rounded up to MiB plus 1 MiB recommended (8 MiB + 1 MiB = 9437184).
sed -i 's/client_max_body_size 4g;/client_max_body_size 8m;/; s/127.0.0.1:5000/[::1]:3900/' \
	"$R/etc/nginx/nginx.conf"
ht --root "$R" --profile garage --format json audit >"$TMP/a.json"
expect_eq "8m for 8 MiB parts: warning, 9 MiB recommended" "warning 9437184" \
	"$(f proxy.body_size nginx-2 .severity) $(f proxy.body_size nginx-2 .recommended)"
# The read timer alone waits on the store: a short client_body_timeout is no
# 504 (registry: upstream_pause 300 s; proxy_read_timeout 600 s here).
sed -i 's/location \/ {/location \/ {\n      client_body_timeout 30s;\n      proxy_read_timeout 600s;/; s/\[::1\]:3900/127.0.0.1:5000/' \
	"$R/etc/nginx/nginx.conf"
ht --root "$R" --profile registry --format json audit >"$TMP/a.json"
expect_eq "read timer above the pause, a short body timer: ok" ok \
	"$(f proxy.idle_timeout nginx-2 .severity)"

# ---- 4. before deployment, and MinIO ----
# No garage.toml yet: --profile garage looks for Garage's documented 3900.
R=$TMP/predeploy
cp -a "$FIXTURES/garage-vm/root" "$R"
mkdir -p "$R/etc/nginx"
printf 'events {}\nhttp {\n  server {\n    location / { proxy_pass http://localhost:3900; }\n  }\n}\n' \
	>"$R/etc/nginx/nginx.conf"
audit "$R"
expect_eq "before deployment: the path to 3900 is judged" critical "$(f proxy.body_size nginx-1 .severity)"
expect_contains "before deployment: the proxy_pass line" "/etc/nginx/nginx.conf:4" \
	"$(f proxy.body_size nginx-1 .remedy)"
# MinIO on --address :9100 (its /etc/default/minio), not Garage's port.
R=$TMP/minio
cp -a "$FIXTURES/garage-vm/root" "$R"
mkdir -p "$R/etc/nginx" "$R/etc/default"
printf 'MINIO_VOLUMES="/srv/minio"\nMINIO_OPTS="--address :9100 --console-address :9101"\n' \
	>"$R/etc/default/minio"
printf 'events {}\nhttp {\n  server {\n    location / { proxy_pass http://127.0.0.1:9100; }\n    location /c/ { proxy_pass http://127.0.0.1:9101; }\n  }\n}\n' \
	>"$R/etc/nginx/nginx.conf"
ht --root "$R" --profile minio facts >"$TMP/m.facts"
expect_eq "minio: its --address port" 'proxy.store_ports = "9100/s3" from garage.s3_port and garage.web_port (a Garage host), MinIO'"'"'s --address (/etc/default/minio, else 9000), the registry'"'"'s 5000' \
	"$(grep '^proxy.store_ports = ' "$TMP/m.facts")"
expect_eq "minio: only the S3 port's location is a path" 'proxy.list = "nginx-1" from /etc/nginx/nginx.conf' \
	"$(grep '^proxy.list = ' "$TMP/m.facts")"

# ---- 5. a configuration nginx would refuse: a warning naming file:line, the rest goes on ----
R=$(host broken)
printf 'http {\n  server {\n    listen 80;\n' >"$R/etc/nginx/nginx.conf"
ht --root "$R" --profile garage --format json audit >"$TMP/a.json" 2>"$TMP/err"
expect_eq "broken: the audit goes on (findings: exit 1)" 1 $?
expect_eq "broken: one warning with the file and the line" \
	'hosttune: warning: /etc/nginx/nginx.conf:2: expected a "}" closing the block opened here, found the end of the file; the proxy checks are skipped' \
	"$(cat "$TMP/err")"
expect_eq "broken: the proxy rules not applicable" "n/a" \
	"$(jget "$TMP/a.json" '.findings[] | select(.rule == "proxy.body_size") | .severity')"
expect_contains "broken: saying why" "skipped: /etc/nginx/nginx.conf:2" \
	"$(jget "$TMP/a.json" '.findings[] | select(.rule == "proxy.body_size") | .explanation')"

# nginx.conf that cannot be opened (a link loop, a directory): the same
# warning with why, never the run's end.
rm -f "$R/etc/nginx/nginx.conf"
ln -s nginx.conf "$R/etc/nginx/nginx.conf"
ht --root "$R" --profile garage audit >/dev/null 2>"$TMP/err"
expect_eq "a link loop: the audit goes on, one warning" \
	"1|hosttune: warning: /etc/nginx/nginx.conf: Too many levels of symbolic links; the proxy checks are skipped" \
	"$?|$(cat "$TMP/err")"
rm "$R/etc/nginx/nginx.conf"
mkdir "$R/etc/nginx/nginx.conf"
ht --root "$R" --profile garage facts >/dev/null 2>"$TMP/err"
expect_eq "a directory: facts goes on, one warning" \
	"0|hosttune: warning: /etc/nginx/nginx.conf: Is a directory; the proxy checks are skipped" \
	"$?|$(cat "$TMP/err")"

finish
