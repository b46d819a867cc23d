#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The connection-path rules (listen.rules, ports.rules, process.rules,
# conntrack-states.rules) over many hosts: each fixture host of
# tests/fixtures/verdict with its figures varied, and the severity, the
# recommendation and the arithmetic in the text worked out here
# independently of the rules.
. "$(dirname "$0")/lib.sh"

V=$FIXTURES/verdict

# finding JSON RULE INSTANCE: "severity|current|recommended|lever"
finding() {
	jq -r --arg r "$2" --arg i "$3" '.findings[] | select(.rule == $r and ((.instance // "") == $i))
		| "\(.severity)|\(.current)|\(.recommended)|\(.lever // "")"' "$1"
}

# ---- listen backlog: every (backlog, queue, somaxconn) of a grid ----------
# Port 22 stays at backlog 128, queue 0; port 9000 gets (b, q). capped:
# backlog == somaxconn; full: queue >= backlog (sk_acceptq_is_full() is
# queue > backlog: at queue == backlog the next handshake still fits, the
# one after overflows); half: 0 < 2 x queue >= backlog. somaxconn's
# recommendation: twice the cap when a port is at the cap and a queue is
# full now and the cap is 4096 or more, else max(somaxconn, 4096). A capped
# port is raised when that recommendation is above its backlog.
for s in 128 4096; do
	for b in 64 128 4096; do
		[ "$b" -gt "$s" ] && continue # the kernel never gives more than somaxconn
		for q in 0 10 64 128 129 4097; do
			[ "$q" -gt $((b + 1)) ] && continue # at most backlog + 1 wait
			capped=0 full=0 half=0 at=0
			[ "$b" -eq "$s" ] && capped=1
			[ "$q" -ge "$b" ] && full=1
			[ "$q" -gt 0 ] && [ $((q * 2)) -ge "$b" ] && half=1
			[ "$s" -eq 128 ] && at=1 # port 22
			at=$((at + capped))
			vary "$V/listen-capped-419.facts" "$TMP/l.facts" "net.core.somaxconn=$s entries" \
				"listener.9000.backlog=$b entries" "listener.9000.queue=$q entries"
			ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
			if [ "$at" -gt 0 ] && [ $full = 1 ] && [ "$s" -ge 4096 ]; then somax=$((s * 2))
			elif [ "$s" -gt 4096 ]; then somax=$s
			else somax=4096; fi
			raise=0
			[ $capped = 1 ] && [ "$somax" -gt "$b" ] && raise=1
			if [ $full = 1 ]; then sev=critical
			elif [ $raise = 1 ] && [ $half = 1 ]; then sev=warning
			elif [ $raise = 1 ]; then sev=info
			else sev=ok; fi
			lever=
			[ $raise = 1 ] && { [ $full = 1 ] || [ $half = 1 ]; } && lever=listen.somaxconn
			rec=$b
			[ $raise = 1 ] && rec=$somax
			# A port with nothing to report (neither half full nor full nor to
			# be raised) has no row: listen.somaxconn counts it.
			want="$sev|$b|$rec|$lever"
			[ $half = 0 ] && [ $full = 0 ] && [ $raise = 0 ] && want=
			expect_eq "listen.backlog somaxconn $s backlog $b queue $q" "$want" \
				"$(finding "$TMP/l.json" listen.backlog 9000)"
			# somaxconn: warning when a port is at the cap and there is evidence
			# (a full queue now, or the fixture's 5312 overflows since boot),
			# unless port 9000 is full at a backlog of its own below the cap:
			# the overflows are its, and somaxconn does not raise it (info).
			if [ "$s" -lt "$somax" ] && [ "$at" -gt 0 ] && ! { [ $full = 1 ] && [ $capped = 0 ]; }; then
				ssev=warning
			elif [ "$s" -lt "$somax" ]; then ssev=info
			else ssev=ok; fi
			expect_eq "listen.somaxconn somaxconn $s, $at at the cap, full $full" "$ssev|$s|$somax|" \
				"$(finding "$TMP/l.json" listen.somaxconn "")"
		done
	done
done

# The field case in full: MinIO's port 9000 full at 129 of 128 on 4.19.
ht --facts "$V/listen-capped-419.facts" --format json audit >"$TMP/l.json"
expect_eq "minio 9000: critical, names the process and the restart" \
	"raise net.core.somaxconn to 4096 (hosttune apply), then restart minio so that it listens again with the larger backlog." \
	"$(jq -r '.findings[] | select(.rule == "listen.backlog" and .instance == "9000") | .remedy' "$TMP/l.json")"
expect_contains "minio 9000: the queue and backlog" \
	"Port 9000 (minio, PID 812) has 129 connections waiting for accept() now and a backlog of 128 (net.core.somaxconn is 128;" \
	"$(jq -r '.findings[] | select(.rule == "listen.backlog" and .instance == "9000") | .explanation' "$TMP/l.json")"
# 5312 overflows since boot and 2 ports at the cap: somaxconn is a warning
# with its sysctl.d fix; 4.19's own default is 128 (SOMAXCONN before 5.4).
expect_eq "somaxconn: warning, 128 -> 4096" "warning|128|4096|" "$(finding "$TMP/l.json" listen.somaxconn "")"
expect_eq "somaxconn: the sysctl.d line" "net.core.somaxconn = 4096" \
	"$(jq -r '.findings[] | select(.rule == "listen.somaxconn") | .fix.line' "$TMP/l.json")"
expect_contains "somaxconn: the evidence" "5312 overflows of an accept queue (nstat TcpExtListenOverflows;" \
	"$(jq -r '.findings[] | select(.rule == "listen.somaxconn") | .explanation' "$TMP/l.json")"
# No overflow and no full queue: somaxconn 128 is only info.
vary "$V/listen-capped-419.facts" "$TMP/l.facts" "nstat.TcpExtListenOverflows=0 packets" \
	"listener.9000.queue=0 entries"
ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
expect_eq "somaxconn without evidence: info" "info|128|4096|" "$(finding "$TMP/l.json" listen.somaxconn "")"
# Read twice, 5 s apart (--sample): the 5312 overflows since boot did not
# move (0 in the interval) and no queue is full now: the cap is not biting
# now, info, and the text gives both figures. 17 overflows (and 17 drops) in
# the interval with 2 ports at the cap: a warning, counted over the interval.
vary "$V/listen-capped-419.facts" "$TMP/l.facts" "listener.9000.queue=0 entries" \
	"nstat.TcpExtListenOverflows.delta=0 packets" "nstat.TcpExtListenDrops.delta=0 packets" \
	"sample.seconds=5.01 seconds"
ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
expect_eq "somaxconn, old overflows, sampled quiet: info" "info|128|4096|" \
	"$(finding "$TMP/l.json" listen.somaxconn "")"
expect_contains "somaxconn, sampled quiet: the interval, and since boot" \
	"In the last 5 s the kernel counted 0 overflows of an accept queue (nstat TcpExtListenOverflows; TcpExtListenDrops counts them with other drops): each is a handshake a client has to retransmit. Since boot: 5312." \
	"$(jq -r '.findings[] | select(.rule == "listen.somaxconn") | .explanation' "$TMP/l.json" | tr '\n' ' ' | tr -s ' ')"
# A facts file sampled without the drops' delta: the sentence over the
# interval never counts the 5312 drops since boot.
vary "$V/listen-capped-419.facts" "$TMP/l.facts" "listener.9000.queue=0 entries" \
	"nstat.TcpExtListenOverflows.delta=0 packets" "sample.seconds=5.01 seconds"
ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
expect_contains "somaxconn, sampled without the drops' delta: overflows only" \
	"In the last 5 s the kernel counted 0 overflows of an accept queue (nstat TcpExtListenOverflows;" \
	"$(jq -r '.findings[] | select(.rule == "listen.somaxconn") | .explanation' "$TMP/l.json" | tr '\n' ' ' | tr -s ' ')"
vary "$V/listen-capped-419.facts" "$TMP/l.facts" "listener.9000.queue=0 entries" \
	"nstat.TcpExtListenOverflows.delta=17 packets" "nstat.TcpExtListenDrops.delta=17 packets" \
	"sample.seconds=5.01 seconds"
ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
expect_eq "somaxconn, overflows in the interval: warning" "warning|128|4096|" \
	"$(finding "$TMP/l.json" listen.somaxconn "")"
expect_contains "somaxconn, overflows in the interval: counted there" \
	"In the last 5 s the kernel counted 17 overflows of an accept queue" \
	"$(jq -r '.findings[] | select(.rule == "listen.somaxconn") | .explanation' "$TMP/l.json" | tr '\n' ' ' | tr -s ' ')"
# SYN-queue evidence alone (no overflow, no full queue): 731 SYNs answered
# with cookies because a SYN queue was full (TcpExtTCPReqQFullDoCookies,
# tcp_syncookies = 1) and 2 ports at the cap: the cap bites, a warning. With
# tcp_syncookies = 2 every SYN gets a cookie and counts there: no evidence,
# info. Cookies off, 40 SYNs dropped (TcpExtTCPReqQFullDrop): a warning.
vary "$V/listen-capped-419.facts" "$TMP/l.facts" "nstat.TcpExtListenOverflows=0 packets" \
	"nstat.TcpExtListenDrops=0 packets" "listener.9000.queue=0 entries" \
	"nstat.TcpExtTCPReqQFullDoCookies=731 packets" "net.ipv4.tcp_syncookies=1"
ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
expect_eq "somaxconn with full SYN queues: warning" "warning|128|4096|" \
	"$(finding "$TMP/l.json" listen.somaxconn "")"
expect_contains "somaxconn: the SYN-queue evidence" \
	"731 SYNs met a full SYN queue (TcpExtTCPReqQFullDoCookies" \
	"$(jq -r '.findings[] | select(.rule == "listen.somaxconn") | .explanation' "$TMP/l.json")"
vary "$V/listen-capped-419.facts" "$TMP/l.facts" "nstat.TcpExtListenOverflows=0 packets" \
	"nstat.TcpExtListenDrops=0 packets" "listener.9000.queue=0 entries" \
	"nstat.TcpExtTCPReqQFullDoCookies=731 packets" "net.ipv4.tcp_syncookies=2"
ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
expect_eq "somaxconn, cookies always on (tcp_syncookies = 2): no evidence, info" "info|128|4096|" \
	"$(finding "$TMP/l.json" listen.somaxconn "")"
# A kernel or snapshot without TcpExtTCPReqQFullDoCookies: TcpExtSyncookiesSent
# (500, tcp_syncookies = 1: a cookie is sent only for a full SYN queue) is
# the same evidence: 500 SYNs, a warning with 2 ports at the cap. With
# tcp_syncookies = 2 it counts every SYN: info.
vary "$V/listen-capped-419.facts" "$TMP/l.facts" "nstat.TcpExtListenOverflows=0 packets" \
	"nstat.TcpExtListenDrops=0 packets" "listener.9000.queue=0 entries" \
	"nstat.TcpExtSyncookiesSent=500 packets" "net.ipv4.tcp_syncookies=1"
ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
expect_eq "somaxconn with SyncookiesSent only: warning" "warning|128|4096|" \
	"$(finding "$TMP/l.json" listen.somaxconn "")"
expect_contains "somaxconn: SyncookiesSent named" \
	"500 SYNs met a full SYN queue (TcpExtSyncookiesSent," \
	"$(jq -r '.findings[] | select(.rule == "listen.somaxconn") | .explanation' "$TMP/l.json")"
vary "$V/listen-capped-419.facts" "$TMP/l.facts" "nstat.TcpExtListenOverflows=0 packets" \
	"nstat.TcpExtListenDrops=0 packets" "listener.9000.queue=0 entries" \
	"nstat.TcpExtSyncookiesSent=500 packets" "net.ipv4.tcp_syncookies=2"
ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
expect_eq "somaxconn, SyncookiesSent with tcp_syncookies = 2: info" "info|128|4096|" \
	"$(finding "$TMP/l.json" listen.somaxconn "")"
vary "$V/listen-capped-419.facts" "$TMP/l.facts" "nstat.TcpExtListenOverflows=0 packets" \
	"nstat.TcpExtListenDrops=0 packets" "listener.9000.queue=0 entries" \
	"nstat.TcpExtTCPReqQFullDrop=40 packets" "net.ipv4.tcp_syncookies=0"
ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
expect_eq "somaxconn, SYNs dropped by a full SYN queue: warning" "warning|128|4096|" \
	"$(finding "$TMP/l.json" listen.somaxconn "")"
# 5.4 and later: 4096 is the default, nothing to do.
vary "$V/listen-capped-419.facts" "$TMP/l.facts" "kernel.version=v5.4.0" "net.core.somaxconn=4096 entries"
ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
expect_eq "somaxconn 4096 on 5.4: ok" "ok|4096|4096|" "$(finding "$TMP/l.json" listen.somaxconn "")"
# One port at the cap of 4096 (22, idle) and another full (9000, 129 of
# 128): the full queue is not at the cap, so the cap is no reason to double:
# max(4096, 4096) = 4096. The same full queue on the capped port: 2 x 4096.
vary "$V/listen-capped-419.facts" "$TMP/l.facts" "kernel.version=v5.4.0" "net.core.somaxconn=4096 entries" \
	"listener.22.backlog=4096 entries" "listener.9000.backlog=128 entries" "listener.9000.queue=129 entries"
ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
expect_eq "somaxconn: capped 22 idle, 9000 full below the cap: stays 4096" "4096" \
	"$(finding "$TMP/l.json" listen.somaxconn "" | cut -d'|' -f3)"
vary "$V/listen-capped-419.facts" "$TMP/l.facts" "kernel.version=v5.4.0" "net.core.somaxconn=4096 entries" \
	"listener.22.backlog=4096 entries" "listener.22.queue=4097 entries"
ht --facts "$TMP/l.facts" --format json audit >"$TMP/l.json"
expect_eq "somaxconn: capped 22 full: twice the cap" "8192" \
	"$(finding "$TMP/l.json" listen.somaxconn "" | cut -d'|' -f3)"

# ---- ephemeral ports: the busiest destination's share of the range ---------
# size = high - low + 1; critical at 90% or more, warning above half.
for range in "32768 60999" "40000 40099" "1024 65535"; do
	low=${range% *} high=${range#* }
	size=$((high - low + 1))
	for s in 0 10 $((size / 2)) $((size / 2 + 1)) $((size * 9 / 10 - 1)) $((size * 9 / 10 + 1)) $size; do
		vary "$V/ports-client-61.facts" "$TMP/p.facts" "ports.range.low=$low ports" \
			"ports.range.high=$high ports" "ports.top.sockets=$s sockets" \
			"ports.top.time_wait=$s sockets" "net.ipv4.ip_local_port_range=\"$low $high\""
		ht --facts "$TMP/p.facts" --format json audit >"$TMP/p.json"
		if [ $((s * 10)) -ge $((size * 9)) ]; then sev=critical
		elif [ $((s * 2)) -gt "$size" ]; then sev=warning
		else sev=ok; fi
		lever=
		[ "$sev" != ok ] && lever=ports.tw_reuse
		# An advice without a value: the range's size is in the text, not a recommendation.
		expect_eq "ports $low-$high, $s sockets" "$sev|$s|null|$lever" \
			"$(finding "$TMP/p.json" ports.ephemeral "")"
		# tcp_tw_reuse 2 -> 1 only under pressure (timestamps on).
		reuse="ok|2|2|"
		[ "$sev" != ok ] && reuse="warning|2|1|"
		expect_eq "tw_reuse with $s of $size ports" "$reuse" "$(finding "$TMP/p.json" ports.tw_reuse "")"
	done
done
# The issue's case: 90 sockets in TIME_WAIT to one destination, 100 ports.
vary "$V/ports-client-61.facts" "$TMP/p.facts" "ports.range.low=40000 ports" "ports.range.high=40099 ports" \
	"ports.top.sockets=90 sockets" "ports.top.time_wait=90 sockets"
ht --facts "$TMP/p.facts" --format json audit >"$TMP/p.json"
# 100 / 60 = 1.67: one new connection a second.
expect_contains "90 / 100 in the text" \
	"In use: 90 of 100 ports (90.0%)" \
	"$(jq -r '.findings[] | select(.rule == "ports.ephemeral") | .explanation' "$TMP/p.json")"
expect_contains "100 ports / 60 s = 1/s" "at a rate of at most 100 / 60 s = 1/s." \
	"$(jq -r '.findings[] | select(.rule == "ports.ephemeral") | .explanation' "$TMP/p.json")"
expect_contains "the primary advice: reuse connections" "instead of one connection per object" \
	"$(jq -r '.findings[] | select(.rule == "ports.ephemeral") | .remedy' "$TMP/p.json")"
# A loopback destination under tcp_tw_reuse 2 (loopback only): reuse is on
# already; no lever, nothing to change.
vary "$V/ports-client-61.facts" "$TMP/p.facts" "ports.top.loopback=true" \
	"ports.top.destination=\"127.0.0.1:3900\"" "ports.top.source=\"127.0.0.1\""
ht --facts "$TMP/p.facts" --format json audit >"$TMP/p.json"
expect_eq "loopback under reuse 2: critical without the tw_reuse lever" "critical|26000|null|" \
	"$(finding "$TMP/p.json" ports.ephemeral "")"
expect_eq "loopback under reuse 2: tw_reuse ok" "ok|2|2|" "$(finding "$TMP/p.json" ports.tw_reuse "")"
expect_contains "loopback under reuse 2: said" "which 2 already covers" \
	"$(jq -r '.findings[] | select(.rule == "ports.tw_reuse") | .explanation' "$TMP/p.json")"
# Timestamps off: tcp_tw_reuse would never apply; no lever to it.
vary "$V/ports-client-61.facts" "$TMP/p.facts" "net.ipv4.tcp_timestamps=0"
ht --facts "$TMP/p.facts" --format json audit >"$TMP/p.json"
expect_eq "timestamps off: critical without the tw_reuse lever" "critical|26000|null|" \
	"$(finding "$TMP/p.json" ports.ephemeral "")"
expect_eq "timestamps off: tw_reuse left alone" "ok|2|2|" "$(finding "$TMP/p.json" ports.tw_reuse "")"

# ---- open files: near the limit, and the profile's service -----------------
# near (critical): fds >= nofile - nofile / 10; high (warning): fds >=
# nofile - nofile / 4, for any process; the garage profile's service needs
# 42000, a plan (info) unless its admin states it (--set workload.nofile).
pow2ceil() { n=1; while [ "$n" -lt "$1" ]; do n=$((n * 2)); done; echo "$n"; }
for profile in default garage; do
	for nofile in 1024 65536; do
		for fds in 7 900 922 1000 60000; do
			[ "$fds" -gt "$nofile" ] && continue
			vary "$V/nofile-garage-515.facts" "$TMP/n.facts" "process.garage.nofile=$nofile descriptors" \
				"process.garage.fds=$fds descriptors"
			ht --facts "$TMP/n.facts" --profile "$profile" --format json audit >"$TMP/n.json"
			near=0 high=0
			[ "$fds" -ge $((nofile - nofile / 10)) ] && near=1
			[ "$fds" -ge $((nofile - nofile / 4)) ] && high=1
			need=0
			[ "$profile" = garage ] && need=42000
			[ $high = 1 ] && [ "$(pow2ceil $((fds * 2)))" -gt "$need" ] && need=$(pow2ceil $((fds * 2)))
			rec=$nofile
			[ "$need" -gt "$rec" ] && rec=$need
			if [ $near = 1 ]; then sev=critical
			elif [ $high = 1 ]; then sev=warning
			elif [ "$profile" = garage ] && [ "$nofile" -lt 42000 ]; then sev=info
			else sev=ok; fi
			expect_eq "nofile $profile: $fds of $nofile" "$sev|$nofile|$rec|" \
				"$(finding "$TMP/n.json" process.limit_nofile garage)"
		done
	done
done
ht --facts "$V/nofile-garage-515.facts" --profile garage --format json audit >"$TMP/n.json"
expect_contains "garage: Garage's own unit named" "sets LimitNOFILE=42000" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile" and .instance == "garage") | .explanation' "$TMP/n.json")"
expect_contains "garage: the restart named" "A process keeps the limit it started with: a new one takes effect when it next starts" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile" and .instance == "garage") | .explanation' "$TMP/n.json")"
# sshd: 7 of 1024, not the profile's service: ok, nothing to change.
expect_eq "sshd: ok" "ok|1024|1024|" "$(finding "$TMP/n.json" process.limit_nofile sshd)"
# Outside a service: no drop-in, the remedy says where to raise it.
grep -v '^process.garage.unit' "$V/nofile-garage-515.facts" >"$TMP/n.facts"
ht --facts "$TMP/n.facts" --profile garage --format json audit >"$TMP/n.json"
expect_contains "garage outside systemd: the remedy" "runs in no system service hosttune can write a drop-in for" \
	"$(jq -r '.findings[] | select(.rule == "process.limit_nofile" and .instance == "garage") | .remedy' "$TMP/n.json")"

# ---- conntrack by state ---------------------------------------------------
# kube: (131072 - (30000 + 60000)) / 120 = 342.27 < garage's peak 200 x 3 =
# 600, while 131072 / 120 = 1092.27 >= 600: the long-lived entries bite.
ht --facts "$V/ct-kube-closewait-515.facts" --profile garage --format json audit >"$TMP/c.json"
expect_eq "kube states: warning, lever close_wait" "warning|90000|null|conntrack.close_wait_timeout" \
	"$(finding "$TMP/c.json" conntrack.states "")"
expect_contains "kube states: the arithmetic" "(131072 - 90000) / 120 s = 342 new connections/s" \
	"$(jq -r '.findings[] | select(.rule == "conntrack.states") | .explanation' "$TMP/c.json")"
# 60000 / 131072 = 45.8% in CLOSE_WAIT at kube-proxy's 3600 s: warning, no
# sysctl.d line (kube-proxy rewrites it), its flag named. 60000 x 60 / 3600 = 1000.
expect_eq "kube close_wait: warning 3600 -> 60" "warning|3600|60|" \
	"$(finding "$TMP/c.json" conntrack.close_wait_timeout "")"
expect_eq "kube close_wait: no file, kube-proxy's flag" "null|true" \
	"$(jq -r '.findings[] | select(.rule == "conntrack.close_wait_timeout") | "\(.fix)|\(.remedy | test("--conntrack-tcp-timeout-close-wait"))"' "$TMP/c.json")"
expect_contains "kube close_wait: at 60 s" "at the kernel's 60 s the same churn holds 1000" \
	"$(jq -r '.findings[] | select(.rule == "conntrack.close_wait_timeout") | .explanation' "$TMP/c.json")"
# kube-proxy's 86400 s ESTABLISHED is already what hosttune would pick: ok.
expect_eq "kube established: ok" "ok|86400|86400|" "$(finding "$TMP/c.json" conntrack.established_timeout "")"
# 5000 / 131072 = 3.8% SYN_SENT: below 5%, ok.
expect_eq "kube syn_sent 3.8%: ok" "ok|5000|null|" "$(finding "$TMP/c.json" conntrack.syn_sent "")"
vary "$V/ct-kube-closewait-515.facts" "$TMP/c.facts" "conntrack.state.SYN_SENT=6554 entries"
ht --facts "$TMP/c.facts" --profile garage --format json audit >"$TMP/c.json"
# 6554 / 131072 = 5.0003% >= 5%: warning with the remedy.
expect_eq "syn_sent 5%: warning" "warning|6554|null|" "$(finding "$TMP/c.json" conntrack.syn_sent "")"

# stale: 38000 / 65536 = 58% ESTABLISHED idle an hour or more; (65536 -
# 40000) / 120 = 212.8 < 600 (garage): warning, 432000 -> 86400.
ht --facts "$V/ct-stale-515.facts" --profile garage --format json audit >"$TMP/s.json"
expect_eq "stale established: warning 432000 -> 86400" "warning|432000|86400|" \
	"$(finding "$TMP/s.json" conntrack.established_timeout "")"
expect_eq "stale established: the sysctl.d line" \
	"net.netfilter.nf_conntrack_tcp_timeout_established = 86400" \
	"$(jq -r '.findings[] | select(.rule == "conntrack.established_timeout") | .fix.line' "$TMP/s.json")"
expect_contains "stale established: the share" "38000 / 65536 = 58.0% of the table's cap" \
	"$(jq -r '.findings[] | select(.rule == "conntrack.established_timeout") | .explanation' "$TMP/s.json")"
# The default profile: peak 100 x 2 = 200 < 212.8, and 48000 / 65536 =
# 73% is below 90%: the stale share alone is only info.
ht --facts "$V/ct-stale-515.facts" --format json audit >"$TMP/s.json"
expect_eq "stale established, room left: info" "info|432000|86400|" \
	"$(finding "$TMP/s.json" conntrack.established_timeout "")"

# ---- listen.somaxconn under --root: backlogs unknown ----------------------
# /proc/net/tcp gives the listeners (3 in the listen-host tree: ports 3900,
# 3901, 22) but not their backlogs, so whether one is at the cap is unknown:
# no evidence for twice the cap, and the recommendation is max(128, 4096) =
# 4096 at info, not n/a.
rm -rf "$TMP/lt"
cp -a "$FIXTURES/garage-vm/root" "$TMP/lt"
cp "$FIXTURES"/listen-host/root/proc/net/tcp "$FIXTURES"/listen-host/root/proc/net/tcp6 "$TMP/lt/proc/net/"
mkdir -p "$TMP/lt/proc/sys/net/core"
echo 128 >"$TMP/lt/proc/sys/net/core/somaxconn"
ht --root "$TMP/lt" --no-measure --format json audit >"$TMP/lt.json"
expect_eq "--root, backlogs unknown: somaxconn 128 -> 4096 at info" "info|128|4096|" \
	"$(finding "$TMP/lt.json" listen.somaxconn "")"
expect_eq "--root: listen.cap_full is false, not unknown" false \
	"$(jq -r '.values["listen.cap_full"]' "$TMP/lt.json")"
expect_contains "--root: the text says the backlogs are unknown" "their backlogs unknown here (/proc/net/tcp has none" \
	"$(jq -r '.findings[] | select(.rule == "listen.somaxconn") | .explanation' "$TMP/lt.json")"
ht --root "$TMP/lt" --no-measure plan >"$TMP/lt.plan"
expect_contains "--root: plan writes somaxconn" "net.core.somaxconn = 4096" "$(cat "$TMP/lt.plan")"

finish
