# A container registry or pull-through cache: fewer, larger transfers than
# an S3 ingest, but many parallel layer fetches at deploy time.
[profile]
include = default
description = container registry or pull-through cache

[workload]
conn_rate = 300
burst = 3
time_wait = 30s
storage = true
# The CNCF distribution registry's binary.
service = "registry"
