#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# prof-export's conversion rate and memory (bench/run.sh runs it; alone it refreshes only its
# section of docs/PERFORMANCE.md, between "export:begin" and "export:end"). For each size in
# BENCH_EXPORT_EVENTS (default 10^7 and 10^8 events), bench/otf2_raw writes a trace (one location,
# Enter/Leave of one region); then, interleaved, BENCH_REPS times each: bench/otf2_read (the OTF2
# library alone reading every event through its global reader: the floor) and prof-export (default
# --split 512M). Reported: min and median seconds and events/s, the ratio of the rates, prof-export's
# peak resident memory (max over the repetitions) and the output size against the OTF2 archive;
# and prof-report --json on the same experiment (the trace scan behind its timeline).
#   bench/export.sh [build-dir] [doc]     knobs: BENCH_REPS (3), BENCH_EXPORT_EVENTS ("10000000 100000000")
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
doc=${2:-${BENCH_DOC:-$src/docs/PERFORMANCE.md}}
reps=${BENCH_REPS:-3}
sizes=${BENCH_EXPORT_EVENTS:-10000000 100000000}
bin=$build/bench/run
mkdir -p "$bin"
cc -O2 "$here/otf2_raw.c" -o "$bin/otf2_raw" $(pkg-config --cflags --libs otf2)
cc -O2 "$here/otf2_read.c" -o "$bin/otf2_read" $(pkg-config --cflags --libs otf2)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-bench-export.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=$bin/export.txt
: >"$out"
for n in $sizes; do
  rm -rf "$tmp/t" && mkdir -p "$tmp/t"
  "$bin/otf2_raw" "$n" "$tmp/t" >/dev/null
  otf2_bytes=$(du -sb "$tmp/t" | cut -f1)
  for ((r = 1; r <= reps; r++)); do
    line=$("$bin/otf2_read" "$tmp/t/traces.otf2")
    echo "events=$n variant=read rep=$r ns=$(sed -E 's/.*read_ns=([0-9]+).*/\1/' <<<"$line")" >>"$out"
    rm -f "$tmp"/out*.pftrace
    t0=$(date +%s%N)
    /usr/bin/time -f "%M" -o "$tmp/rss" "$build/bin/prof-export" -q -o "$tmp/out.pftrace" "$tmp/t" >/dev/null
    t1=$(date +%s%N)
    pf_bytes=$(cat "$tmp"/out*.pftrace | wc -c)
    files=$(ls "$tmp"/out*.pftrace | wc -l)
    echo "events=$n variant=export rep=$r ns=$((t1 - t0)) rss_kib=$(cat "$tmp/rss") otf2_bytes=$otf2_bytes pftrace_bytes=$pf_bytes files=$files" >>"$out"
    rm -f "$tmp"/out*.pftrace
    t0=$(date +%s%N)
    "$build/bin/prof-report" --json "$tmp/t" >/dev/null
    t1=$(date +%s%N)
    echo "events=$n variant=report rep=$r ns=$((t1 - t0))" >>"$out"
  done
  rm -f "$tmp"/out*.pftrace
done
cat "$out"
/usr/bin/python3 - "$out" "$doc" "$here" <<'PY'
import collections, datetime, os, platform, statistics, subprocess, sys
out, doc, here = sys.argv[1:4]
sys.path.insert(0, here)
from doc_section import put_section
rows = collections.defaultdict(list)
extra = {}
for line in open(out):
    kv = dict(f.split("=", 1) for f in line.split())
    n = int(kv["events"])
    rows[(n, kv["variant"])].append(int(kv["ns"]) / 1e9)
    if kv["variant"] == "export":
        e = extra.setdefault(n, dict(rss=0, otf2=int(kv["otf2_bytes"]), pf=int(kv["pftrace_bytes"]), files=int(kv["files"])))
        e["rss"] = max(e["rss"], int(kv["rss_kib"]))
cpu = subprocess.run("lscpu | sed -n 's/^Model name: *//p'", shell=True, capture_output=True, text=True).stdout.strip()
lines = ["<!-- export:begin (bench/export.sh writes this section) -->", "## prof-export: OTF2 to Perfetto", "",
         "%s, %s, %d cores; %s. bench/export.sh: a trace of N events from bench/otf2_raw (one location, "
         "Enter/Leave of one region), read by bench/otf2_read (the OTF2 library's global event reader alone, "
         "as prof-export uses it: the floor) and converted by prof-export (default --split 512M), interleaved, "
         "%d repetitions each; seconds from start to exit." % (
             datetime.date.today(), cpu or platform.processor(), os.cpu_count(), platform.platform(),
             len(rows[next(iter(rows))])), "",
         "| events | OTF2 read, s (min / median) | prof-export, s (min / median) | rate, M events/s (read / export, by min) | export / read rate | peak memory | OTF2 archive | .pftrace (files) | size ratio | prof-report, s (min / median) |",
         "|---|---|---|---|---|---|---|---|---|---|"]
for n in sorted({k[0] for k in rows}):
    rd, ex, rp = rows[(n, "read")], rows[(n, "export")], rows[(n, "report")]
    e = extra[n]
    lines.append("| %.0e | %.2f / %.2f | %.2f / %.2f | %.1f / %.1f | %.0f %% | %.0f MB | %.0f MB | %.0f MB (%d) | %.2f | %.2f / %.2f |" % (
        n, min(rd), statistics.median(rd), min(ex), statistics.median(ex), n / min(rd) / 1e6, n / min(ex) / 1e6,
        100 * min(rd) / min(ex), e["rss"] / 1024, e["otf2"] / 1e6, e["pf"] / 1e6, e["files"], e["pf"] / e["otf2"],
        min(rp), statistics.median(rp)))
lines += ["", "Goals (issue 17): export rate at least 50 % of the read rate, flat memory, output at most 1.5x the "
          "archive. The read floor and the export read the same way (local definitions, then the global reader); "
          "the export also encodes and writes every event. Real traces carry more per event (metrics, messages), "
          "see tests/e2e/export/export.sh's size lines. prof-report: the same trace scanned for the timeline (no "
          "profile in these experiments; a profile's tables take milliseconds).", "<!-- export:end -->"]
put_section(doc, "export", "\n".join(lines))
print("\n".join(lines))
PY
