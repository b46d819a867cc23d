#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Control groups below --root: cgroup v2 and v1 trees made here, each group
# as the kernel lays out its files (Documentation/admin-guide/cgroup-v2.rst,
# cgroup-v1/memory.rst, cgroup-v1/pids.rst). What hosttune collects of them
# (cgroup.*), the verdict of cgroup.memory and cgroup.pids for each group,
# the group named by its path, the fix where its limit is set, and
# mem.pressure's OOM kills pinned on the group that counted them.
. "$(dirname "$0")/lib.sh"

# put FILE TEXT: FILE below $T with TEXT (printf's %b: \n for newlines).
put() {
	mkdir -p "$T/$(dirname "$1")"
	printf '%b' "$2" >"$T/$1"
}
# v2 group PATH: a directory of the unified hierarchy.
cg=/sys/fs/cgroup
docker_id=3f4e5d6c7b8a99aabbccddeeff00112233445566778899aabbccddeeff001122
cri_id=8a1f0c3e9b7d4a2e6f5c1b0d9e8a7f6c5b4a3e2d1c0b9a8f7e6d5c4b3a2f1e0d
pod=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_5e6f.slice
kube=$pod/cri-containerd-$cri_id.scope

# host TREE: what every tree needs to be a host's (RAM, kernel release).
host() {
	T=$1
	put /proc/sys/kernel/osrelease '6.1.0-18-amd64\n'
	put /proc/meminfo 'MemTotal:        8388608 kB\n'
}
host "$TMP/v2"
put $cg/cgroup.controllers 'cpu memory pids\n'
# Garage under systemd: MemoryMax=512M, 3 kills at it, 12 tasks of TasksMax=4915.
g=$cg/system.slice/garage.service
put $g/memory.max '536870912\n'
put $g/memory.current '530579456\n'
put $g/memory.events 'low 0\nhigh 0\nmax 812\noom 3\noom_kill 3\noom_group_kill 0\n'
# Linux 5.2+: the group's own events, which the collector reads first.
put $g/memory.events.local 'low 0\nhigh 0\nmax 812\noom 3\noom_kill 3\noom_group_kill 0\n'
put $g/pids.max '4915\n'
put $g/pids.current '12\n'
put $g/pids.events 'max 0\n'
put $g/cgroup.procs '4242\n'
put /proc/4242/status 'Name:\tgarage\nVmPeak:\t600000 kB\nVmRSS:\t500000 kB\n'
put /proc/4242/comm 'garage\n'
# A Docker container at its --pids-limit of 100 that was refused 57 forks.
d=$cg/system.slice/docker-$docker_id.scope
put $d/memory.max 'max\n'
put $d/memory.current '73400320\n'
put $d/memory.events 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n'
put $d/pids.max '100\n'
put $d/pids.current '100\n'
put $d/pids.events 'max 57\n'
put $d/cgroup.procs '5001\n5002\n'
put /proc/5001/status 'Name:\tpython3\nVmRSS:\t1000 kB\n'
put /proc/5001/comm 'python3\n'
put /proc/5002/status 'Name:\tgunicorn\nVmRSS:\t20000 kB\n'
put /proc/5002/comm 'gunicorn\n'
# A pod's container killed twice at its 128 MiB limit.
k=$cg/$kube
put $k/memory.max '134217728\n'
put $k/memory.current '133169152\n'
put $k/memory.events 'low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\n'
put $k/pids.max 'max\n'
put $k/pids.current '3\n'
put $k/cgroup.procs ''
# The pod's slice has a limit of 6.5 GiB and no memory.events.local (before
# 5.2): its memory.events counts its container's 2 kills, which are not its
# own (2 - 2 = 0): it is not critical for them.
put $cg/$pod/memory.max '6979321856\n'
put $cg/$pod/memory.current '3000000000\n'
put $cg/$pod/memory.events 'low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\n'
put $cg/$pod/cgroup.procs ''
# Garbage in memory.max: the group is listed, its limit unavailable (EINVAL).
put $cg/system.slice/bad.service/memory.max '-5\n'
put $cg/system.slice/bad.service/memory.current '100\n'
# A limited group 18 levels deep: past the 16 levels read, counted as skipped.
deep=$cg/deep.slice
for i in $(seq 17); do deep=$deep/l$i; done
put "$deep/pids.max" '10\n'
put "$deep/pids.current" '10\n'
# Groups without a limit of their own and without a kill are not listed.
put $cg/user.slice/memory.max 'max\n'
put $cg/user.slice/pids.max 'max\n'
put $cg/user.slice/memory.events 'oom_kill 0\n'
put "$cg/system.slice/getty@tty1.service/pids.max" 'max\n'
# A path with a space and an '@': named as it is, escaped in its facts.
o="$cg/system.slice/odd name@1.service"
put "$o/pids.max" '10\n'
put "$o/pids.current" '2\n'
put "$o/pids.events" 'max 0\n'
put /proc/vmstat 'nr_free_pages 1000\noom_kill 6\n'

ht --root "$T" facts >"$TMP/v2.facts" 2>"$TMP/v2.err"
expect_eq "v2: facts exit" 0 "$?"
fact() { sed -n "s/^$2 = //p" "$1"; }
expect_eq "v2: version" '"v2" from /sys/fs/cgroup/cgroup.controllers' "$(fact "$TMP/v2.facts" cgroup.version)"
# Sorted by path: kubepods.slice/... < system.slice/docker-... < system.slice/garage.service
# < "system.slice/odd name@1.service"; "/" is _2f, " " _20, "@" _40, "_" __.
esc_pod=kubepods.slice_2fkubepods-burstable.slice_2fkubepods-burstable-pod1a2b3c4d__5e6f.slice
expect_eq "v2: the groups with a limit, escaped" \
	"\"$esc_pod ${esc_pod}_2fcri-containerd-$cri_id.scope system.slice_2fbad.service system.slice_2fdocker-$docker_id.scope system.slice_2fgarage.service system.slice_2fodd_20name_401.service\" from /sys/fs/cgroup" \
	"$(fact "$TMP/v2.facts" cgroup.list)"
# 2 kills counted, 2 of them its container's: none of its own.
expect_eq "v2: the pod slice's own kills" "0 kills from /sys/fs/cgroup/$pod/memory.events, less its children's" \
	"$(fact "$TMP/v2.facts" "cgroup.$esc_pod.memory_oom_kills")"
expect_eq "v2: garbage in memory.max" "unavailable EINVAL bytes from /sys/fs/cgroup/system.slice/bad.service/memory.max" \
	"$(fact "$TMP/v2.facts" "cgroup.system.slice_2fbad.service.memory_max")"
expect_eq "v2: the group past 16 levels, skipped" "1 groups" "$(fact "$TMP/v2.facts" cgroup.skipped | cut -d' ' -f1-2)"
G=system.slice_2fgarage.service
expect_eq "v2: garage memory.max" "536870912 bytes from /sys/fs/cgroup/system.slice/garage.service/memory.max" \
	"$(fact "$TMP/v2.facts" "cgroup.$G.memory_max")"
expect_eq "v2: garage oom_kill, its own" "3 kills from /sys/fs/cgroup/system.slice/garage.service/memory.events.local" \
	"$(fact "$TMP/v2.facts" "cgroup.$G.memory_oom_kills")"
expect_eq "v2: garage memory.events max" "812 events from /sys/fs/cgroup/system.slice/garage.service/memory.events.local" \
	"$(fact "$TMP/v2.facts" "cgroup.$G.memory_max_events")"
expect_eq "v2: garage's manager" '"systemd" from the group'"'"'s path' "$(fact "$TMP/v2.facts" "cgroup.$G.manager")"
expect_eq "v2: garage's unit" '"garage.service" from the group'"'"'s path' "$(fact "$TMP/v2.facts" "cgroup.$G.unit")"
# VmRSS 500000 kB x 1024 = 512000000 bytes.
expect_eq "v2: garage's largest process" '"garage"' "$(fact "$TMP/v2.facts" "cgroup.$G.top_process" | cut -d' ' -f1)"
expect_eq "v2: its RSS" "512000000 bytes" "$(fact "$TMP/v2.facts" "cgroup.$G.top_rss" | cut -d' ' -f1-2)"
D=system.slice_2fdocker-$docker_id.scope
expect_eq "v2: docker's manager" '"docker"' "$(fact "$TMP/v2.facts" "cgroup.$D.manager" | cut -d' ' -f1)"
expect_eq "v2: docker's container, 12 hex digits" '"3f4e5d6c7b8a"' "$(fact "$TMP/v2.facts" "cgroup.$D.container" | cut -d' ' -f1)"
expect_eq "v2: docker's memory.max is max" "unavailable ENODATA" "$(fact "$TMP/v2.facts" "cgroup.$D.memory_max" | cut -d' ' -f1-2)"
# 20000 kB (gunicorn) > 1000 kB (python3).
expect_eq "v2: docker's largest process" '"gunicorn"' "$(fact "$TMP/v2.facts" "cgroup.$D.top_process" | cut -d' ' -f1)"
expect_eq "v2: docker's processes" "2 processes" "$(fact "$TMP/v2.facts" "cgroup.$D.procs" | cut -d' ' -f1-2)"
K=${esc_pod}_2fcri-containerd-$cri_id.scope
expect_eq "v2: the pod's manager" '"kubernetes"' "$(fact "$TMP/v2.facts" "cgroup.$K.manager" | cut -d' ' -f1)"
expect_eq "v2: the pod's UID" '"1a2b3c4d-5e6f"' "$(fact "$TMP/v2.facts" "cgroup.$K.container" | cut -d' ' -f1)"
expect_eq "v2: no getty, no user.slice" "" "$(grep -E '^cgroup\.(user|system.slice_2fgetty)' "$TMP/v2.facts")"

# The verdicts, from the tree and from its facts file: the same.
for src in root facts; do
	if [ $src = root ]; then
		ht --root "$T" --format json audit >"$TMP/a.json"
	else
		ht --facts "$TMP/v2.facts" --format json audit >"$TMP/a.json"
	fi
	f() { jget "$TMP/a.json" ".findings[] | select(.rule == \"$1\" and .instance == \"$2\") | $3"; }
	gi=system.slice/garage.service
	# 3 OOM kills at the limit: critical; 530579456 / 536870912 = 98.8% charged.
	expect_eq "$src: garage's memory critical" critical "$(f cgroup.memory $gi .severity)"
	expect_contains "$src: the kills counted" "Events at the limit: 3 (processes the OOM killer ended at this group's own limit)" "$(f cgroup.memory $gi .explanation)"
	expect_contains "$src: the share" "In use: 506 MiB of 512 MiB (98.8%)" "$(f cgroup.memory $gi .explanation)"
	expect_contains "$src: the holder" "The largest holder is garage (PID 4242), with 488.3 MiB of it" "$(f cgroup.memory $gi .explanation)"
	expect_contains "$src: the unit's knob, named" "MemoryMax= in a drop-in of garage.service (systemctl edit garage.service)" "$(f cgroup.memory $gi .remedy)"
	expect_contains "$src: the files read, v2's" "read from memory.max, and oom_kill of memory.events.local." "$(f cgroup.memory $gi .explanation)"
	# The slice's count is its container's kills: no kill of its own, no critical.
	expect_eq "$src: the pod slice is not blamed for its container's kills" ok "$(f cgroup.memory "$pod" .severity)"
	expect_eq "$src: skipped groups make a warning" warning \
		"$(jget "$TMP/a.json" '.findings[] | select(.rule == "cgroup.coverage") | .severity')"
	# 12 of 4915 tasks: ok.
	expect_eq "$src: garage's pids ok" ok "$(f cgroup.pids $gi .severity)"
	di=system.slice/docker-$docker_id.scope
	# 57 forks refused, 100 of 100: critical, fixed with Docker's --pids-limit (2 x 100 = 200).
	expect_eq "$src: docker's pids critical" critical "$(f cgroup.pids "$di" .severity)"
	expect_contains "$src: forks refused" "Events at the limit: 57 (forks and clones the kernel refused at pids.max" "$(f cgroup.pids "$di" .explanation)"
	expect_contains "$src: docker's knob" "docker run --pids-limit" "$(f cgroup.pids "$di" .remedy)"
	expect_contains "$src: twice the peak" "(200 for the 100 it holds now)" "$(f cgroup.pids "$di" .remedy)"
	case $(f cgroup.pids "$di" .remedy) in
	*TasksMax*) not_ok "$src: no unit knob for a container" ;;
	*) ok "$src: no unit knob for a container" ;;
	esac
	expect_eq "$src: docker's memory not judged (no limit)" "" "$(f cgroup.memory "$di" .severity)"
	ki=$pod/cri-containerd-$cri_id.scope
	expect_eq "$src: the pod's memory critical" critical "$(f cgroup.memory "$ki" .severity)"
	expect_contains "$src: the pod's knob" "resources.limits.memory" "$(f cgroup.memory "$ki" .remedy)"
	# 2 of 10 tasks, 20%: ok; the instance is the path as it is.
	expect_eq "$src: the odd path, named as it is" ok "$(f cgroup.pids "system.slice/odd name@1.service" .severity)"
	# 6 kills on the host, 3 + 2 of them at groups' own limits: not every kill was.
	expect_contains "$src: host kills not all the groups'" "give the machine more RAM" "$(jget "$TMP/a.json" '.findings[] | select(.rule == "mem.pressure") | .remedy')"
done

# When the groups counted every kill of the host (3 + 2 of 5), mem.pressure says
# so and leaves the fix to them: no swap, no RAM.
put /proc/vmstat 'oom_kill 5\n'
ht --root "$T" --format json audit >"$TMP/b.json"
m() { jget "$TMP/b.json" ".findings[] | select(.rule == \"mem.pressure\") | $1"; }
expect_eq "all kills limited: still a warning" warning "$(m .severity)"
expect_contains "all kills limited: the group named as the cause" "Every one of the OOM kills was at a control group's own memory limit" "$(m .explanation)"
expect_eq "all kills limited: the lever" cgroup.memory "$(m .lever)"
expect_eq "all kills limited: no swap, no RAM" null "$(m .remedy)"

# cgroup v1: the memory and pids hierarchies, merged by path.
host "$TMP/v1"
mm=$cg/memory/system.slice/minio.service
put $mm/memory.limit_in_bytes '1073741824\n'
put $mm/memory.usage_in_bytes '734003200\n'
put $mm/memory.oom_control 'oom_kill_disable 0\nunder_oom 0\noom_kill 1\n'
put $mm/memory.failcnt '10\n'
put $mm/cgroup.procs '777\n'
put /proc/777/status 'Name:\tminio\nVmRSS:\t650000 kB\n'
put /proc/777/comm 'minio\n'
# No limit: PAGE_COUNTER_MAX pages in bytes (4 KiB pages).
put $cg/memory/user.slice/memory.limit_in_bytes '9223372036854771712\n'
put $cg/memory/user.slice/memory.usage_in_bytes '1000\n'
put $cg/pids/system.slice/minio.service/pids.max '4915\n'
put $cg/pids/system.slice/minio.service/pids.current '4000\n'
put $cg/pids/system.slice/minio.service/pids.events 'max 0\n'
ht --root "$T" facts >"$TMP/v1.facts"
expect_eq "v1: version" '"v1"' "$(fact "$TMP/v1.facts" cgroup.version | cut -d' ' -f1)"
expect_eq "v1: one group" '"system.slice_2fminio.service" from /sys/fs/cgroup' "$(fact "$TMP/v1.facts" cgroup.list)"
M=system.slice_2fminio.service
expect_eq "v1: memory.limit_in_bytes" "1073741824 bytes from /sys/fs/cgroup/memory/system.slice/minio.service/memory.limit_in_bytes" \
	"$(fact "$TMP/v1.facts" "cgroup.$M.memory_max")"
expect_eq "v1: oom_kill of memory.oom_control" "1 kills from /sys/fs/cgroup/memory/system.slice/minio.service/memory.oom_control" \
	"$(fact "$TMP/v1.facts" "cgroup.$M.memory_oom_kills")"
expect_eq "v1: failcnt" "10 events" "$(fact "$TMP/v1.facts" "cgroup.$M.memory_max_events" | cut -d' ' -f1-2)"
expect_eq "v1: pids from the pids hierarchy" "4000 tasks from /sys/fs/cgroup/pids/system.slice/minio.service/pids.current" \
	"$(fact "$TMP/v1.facts" "cgroup.$M.pids_current")"
ht --root "$T" --format json audit >"$TMP/c.json"
f() { jget "$TMP/c.json" ".findings[] | select(.rule == \"$1\" and .instance == \"system.slice/minio.service\") | $2"; }
expect_eq "v1: one kill, critical" critical "$(f cgroup.memory .severity)"
# 734003200 / 1073741824 = 68.4%.
expect_contains "v1: the share" "(68.4%)" "$(f cgroup.memory .explanation)"
expect_contains "v1: the files read, v1's" "read from memory.limit_in_bytes, and oom_kill of memory.oom_control." "$(f cgroup.memory .explanation)"
# 4000 / 4915 = 81.4%: at 75% or more, below 90%: warning.
expect_eq "v1: pids at 81.4%" warning "$(f cgroup.pids .severity)"
expect_contains "v1: pids share" "In use: 4000 of 4915 tasks (81.4%)" "$(f cgroup.pids .explanation)"

# A process in a container: its open-file limit is the runtime's to set, never a
# unit's LimitNOFILE. Each runtime's process listens on a port, 960 of 1024
# descriptors open (93.8%: critical), its cgroup as that runtime names it.
for rt in docker kubernetes podman lxc systemd; do
	host "$TMP/p-$rt"
	case $rt in
	docker) path=/system.slice/docker-$docker_id.scope ;;
	kubernetes) path=/$kube ;;
	podman) path=/machine.slice/libpod-$docker_id.scope ;;
	lxc) path=/lxc.payload.web1/system.slice/app.service ;;
	systemd) path=/system.slice/app.service ;;
	esac
	put /proc/net/tcp '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4711 1 ffff8d6c41a2b000 100 0 0 10 0\n'
	put /proc/900/comm 'app\n'
	put /proc/900/limits 'Limit                     Soft Limit           Hard Limit           Units     \nMax open files            1024                 4096                 files     \n'
	put /proc/900/cgroup "0::$path\n"
	mkdir -p "$T/proc/900/fd"
	ln -s 'socket:[4711]' "$T/proc/900/fd/0"
	(cd "$T/proc/900/fd" && seq 1 959 | xargs touch)
	ht --root "$T" --format json audit >"$TMP/p.json"
	r() { jget "$TMP/p.json" '.findings[] | select(.rule == "process.limit_nofile" and .instance == "app") | '"$1"; }
	expect_eq "$rt: 960 of 1024, critical" critical "$(r .severity)"
	want=""
	case $rt in
	docker) want="docker run's --ulimit nofile" ;;
	kubernetes) want="LimitNOFILE= of containerd.service or crio.service" ;;
	podman) want="default_ulimits in containers.conf" ;;
	lxc) want="lxc.prlimit.nofile" ;;
	esac
	if [ $rt = systemd ]; then
		expect_eq "systemd: the unit's drop-in" /etc/systemd/system/app.service.d/90-hosttune.conf "$(r .fix.file)"
	else
		expect_contains "$rt: the runtime's knob" "$want" "$(r .remedy)"
		expect_contains "$rt: named as the runtime's" "the $rt container's limit" "$(r .remedy)"
		expect_eq "$rt: no unit file" null "$(r .fix.file)"
		case $(r .remedy) in
		*"in the unit that starts it"*) not_ok "$rt: no unit's LimitNOFILE offered" ;;
		*) ok "$rt: no unit's LimitNOFILE offered" ;;
		esac
	fi
done
expect_eq "docker: the container's ID" '"3f4e5d6c7b8a"' "$(ht --root "$TMP/p-docker" facts | sed -n 's/^process.app.container = //p' | cut -d' ' -f1)"

# No cgroup file system at all: none to judge, and the audit says nothing of them.
host "$TMP/none"
put /proc/vmstat 'oom_kill 0\n'
ht --root "$T" facts >"$TMP/none.facts"
expect_eq "none: version" '"none"' "$(fact "$TMP/none.facts" cgroup.version | cut -d' ' -f1)"
ht --root "$T" --format json audit >"$TMP/d.json"
expect_eq "none: no cgroup finding" "" "$(jget "$TMP/d.json" '.findings[] | select(.rule | startswith("cgroup.")) | .rule')"
finish
