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
# A layer is one request body of any size (a monolithic PUT, or PATCH
# chunks of the client's choosing): no cap is large enough, so 0.
part_size = 0
# A layer's final PUT makes the registry check its digest by reading it
# whole and, with the s3 storage driver, move it (a server-side copy): for a
# layer of several GB, minutes with no byte sent to the proxy.
upstream_pause = 300s
