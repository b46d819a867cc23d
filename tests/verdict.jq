# The one-story properties P1-P6 and P8 of tests/verdict.sh over one audit report
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
    # P8, a limit's story: at warning or above it names where it is set; a
    # holder of more than half of it is named in the text, and a stray one
    # gets no larger limit and the fix at the holder.
    (if .limit != null and (.severity == "warning" or .severity == "critical")
        and .limit.source == null
     then "P8 limit at \(.severity) without its source" else empty end),
    (if .limit != null and .limit.holder != null and .limit.held != null
        and .limit.held * 2 > .limit.usage
        and ($f.explanation | contains("The largest holder is " + $f.limit.holder) | not)
     then "P8 holder of most of it unnamed: \(.limit.holder)" else empty end),
    (if .limit != null and .limit.stray and .limit.held != null
        and .limit.held * 2 > .limit.usage
        and (.fix != null or ((.remedy // "") | startswith("stop what fills it") | not))
     then "P8 stray holder of most of it, fix \(.fix), remedy \(.remedy)" else empty end),
    (if .rule == "conntrack.max" and $r.values["conntrack.owned"] == true
        and (.fix != null
             or (.recommended > .current
                 and ((.remedy // "") | test("--conntrack-max-per-core") | not))
             or (.explanation | test("kube-proxy") | not))
     then "P6 owned value: fix \(.fix), remedy \(.remedy)" else empty end)
  )
| "\($f.rule)\(if $f.instance then "[\($f.instance)]" else "" end): \(.)"
