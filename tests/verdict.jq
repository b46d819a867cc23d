# The one-story properties P1-P6 of tests/verdict.sh over one audit report
# (jq -r -f tests/verdict.jq REPORT.json): one line per violation, nothing
# when the report holds. Also read by tests/generated-hosts.sh.
def bad_text: test("\\(unavailable\\)|[{}]| [.,:;]( |$)|  ");
. as $r
| ($r.findings | map({key: .rule, value: .}) | from_entries) as $by
| $r.findings[] | select(.applicable) | . as $f
| (
    (if ((.explanation // "") | bad_text) then "P1 explanation: \(.explanation)" else empty end),
    (if ((.remedy // "") | bad_text) then "P1 remedy: \(.remedy)" else empty end),
    (if (.severity == "warning" or .severity == "critical")
        and .fix == null and .remedy == null
        and ((.lever // null) == null
             # A per-instance lever (cgroup.memory): any of its findings with a fix.
             or ([$r.findings[] | select(.rule == $f.lever and (.fix != null or .remedy != null))]
                 | length) == 0)
     then "P2 \(.severity) without a fix, remedy or lever" else empty end),
    (if .severity == "ok" and (.fix != null or .lever != null or .remedy != null)
     then "P3 ok with a fix, remedy or lever" else empty end),
    (if .fix != null and .recommended == .current then "P4 fix that changes nothing" else empty end),
    (if .kept and .fix != null then "P4 kept with a fix" else empty end),
    (if .rule == "conntrack.max" and $r.values["conntrack.pinned"] == true
        and .severity != "critical" then "P5 full table is \(.severity)" else empty end),
    (if .rule == "conntrack.max" and $r.values["conntrack.near_cap"] == true
        and (.severity == "ok" or .severity == "info")
     then "P5 table at 90% or more is \(.severity)" else empty end),
    (if .rule == "conntrack.max" and $r.values["conntrack.owned"] == true
        and (.fix != null
             or (.recommended > .current
                 and ((.remedy // "") | test("--conntrack-max-per-core") | not))
             or (.explanation | test("kube-proxy") | not))
     then "P6 owned value: fix \(.fix), remedy \(.remedy)" else empty end)
  )
| "\($f.rule)\(if $f.instance then "[\($f.instance)]" else "" end): \(.)"
