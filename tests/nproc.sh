#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# RLIMIT_NPROC as a limit (process.limit_nproc): the kernel counts every
# task (process and thread) of a real UID against the soft limit of the
# process that forks (copy_process() in kernel/fork.c), so the usage is the
# user's tasks summed over all its processes, the holder its process with
# the most threads, and the fix where that process's limit is set.
#
# - --root trees with /proc/PID/{status,limits,comm,cgroup}: users near and
#   far from their limits, an exempt task (CAP_SYS_RESOURCE), root; the
#   figures checked against the arithmetic done here, over random trees.
# - Live: processes of a UID of no account started here under prlimit
#   --nproc; hosttune's count of that user's tasks agrees with ps(1) in the
#   same run.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh" || exit 99
[ -n "${TMP:-}" ] && [ -d "$TMP" ] || exit 99

# tree DIR: a host's minimal tree (5.15, 4 GiB) with /etc/passwd.
tree() {
	rm -rf "$1"
	mkdir -p "$1/proc/sys/kernel" "$1/proc/net" "$1/etc"
	printf '5.15.0-91-generic\n' >"$1/proc/sys/kernel/osrelease"
	printf 'MemTotal:        4194304 kB\n' >"$1/proc/meminfo"
	printf 'root:x:0:0:root:/root:/bin/bash\nwww-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\nbuild:x:1001:1001::/home/build:/bin/sh\n' >"$1/etc/passwd"
}
# task DIR PID COMM UID THREADS NPROC [UNIT [CAPEFF]]: a process of UID with
# THREADS threads and a soft and hard RLIMIT_NPROC of NPROC.
task() {
	local d=$1/proc/$2
	mkdir -p "$d/fd"
	printf '%s\n' "$3" >"$d/comm"
	printf 'Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t%s\nPPid:\t1\nUid:\t%s\t%s\t%s\t%s\nThreads:\t%s\nCapEff:\t%s\n' \
		"$3" "$2" "$4" "$4" "$4" "$4" "$5" "${8:-0000000000000000}" >"$d/status"
	printf 'Limit                     Soft Limit           Hard Limit           Units     \n' >"$d/limits"
	printf 'Max processes             %-20s %-20s processes \n' "$6" "$6" >>"$d/limits"
	printf 'Max open files            1024                 524288               files     \n' >>"$d/limits"
	printf '0::/system.slice/%s\n' "${7:-user.slice}" >"$d/cgroup"
}
# f JSON INSTANCE FIELD: a field of process.limit_nproc[INSTANCE].
f() {
	jq -r --arg i "$2" '.findings[] | select(.rule == "process.limit_nproc" and .instance == $i) | '"$3" "$1"
}

# ---- caddy's report: 65 threads of www-data against LimitNPROC=64 ------------
T=$TMP/caddy
tree "$T"
task "$T" 2939 caddy 33 62 64 caddy.service
task "$T" 3001 php-fpm8.2 33 3 4096 php8.2-fpm.service
task "$T" 1 systemd 0 1 15000
"$HOSTTUNE" --root "$T" --rules "$HT_RULES_DIR" --format json audit >"$TMP/a.json"
# www-data: 62 + 3 = 65 tasks, 65 >= 0.9 x 64: critical, the user's whole
# count against caddy's limit (the lowest of its processes).
expect_eq "caddy: critical" critical "$(f "$TMP/a.json" caddy .severity)"
expect_eq "caddy: usage the user's tasks, 62 + 3" 65 "$(f "$TMP/a.json" caddy .limit.usage)"
expect_eq "caddy: limit its own RLIMIT_NPROC" 64 "$(f "$TMP/a.json" caddy .limit.limit)"
expect_contains "caddy: the holder, by PID" "The largest holder is caddy (PID 2939), with 62 of it" \
	"$(f "$TMP/a.json" caddy .explanation)"
expect_contains "caddy: the user by name" "run by www-data (UID 33)" "$(f "$TMP/a.json" caddy .explanation)"
expect_contains "caddy: the fix where the limit is set" "LimitNPROC= of caddy.service" \
	"$(f "$TMP/a.json" caddy .remedy)"
# Twice the 65 tasks the user runs.
expect_contains "caddy: twice the tasks" "raise it to 130" "$(f "$TMP/a.json" caddy .remedy)"
r=$(jq -r '[.findings[] | select(.severity == "warning" or .severity == "critical") | .remedy // ""] | join(" ")' "$TMP/a.json")
case $r in
*TasksMax* | *pids.max=* | *kernel.pid_max* | *threads-max=*)
	not_ok "caddy: no fix at a knob that did not refuse" ;;
*) ok "caddy: no fix at a knob that did not refuse" ;;
esac
# php-fpm's own limit is 4096: not checked (65 < 0.75 x 4096), so no row.
expect_eq "php-fpm: far from its own limit, not checked" "" "$(f "$TMP/a.json" php-fpm8_2 .severity)"

# ---- exempt: the same task with CAP_SYS_RESOURCE (bit 24) -------------------
task "$T" 2939 caddy 33 62 64 caddy.service 0000000001000000
"$HOSTTUNE" --root "$T" --rules "$HT_RULES_DIR" --format json audit >"$TMP/b.json"
expect_eq "CAP_SYS_RESOURCE: ok" ok "$(f "$TMP/b.json" caddy .severity)"
expect_eq "CAP_SYS_RESOURCE: the exempt case" exempt "$(f "$TMP/b.json" caddy .case)"

# ---- root is never checked for it ---------------------------------------------
T=$TMP/root
tree "$T"
task "$T" 500 dockerd 0 120 128 docker.service
"$HOSTTUNE" --root "$T" --rules "$HT_RULES_DIR" --format json audit >"$TMP/c.json"
expect_eq "root at 120 of 128: not checked" "" "$(f "$TMP/c.json" dockerd .severity)"

# ---- a service whose workers lower their own limit (a library's setrlimit()) --
# fts_server (PID 2101, 170 threads, the unit's 4126522) starts 5 fts_url_copy
# workers of 12 threads that set 80 themselves: 170 + 5 x 12 = 230 tasks of
# 80 (287%): critical; the holder is the name with the most tasks, fts_server
# (170 > 60); the source the program's own setting, not the unit's.
T=$TMP/own
tree "$T"
task "$T" 2101 fts_server 1001 170 4126522 fts-server.service
for k in 1 2 3 4 5; do
	task "$T" $((4000 + k)) fts_url_copy 1001 12 80 fts-server.service
	sed -i 's/^PPid:\t1$/PPid:\t2101/' "$T/proc/$((4000 + k))/status"
done
"$HOSTTUNE" --root "$T" --rules "$HT_RULES_DIR" --format json audit >"$TMP/o.json"
expect_eq "own: critical" critical "$(f "$TMP/o.json" fts_url_copy .severity)"
expect_eq "own: usage 170 + 5 x 12" 230 "$(f "$TMP/o.json" fts_url_copy .limit.usage)"
expect_contains "own: the program's own setting" "the program's own setting, not its unit's: its parent, fts_server PID 2101, has 4126522" \
	"$(f "$TMP/o.json" fts_url_copy .remedy)"
case $(f "$TMP/o.json" fts_url_copy .remedy) in
*LimitNPROC* | *limits.conf*) not_ok "own: no unit or pam knob" ;;
*) ok "own: no unit or pam knob" ;;
esac
# Five workers of 12 = 60 against the server's 170: the server holds most.
expect_contains "own: the holder by name" "The largest holder is fts_server (PID 2101), with 170 of it" \
	"$(f "$TMP/o.json" fts_url_copy .explanation)"
# 300 workers of 12 (3600) outnumber the server: named with their count.
T=$TMP/many
tree "$T"
task "$T" 2101 fts_server 1001 170 4126522 fts-server.service
for k in $(seq 1 300); do task "$T" $((5000 + k)) fts_url_copy 1001 12 100000 fts-server.service; done
task "$T" 6000 fts_url_copy 1001 12 4000 fts-server.service
"$HOSTTUNE" --root "$T" --rules "$HT_RULES_DIR" --format json audit >"$TMP/m.json"
# 170 + 301 x 12 = 3782 of 4000 (94.6%): critical, 301 workers with 3612.
expect_eq "many: 3782 of 4000" "critical 3782" "$(f "$TMP/m.json" fts_url_copy '"\(.severity) \(.limit.usage)"')"
expect_contains "many: the holder is the 301 workers" \
	"The largest holder is fts_url_copy (301 processes, the first PID 5001), with 3612 of it" \
	"$(f "$TMP/m.json" fts_url_copy .explanation)"

# ---- a status no kernel writes is not counted ----------------------------------
# Threads: above PID_MAX_LIMIT (4194304) in two processes of one user would
# overflow the sum: neither counts, and the user's other process alone does.
T=$TMP/bogus
tree "$T"
task "$T" 700 big 1001 9223372036854775807 100 big.service
task "$T" 701 big 1001 9223372036854775807 100 big.service
task "$T" 702 small 1001 80 100 small.service
"$HOSTTUNE" --root "$T" --rules "$HT_RULES_DIR" --no-measure facts >"$TMP/bogus.facts" 2>&1
expect_contains "bogus Threads: left out, 80 of small's counted" \
	"process.small.user_tasks = 80 tasks from Threads of /proc/PID/status, the 1 processes of UID 1001" \
	"$(cat "$TMP/bogus.facts")"

# ---- a limit of 0: no fork at all -----------------------------------------------
T=$TMP/zero
tree "$T"
task "$T" 800 zed 1002 1 0 zed.service
"$HOSTTUNE" --root "$T" --rules "$HT_RULES_DIR" --format json audit >"$TMP/z.json"
expect_eq "RLIMIT_NPROC 0: critical" "critical zero" "$(f "$TMP/z.json" zed '"\(.severity) \(.case)"')"
# A facts file's task count above PID_MAX_LIMIT (4194304) is refused, named.
"$HOSTTUNE" --root "$T" --rules "$HT_RULES_DIR" facts >"$TMP/z.facts"
sed -i 's/^process\.zed\.user_tasks = 1 /process.zed.user_tasks = 4194305 /' "$TMP/z.facts"
"$HOSTTUNE" --rules "$HT_RULES_DIR" --facts "$TMP/z.facts" audit >/dev/null 2>"$TMP/z.err"
expect_eq "user_tasks above 4194304: exit 2" 2 $?
expect_contains "user_tasks above 4194304: named" "process.zed.user_tasks must be at most 4194304" "$(cat "$TMP/z.err")"

# ---- random users: usage, verdict and holder against the arithmetic ----------
RANDOM=34
for i in $(seq 1 12); do
	T=$TMP/r$i
	tree "$T"
	lim=$((RANDOM % 200 + 20))
	total=0 top=0 toppid=0
	n=$((RANDOM % 4 + 1))
	for k in $(seq 1 $n); do
		th=$((RANDOM % (lim / 2) + 1))
		# The builder's process 1000 has the lowest limit; the others 100000.
		l=100000
		[ "$k" -eq 1 ] && l=$lim
		task "$T" $((1000 + k)) "job$k" 1001 "$th" "$l" "job$k.service"
		total=$((total + th))
		if [ "$th" -gt "$top" ]; then top=$th toppid=$((1000 + k)); fi
	done
	"$HOSTTUNE" --root "$T" --rules "$HT_RULES_DIR" --format json audit >"$TMP/r.json"
	# Checked when total >= 75% of lim (4 x total >= 3 x lim); 90%: critical.
	if [ $((total * 4)) -lt $((lim * 3)) ]; then
		want=""
	elif [ $((total * 10)) -ge $((lim * 9)) ]; then
		want=critical
	else
		want=warning
	fi
	got=$(f "$TMP/r.json" job1 .severity)
	expect_eq "random $i: $total tasks of $lim: '${want:-not checked}'" "$want" "$got"
	if [ -n "$want" ]; then
		expect_eq "random $i: usage" "$total" "$(f "$TMP/r.json" job1 .limit.usage)"
		expect_contains "random $i: holder PID $toppid" "(PID $toppid), with $top of it" \
			"$(f "$TMP/r.json" job1 .explanation)"
	fi
done

# ---- live: an unprivileged user's tasks, as ps(1) counts them -----------------
# A UID of no account and no other test (61234), so that nothing else comes
# or goes among its tasks between hosttune's count and ps's.
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || ! command -v prlimit >/dev/null; then
	echo "# SKIP live: needs root, setpriv and prlimit"
else
	uid=61234
	pids=""
	for _ in 1 2 3; do
		setpriv --reuid=$uid --regid=$uid --clear-groups prlimit --nproc=4:4 sleep 60 &
		pids="$pids $!"
	done
	# 3 of 4 (75%): checked. Wait for the three (a loaded machine is slow to exec).
	for _ in $(seq 100); do
		[ "$(ps -L -u $uid --no-headers | wc -l)" -ge 3 ] && break
		sleep 0.1
	done
	"$HOSTTUNE" --rules "$HT_RULES_DIR" --no-measure facts >"$TMP/live.facts"
	ps_tasks=$(ps -L -u $uid --no-headers | wc -l)
	kill $pids 2>/dev/null
	wait 2>/dev/null
	ht_tasks=$(sed -n 's/^process\.sleep\.user_tasks = \([0-9]*\) .*/\1/p' "$TMP/live.facts")
	expect_eq "live: hosttune counts UID $uid's tasks as ps -L does (3)" "$ps_tasks" "$ht_tasks"
	expect_eq "live: RLIMIT_NPROC of prlimit --nproc=4" 4 \
		"$(sed -n 's/^process\.sleep\.nproc = \([0-9]*\) .*/\1/p' "$TMP/live.facts")"
fi
finish
