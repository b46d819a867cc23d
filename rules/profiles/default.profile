# The default workload: a general server. Every workload variable the
# shipped rules use is set here; other profiles include this one and
# override what differs.
[profile]
description = general server with modest connection churn

[workload]
# Expected peak new TCP connections per second through the host.
conn_rate = 100
# Peak-to-mean factor of that rate (bursts over a few seconds).
burst = 2
# Fraction of RAM that kernel tables (the conntrack table) may take.
mem_budget = 0.05
# The conntrack TIME_WAIT to recommend; 120 s is the kernel default
# (net/netfilter/nf_conntrack_proto_tcp.c, tcp_timeouts[TCP_CONNTRACK_TIME_WAIT]).
time_wait = 120s
# Whether the host serves storage over the network (link-speed rules).
storage = false
# The storage service's process name (comm), checked even when it listens
# on no port yet; "" for none. Its open-file limit is judged against nofile.
service = ""
# Open files the service needs (LimitNOFILE); 0 when its documentation
# names no figure: only a process near its limit is then a finding.
nofile = 0
# Objects written a second (PUTs); the Garage rules hold the measured fsync
# rate of the metadata directory against it. 0: no figure, only the rate is
# shown.
object_rate = 0
# The largest request body a client sends (a multipart part): the AWS CLI's
# default multipart_chunksize, 8 MiB (s3transfer's TransferConfig); a
# reverse proxy's body cap below it answers 413 to every such part. 0 for
# unbounded.
part_size = 8MiB
# The longest pause of the store before it answers a request whose body it
# read; 0: no figure, the proxy's idle timers are not judged against one.
upstream_pause = 0s

[garage]
# Where Garage's files are, read only when no garage.toml exists yet (a
# pre-flight before deployment). "" for config: look for it (the garage
# unit's -c PATH, else /etc/garage.toml). The directories are those of
# Garage's systemd unit (doc/book/cookbook/systemd.md: StateDirectory=garage).
config = ""
metadata_dir = "/var/lib/garage/meta"
data_dir = "/var/lib/garage/data"
