# A Garage S3 store: clients open one short-lived TCP connection
# per object, so connections end in TIME_WAIT at the rate objects move.
[profile]
include = default
description = Garage S3 object store with one connection per object

[workload]
# A log ingest of small objects from one client runs at ~570 connections/s
# (7,000 in 12 s), with 5-second bursts at ~3x the mean (../shared fixtures).
conn_rate = 200
# One object per connection: as many PUTs a second as connections.
object_rate = 200
burst = 3
mem_budget = 0.05
# Short-lived connections: 30 s still covers the 2 x MSL a late segment
# needs on a LAN, and quarters the table's working set.
time_wait = 30s
storage = true
# Garage's own systemd unit (doc/book/cookbook/systemd.md) sets
# LimitNOFILE=42000: every S3 connection, RPC peer and open block file
# takes a descriptor, and systemd's default soft limit is 1024.
service = "garage"
nofile = 42000
