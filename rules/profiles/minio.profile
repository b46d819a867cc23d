# A MinIO S3 store: clients open one short-lived TCP connection per object,
# as with Garage, so connections end in TIME_WAIT at the rate objects move.
[profile]
include = default
description = MinIO S3 object store with one connection per object

[workload]
# The same S3 ingest as the garage profile: ~570 connections/s at peak from
# one client (7,000 in 12 s), 5-second bursts at ~3x the mean.
conn_rate = 200
object_rate = 200
burst = 3
mem_budget = 0.05
time_wait = 30s
storage = true
# MinIO's own systemd unit (minio/minio-service, linux-systemd/minio.service)
# sets LimitNOFILE=1048576: every S3 connection and every open part file of
# its erasure sets takes a descriptor, and systemd's default soft limit is
# 1024. 1048576 is also the kernel's default fs.nr_open, the ceiling of any
# RLIMIT_NOFILE.
service = "minio"
nofile = 1048576
