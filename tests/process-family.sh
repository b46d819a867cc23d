#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Processes judged one by one, on --root trees made here: /proc/net/tcp with
# listening sockets, /proc/PID/{comm,limits,cgroup} and /proc/PID/fd with
# one entry a descriptor (a socket:[INODE] link for a listening socket).
#
# - Several processes of one name (a container runtime's docker-proxy, one a
#   published port): the name's finding is the worst of them by the share
#   of its soft limit open, named by PID, whichever owns the lowest port.
#   Random families check the same against the arithmetic done here.
# - Any listening daemon at 75% of its limit is a warning and at 90% a
#   critical, whether or not it is the profile's workload.service.
# - A limit above the hard one: the remedy says how the hard limit is
#   raised, never only "ulimit -n".
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh" || exit 99
[ -n "${TMP:-}" ] && [ -d "$TMP" ] || exit 99

# tree DIR: a host's minimal tree (5.15, 4 GiB).
tree() {
	rm -rf "$1"
	mkdir -p "$1/proc/sys/kernel" "$1/proc/net"
	printf '5.15.0-91-generic\n' >"$1/proc/sys/kernel/osrelease"
	printf 'MemTotal:        4194304 kB\n' >"$1/proc/meminfo"
	printf '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n' \
		>"$1/proc/net/tcp"
	nsock=0
}
# listen DIR PORT INODE: a listening IPv4 socket on PORT.
listen() {
	printf '%4d: 00000000:%04X 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 %d 1 ffff8d6c41a2b000 100 0 0 10 0\n' \
		"$nsock" "$2" "$3" >>"$1/proc/net/tcp"
	nsock=$((nsock + 1))
}
# proc DIR PID COMM SOFT HARD FDS CGROUP [INODE]: a process with FDS
# descriptors, the first of them the listening socket INODE.
proc() {
	local d=$1/proc/$2
	mkdir -p "$d/fd"
	printf '%s\n' "$3" >"$d/comm"
	printf 'Limit                     Soft Limit           Hard Limit           Units     \n' >"$d/limits"
	printf 'Max open files            %-20s %-20s files     \n' "$4" "$5" >>"$d/limits"
	printf '0::%s\n' "$7" >"$d/cgroup"
	local first=0
	if [ -n "${8:-}" ]; then
		ln -s "socket:[$8]" "$d/fd/0"
		first=1
	fi
	if [ "$6" -gt "$first" ]; then
		(cd "$d/fd" && seq "$first" $(($6 - 1)) | xargs touch)
	fi
}
# finding JSON RULE INSTANCE: severity|current|value
finding() {
	jq -r --arg r "$2" --arg i "$3" \
		'.findings[] | select(.rule == $r and (.instance // "") == $i) | "\(.severity)|\(.current)|\(.recommended)"' "$1"
}
explanation() {
	jq -r --arg r "$2" --arg i "$3" \
		'.findings[] | select(.rule == $r and (.instance // "") == $i) | .explanation + " REMEDY " + (.remedy // "")' "$1"
}

# ---- docker-proxy: the worst of two, not the lowest port's ----------------
# PID 100 owns port 80 with 4 of 1024; PID 200 owns 443 with 1010 of 1024:
# 1010 x 10 >= 1024 x 9, critical; twice 1010 rounded up to a power of two
# is 2048. Both run in docker.service: the drop-in is docker.service's.
T=$TMP/t
tree "$T"
listen "$T" 80 5001
listen "$T" 443 5002
proc "$T" 100 docker-proxy 1024 1024 4 /system.slice/docker.service 5001
proc "$T" 200 docker-proxy 1024 1024 1010 /system.slice/docker.service 5002
ht --root "$T" --format json audit >"$TMP/a.json" 2>"$TMP/err"
expect_eq "two docker-proxy: the worst is judged (1010 of 1024: critical, 2048)" \
	"critical|1024|2048" "$(finding "$TMP/a.json" process.limit_nofile docker-proxy)"
expect_contains "... and named by PID, with how many there are" \
	"docker-proxy is PID 200, of its 2 processes the one with the largest share of its limit open" \
	"$(explanation "$TMP/a.json" process.limit_nofile docker-proxy)"
ht --root "$T" facts >"$TMP/f" 2>&1
expect_contains "process.docker-proxy.count = 2" "process.docker-proxy.count = 2 processes" "$(cat "$TMP/f")"
expect_contains "process.docker-proxy.pid = 200" "process.docker-proxy.pid = 200" "$(cat "$TMP/f")"

# ---- a daemon at 75% and 90% that is not the profile's service ------------
# minio, default profile (workload.service empty): 770 of 1024 is 75.2%
# (770 >= 1024 - 1024 / 4 = 768): warning, 2048; 921 of 1024 is below
# 1024 - 1024 / 10 = 922: still a warning; 922: critical; 767: ok, 1024.
for case in 767:ok:1024 768:warning:2048 921:warning:2048 922:critical:2048; do
	fds=${case%%:*} rest=${case#*:}
	sev=${rest%%:*} val=${rest#*:}
	tree "$T"
	listen "$T" 9000 7001
	proc "$T" 300 minio 1024 524288 "$fds" /system.slice/minio.service 7001
	ht --root "$T" --format json audit >"$TMP/a.json" 2>"$TMP/err"
	expect_eq "minio with $fds of 1024, not the profile's service: $sev" "$sev|1024|$val" \
		"$(finding "$TMP/a.json" process.limit_nofile minio)"
done

# ---- a limit above the hard one, no unit to write ---------------------------
# 900 of 1024, hard 1024, in a login session (no system service): the
# remedy raises the hard limit (2048 > 1024), not only the soft one.
tree "$T"
listen "$T" 9000 7001
proc "$T" 300 minio 1024 1024 900 /user.slice/user-1000.slice/session-3.scope 7001
ht --root "$T" --format json audit >"$TMP/a.json" 2>"$TMP/err"
r=$(explanation "$TMP/a.json" process.limit_nofile minio)
expect_contains "hard limit 1024 below 2048: the remedy raises the hard limit" \
	"Its hard limit, 1024, is below that: what starts it must raise the hard limit too" "$r"
expect_contains "... with ulimit -Hn" "ulimit -Hn 2048" "$r"
# The same with a hard limit of 524288: no word of the hard limit.
tree "$T"
listen "$T" 9000 7001
proc "$T" 300 minio 1024 524288 900 /user.slice/user-1000.slice/session-3.scope 7001
ht --root "$T" --format json audit >"$TMP/a.json" 2>"$TMP/err"
r=$(explanation "$TMP/a.json" process.limit_nofile minio)
case $r in *"Its hard limit, "*) not_ok "hard limit above the need: not mentioned" "$r" ;;
*) ok "hard limit above the need: not mentioned" ;; esac

# ---- a worker that sets its own limit --------------------------------------
# nginx's master (PID 500, in nginx.service, 65536) forks a worker (PID 501)
# that sets its limit itself (worker_rlimit_nofile 1024) and holds 1000 of
# it: 1000 >= 1024 - 102 = 922, critical; 2 x 1000 -> 2048. Its parent, the
# same program, has another limit: a drop-in for nginx.service would change
# the master's, not the worker's. No drop-in, the fix at nginx.conf.
tree "$T"
listen "$T" 80 7001
proc "$T" 500 nginx 65536 65536 20 /system.slice/nginx.service
proc "$T" 501 nginx 1024 1024 1000 /system.slice/nginx.service 7001
printf 'Name:\tnginx\nPPid:\t1\n' >"$T/proc/500/status"
printf 'Name:\tnginx\nPPid:\t500\n' >"$T/proc/501/status"
ht --root "$T" --format json audit >"$TMP/a.json" 2>"$TMP/err"
expect_eq "worker with its own limit: critical, 2048" "critical|1024|2048" \
	"$(finding "$TMP/a.json" process.limit_nofile nginx)"
expect_eq "... no drop-in for nginx.service" null \
	"$(jq -c '.findings[] | select(.rule == "process.limit_nofile") | .fix' "$TMP/a.json")"
r=$(explanation "$TMP/a.json" process.limit_nofile nginx)
expect_contains "... the program's own setting named, with its parent's limit" \
	"the program's own setting, not its unit's or its container's: its parent, nginx PID 500, has 65536" "$r"
expect_contains "... and nginx's knob" "worker_rlimit_nofile" "$r"
case $r in *LimitNOFILE*) not_ok "... and no LimitNOFILE anywhere" "$r" ;;
*) ok "... and no LimitNOFILE anywhere" ;; esac
# The same worker with its master's limit (started so, not set by itself): the unit's drop-in.
proc "$T" 500 nginx 1024 1024 20 /system.slice/nginx.service
ht --root "$T" --format json audit >"$TMP/a.json" 2>"$TMP/err"
expect_contains "a worker with its master's limit: the unit's drop-in" "LimitNOFILE=2048" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile") | .fix.line' "$TMP/a.json")"

# ---- the system-wide file table ----------------------------------------------
# file-nr "95000 0 100000", fs.file-max 100000: 95% >= 90%, critical;
# recommended max(100000, pow2ceil(2 x 95000) = 262144) = 262144. The
# process holding the most descriptors is named: cache (PID 410, 1500 of
# them) before minio (PID 300, 900).
tree "$T"
mkdir -p "$T/proc/sys/fs"
printf '95000\t0\t100000\n' >"$T/proc/sys/fs/file-nr"
printf '100000\n' >"$T/proc/sys/fs/file-max"
printf '1048576\n' >"$T/proc/sys/fs/nr_open"
listen "$T" 9000 7001
proc "$T" 300 minio 1048576 1048576 900 /system.slice/minio.service 7001
proc "$T" 410 cache 1048576 1048576 1500 /system.slice/cache.service
ht --root "$T" --format json audit >"$TMP/a.json" 2>"$TMP/err"
# The kernel holds most of it (below): no larger table is recommended.
expect_eq "file table at 95%: critical, no raise (the kernel holds it)" "critical|100000|100000" \
	"$(finding "$TMP/a.json" files.table "")"
r=$(explanation "$TMP/a.json" files.table "")
expect_contains "... says what fails" 'ENFILE ("Too many open files in system")' "$r"
# The processes hold 900 + 1500 = 2400 of the 95000: the kernel holds the
# other 92600 (no process has a descriptor to them), and is named first:
# a larger table only delays the next fill.
expect_contains "... names the kernel as the holder, with what it holds" \
	"The largest holder is the kernel (files no process holds a descriptor to" "$r"
expect_contains "... 95000 - 2400 = 92600" "with 92600 of it" "$r"
expect_contains "... a larger table only delays the next fill" "only delays the next fill" "$r"
expect_contains "... the fix is at the holder" "stop what fills it, the kernel" \
	"$(jget "$TMP/a.json" '.findings[] | select(.rule == "files.table") | .remedy')"
# 2600 of 2800 open (92.9%, critical): the processes hold 2400 of them, the
# kernel 200, fewer than cache's 1500: cache is named, by PID, and nothing
# says the limit is the wrong cure.
printf '2600\t0\t2800\n' >"$T/proc/sys/fs/file-nr"
printf '2800\n' >"$T/proc/sys/fs/file-max"
ht --root "$T" --format json audit >"$TMP/a.json" 2>"$TMP/err"
r=$(explanation "$TMP/a.json" files.table "")
# 2 x 2600 = 5200, rounded up to 8192: the processes hold it, a raise helps.
expect_eq "processes hold most: critical, 8192" "critical|2800|8192" \
	"$(finding "$TMP/a.json" files.table "")"
expect_contains "processes hold most: the largest one is named" \
	"The largest holder is cache (PID 410), with 1500 of it" "$r"
case $r in *"delays the next fill"*) not_ok "... and a larger table is not called a delay" "$r" ;;
*) ok "... and a larger table is not called a delay" ;; esac
printf '100000\n' >"$T/proc/sys/fs/file-max"
# 80% (80000 of 100000): a warning; the kernel holds 80000 - 2400 = 77600
# of it, so no raise; 70%: ok.
printf '80000\t0\t100000\n' >"$T/proc/sys/fs/file-nr"
ht --root "$T" --format json audit >"$TMP/a.json" 2>"$TMP/err"
expect_eq "file table at 80%: warning, no raise" "warning|100000|100000" \
	"$(finding "$TMP/a.json" files.table "")"
printf '70000\t0\t100000\n' >"$T/proc/sys/fs/file-nr"
ht --root "$T" --format json audit >"$TMP/a.json" 2>"$TMP/err"
expect_eq "file table at 70%: ok" "ok|100000|100000" "$(finding "$TMP/a.json" files.table "")"
case $(explanation "$TMP/a.json" files.table "") in *"largest holder"*)
	not_ok "file table at 70%: no walk for its holders" ;;
*) ok "file table at 70%: no walk for its holders" ;; esac

# ---- one bad line of /proc/net/tcp6 loses nothing else ----------------------
# minio listens on 9000 (/proc/net/tcp) with 950 of 1024 descriptors:
# 950 >= 1024 - 1024 / 10 = 922, critical. A truncated tcp6 (its only line,
# line 2, cut short) is refused alone, named as tcp6: listener.list keeps
# 9000 from tcp, the finding stays, and stderr says what was not read.
tree "$T"
listen "$T" 9000 7001
proc "$T" 300 minio 1024 1024 950 /system.slice/minio.service 7001
printf '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0000000000000000000000000000000' \
	>"$T/proc/net/tcp6"
ht --root "$T" --format json audit >"$TMP/a.json" 2>"$TMP/err"
expect_eq "truncated tcp6: minio 950 of 1024 still critical" "critical|1024|2048" \
	"$(finding "$TMP/a.json" process.limit_nofile minio)"
ht --root "$T" facts >"$TMP/f" 2>/dev/null
expect_contains "truncated tcp6: 9000 kept, tcp6 named" \
	'listener.list = "9000" from /proc/net/tcp (not read: /proc/net/tcp6: a line not as the kernel writes it (line 2))' \
	"$(cat "$TMP/f")"
expect_eq "truncated tcp6: said on stderr" \
	"hosttune: warning: not read: /proc/net/tcp6: a line not as the kernel writes it (line 2); the listening sockets listed there are not judged" \
	"$(cat "$TMP/err")"
# The other way round: a bad line 3 in tcp (between 9000 and 9001) refuses
# tcp whole (a partial file would undercount), and tcp6's listener on 9443
# is kept.
tree "$T"
listen "$T" 9000 7001
echo '   1: 0000000' >>"$T/proc/net/tcp"
listen "$T" 9001 7002
printf '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 00000000000000000000000000000000:24E3 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7003 1 0000000000000000 100 0 0 10 0\n' \
	>"$T/proc/net/tcp6"
proc "$T" 300 minio 1024 1024 950 /system.slice/minio.service 7003
ht --root "$T" facts >"$TMP/f" 2>"$TMP/err"
expect_contains "bad line 3 of tcp: tcp6's 9443 kept, tcp named" \
	'listener.list = "9443" from /proc/net/tcp6 (not read: /proc/net/tcp: a line not as the kernel writes it (line 3))' \
	"$(cat "$TMP/f")"
expect_contains "bad line 3 of tcp: said on stderr" "not read: /proc/net/tcp: a line not as the kernel writes it (line 3)" \
	"$(cat "$TMP/err")"

# ---- fs.nr_open caps every limit ---------------------------------------------
# fs.nr_open 524288 and the minio profile's workload.nofile 1048576 for minio
# (100 of 1024 open): the kernel refuses RLIMIT_NOFILE above fs.nr_open
# (EPERM), so the drop-in stops at min(1048576, 524288) = 524288 for soft and
# hard, and fs.nr_open itself is raised to 1048576 (files.nr_open). Both are
# the profile's plan with no process near its limit: info; given by --set
# (the admin's statement), a warning.
tree "$T"
mkdir -p "$T/proc/sys/fs"
printf '524288\n' >"$T/proc/sys/fs/nr_open"
listen "$T" 9000 7001
proc "$T" 300 minio 1024 1024 100 /system.slice/minio.service 7001
ht --root "$T" --profile minio --format json audit >"$TMP/a.json" 2>"$TMP/err"
expect_eq "nr_open 524288: minio's limit stops at it" "info|1024|524288" \
	"$(finding "$TMP/a.json" process.limit_nofile minio)"
expect_eq "nr_open 524288: the drop-in's LimitNOFILE= is capped, soft and hard" "[Service] LimitNOFILE=524288:524288" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile") | .fix.line' "$TMP/a.json")"
expect_eq "nr_open 524288: fs.nr_open raised to 1048576" "info|524288|1048576" \
	"$(finding "$TMP/a.json" files.nr_open "")"
ht --root "$T" --profile minio --set workload.nofile=1048576 --format json audit >"$TMP/s.json" 2>"$TMP/err"
expect_eq "nr_open 524288, the need stated: a warning" "warning|1024|524288" \
	"$(finding "$TMP/s.json" process.limit_nofile minio)"
expect_eq "nr_open 524288, the need stated: fs.nr_open a warning" "warning|524288|1048576" \
	"$(finding "$TMP/s.json" files.nr_open "")"
expect_contains "nr_open 524288: says why it stops" \
	"It should get 1048576, more than fs.nr_open = 524288" \
	"$(explanation "$TMP/a.json" process.limit_nofile minio)"
ht --root "$T" --profile minio plan >"$TMP/plan" 2>&1
case $(cat "$TMP/plan") in *"LimitNOFILE=1048576"*) not_ok "nr_open 524288: no plan above it" ;;
*) ok "nr_open 524288: no plan above it" ;; esac
expect_contains "nr_open 524288: the plan raises fs.nr_open" "fs.nr_open = 1048576" "$(cat "$TMP/plan")"
# A hard limit above fs.nr_open (2097152, fs.nr_open lowered to 1048576
# since minio started): LimitNOFILE=1048576:2097152 would fail with EPERM, so
# the hard one is written as fs.nr_open too: 1048576:1048576.
tree "$T"
mkdir -p "$T/proc/sys/fs"
printf '1048576\n' >"$T/proc/sys/fs/nr_open"
listen "$T" 9000 7001
proc "$T" 300 minio 1024 2097152 100 /system.slice/minio.service 7001
ht --root "$T" --profile minio --format json audit >"$TMP/a.json" 2>"$TMP/err"
expect_eq "hard 2097152 above nr_open 1048576: the hard one capped" "[Service] LimitNOFILE=1048576:1048576" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile") | .fix.line' "$TMP/a.json")"
# minio at 990000 of 1048576 (94.4%: critical), fs.nr_open 1048576: twice
# the open ones is pow2ceil(1980000) = 2097152, above fs.nr_open, so the
# limit stays 1048576 (no fix of its own: the lever is files.nr_open), and
# fs.nr_open goes to 2097152, critical as the process is.
facts_file "$TMP/nr.facts" <<'EOF2'
kernel.release = "6.1.0-18-amd64" from x
kernel.version = v6.1.0 from x
mem.total = 68719476736 bytes from x
fs.nr_open = 1048576 descriptors from x
listener.list = "9000" from x
listener.9000.addresses = "0.0.0.0" from x
listener.9000.backlog = 4096 entries from x
listener.9000.queue = 0 entries from x
listener.9000.pid = 300 from x
listener.9000.process = "minio" from x
process.list = "minio" from x
process.minio.comm = "minio" from x
process.minio.count = 1 processes from x
process.minio.fds = 990000 descriptors from x
process.minio.nofile = 1048576 descriptors from x
process.minio.nofile_hard = 1048576 descriptors from x
process.minio.pid = 300 from x
process.minio.unit = "minio.service" from x
EOF2
ht --facts "$TMP/nr.facts" --format json audit >"$TMP/a.json" 2>"$TMP/err"
expect_eq "990000 of 1048576 at nr_open: critical, stays 1048576" "critical|1048576|1048576" \
	"$(finding "$TMP/a.json" process.limit_nofile minio)"
expect_eq "... its lever is files.nr_open" "files.nr_open" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile") | .lever' "$TMP/a.json")"
expect_eq "... fs.nr_open to 2097152, critical" "critical|1048576|2097152" \
	"$(finding "$TMP/a.json" files.nr_open "")"
case $(explanation "$TMP/a.json" process.limit_nofile minio) in *"gets 2097152"*)
	not_ok "... never 'gets 2097152'" ;;
*) ok "... never 'gets 2097152'" ;; esac

# ---- random families: the one named is the worst ----------------------------
# 12 families of 2 to 4 processes of one name, each with a random soft limit
# (256 to 4096) and random descriptors (1 to the limit); the worst is the
# largest fds / soft (compared as fds x other soft), then the most fds, then
# the lowest PID.
RANDOM=4711
for round in $(seq 12); do
	tree "$T"
	n=$((2 + RANDOM % 3))
	best_pid=0 best_fds=0 best_soft=1
	for i in $(seq "$n"); do
		pid=$((1000 + i * 7 + RANDOM % 5))
		soft=$((256 + RANDOM % 3841))
		fds=$((1 + RANDOM % soft))
		listen "$T" $((8000 + i)) $((9000 + i))
		proc "$T" "$pid" proxy "$soft" 1048576 "$fds" /system.slice/docker.service $((9000 + i))
		a=$((fds * best_soft)) b=$((best_fds * soft))
		if [ "$best_pid" -eq 0 ] || [ "$a" -gt "$b" ] ||
			{ [ "$a" -eq "$b" ] && { [ "$fds" -gt "$best_fds" ] ||
				{ [ "$fds" -eq "$best_fds" ] && [ "$pid" -lt "$best_pid" ]; }; }; }; then
			best_pid=$pid best_fds=$fds best_soft=$soft
		fi
	done
	ht --root "$T" facts >"$TMP/f" 2>&1
	got=$(sed -n 's/^process\.proxy\.pid = \([0-9]*\) .*/\1/p' "$TMP/f")
	expect_eq "family $round of $n: the worst, PID $best_pid ($best_fds of $best_soft), is named" \
		"$best_pid" "$got"
done

finish
