#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks prof-report's page as a browser shows it against prof-score --json.

Input: the DOM that headless Chromium dumped after the page's script ran (--dump-dom), Chromium's
stderr (console lines), the report's JSON and prof-score's JSON of the same experiment. Checks:
no console message and no script error (the page sets data-status="ok" when it drew everything);
the region table, the call-path icicle and (where the run had them) the MPI and GPU sections are
there; every region row's exclusive time and visits equal prof-score's row of the same group and
name; the first row is prof-score's region with the most time; every GPU activity row equals
prof-score's gpu_activities entry. Exit 1 with one FAIL line per problem.

Usage: check_report.py DOM CHROMIUM_STDERR REPORT_JSON PROF_SCORE_JSON [--mpi N] [--gpu]"""
import html
import json
import re
import sys

problems = []


def fail(msg):
    print("FAIL: " + msg)
    problems.append(msg)


def close(a, b):
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1e-12)


def attrs(tag):
    return {k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', tag)}


def main():
    dom_path, err_path, report_path, score_path = sys.argv[1:5]
    opts = sys.argv[5:]
    dom = open(dom_path, encoding="utf-8").read()
    dom = re.sub(r"<script.*?</script>", "", dom, flags=re.S)  # what was drawn, not the page's code
    console = [l for l in open(err_path, errors="replace") if "CONSOLE" in l]
    for l in console:
        fail("browser console: " + l.strip()[:300])
    if 'data-status="ok"' not in dom:
        m = re.search(r'<pre id="errors"[^>]*>(.*?)</pre>', dom, re.S)
        fail("the page did not finish drawing (errors: %s)" % (m.group(1).strip() if m else "?"))
    report = json.load(open(report_path))
    score = json.load(open(score_path))
    if report.get("format") != "prof-report" or report.get("version") != 1:
        fail("report.json is not format prof-report version 1")
    rows = [attrs(t) for t in re.findall(r'<tr class="region"[^>]*>', dom)]
    if not rows:
        fail("no region rows in the page")
    by_key = {(r["type"], r["name"]): r for r in score["regions"]}
    for r in rows:
        s = by_key.get((r["data-group"], r["data-name"]))
        if s is None:
            fail("region %s (%s) of the page is not in prof-score's rows" % (r["data-name"], r["data-group"]))
            continue
        if not close(float(r["data-exclusive"]), s["time"]) or not close(float(r["data-visits"]), s["visits"]):
            fail("region %s: page %s s / %s visits, prof-score %s s / %s visits" % (
                r["data-name"], r["data-exclusive"], r["data-visits"], s["time"], s["visits"]))
    # The top 25 rows first, and a line that says how many more there are (issue 31: 225 rows).
    want_rows = min(25, len(report["regions"]))
    if len(rows) != want_rows:
        fail("the page shows %d region rows, expected the top %d of %d" % (len(rows), want_rows, len(report["regions"])))
    more = re.search(r'<p id="region-more"[^>]*>(.*?)</p>', dom, re.S)
    if len(report["regions"]) > 25 and (not more or "%d more region" % (len(report["regions"]) - 25) not in more.group(1)):
        fail("the page does not say how many more regions there are: %r" % (more.group(1) if more else None))
    top = max(score["regions"], key=lambda r: r["time"])
    if rows and (rows[0]["data-name"], rows[0]["data-group"]) != (top["name"], top["type"]):
        fail("the first region row is %s, prof-score's top region %s" % (rows[0]["data-name"], top["name"]))
    # The findings at the top: one row per finding of the JSON, its title drawn; else the line that says none.
    body = re.search(r'<div id="findings-body"[^>]*>(.*?)</div>', dom, re.S)
    if not body:
        fail("no findings section in the page")
    elif report["findings"]:
        drawn = re.findall(r"<b>(.*?)</b>", body.group(1), re.S)
        want = [html.escape(f["title"], quote=False) for f in report["findings"]]
        if drawn != want:
            fail("the findings drawn %s are not report.json's %s" % (drawn, want))
    elif "No finding above 5 %" not in body.group(1):
        fail("the findings section does not say there is none: %r" % body.group(1)[:200])
    # The steps: one row per step of the JSON.
    steps = report.get("steps")
    if steps and steps["region"] and len(re.findall(r'<tr class="step">', dom)) != steps["count"]:
        fail("the page shows %d step rows, report.json has %d steps" % (len(re.findall(r'<tr class="step">', dom)), steps["count"]))
    if "--program" in opts:  # the run table's command line: the program and all its arguments
        want = opts[opts.index("--program") + 1]
        m = re.search(r"<tr><td>program</td><td>(.*?)</td></tr>", dom)
        if not m or m.group(1) != want:
            fail("the run table's program is %r, expected %r" % (m.group(1) if m else None, want))
    if "--no-cuda" in opts and "<td>PROF_CUDA_ENABLE</td>" in dom:
        fail("the run table shows PROF_CUDA_ENABLE for a run without GPU streams")
    if report.get("timeline"):  # the timeline leaves out the locations that recorded nothing
        busy = [r for r in report["timeline"]["rows"] if any(t >= 0 and b > 0 for t, b in zip(r["top"], r["busy"]))]
        canvas = re.search(r'<canvas id="timeline-canvas" data-rows="(\d+)" data-hidden="(\d+)"', dom)
        if not canvas or (int(canvas.group(1)), int(canvas.group(2))) != (len(busy), len(report["timeline"]["rows"]) - len(busy)):
            fail("the timeline draws %s rows (hidden %s), expected %d with something recorded of %d" % (
                canvas.group(1) if canvas else None, canvas.group(2) if canvas else None, len(busy), len(report["timeline"]["rows"])))
        elif "--idle-rows" in opts and int(canvas.group(2)) < int(opts[opts.index("--idle-rows") + 1]):
            fail("the timeline hides %s rows, expected at least %s" % (canvas.group(2), opts[opts.index("--idle-rows") + 1]))
    nodes = re.findall(r'<div class="node"[^>]*>', dom)
    if not nodes:
        fail("no box in the call-path icicle")
    if "--mpi" in opts:
        n = int(opts[opts.index("--mpi") + 1])
        table = re.search(r'<table id="mpi-ranks">(.*?)</table>', dom, re.S)
        ranks = len(re.findall(r"<tr><td>\d+</td>", table.group(1))) if table else 0
        if ranks != n:
            fail("the MPI table has %d ranks, expected %d" % (ranks, n))
        if '<canvas id="mpi-matrix"' not in dom:
            fail("no MPI message matrix")
        sent = sum(report["mpi"]["messages"])
        if sent <= 0:
            fail("the message matrix is empty")
        legend = re.search(r'<p id="mpi-legend">(.*?)</p>', dom, re.S)
        if not legend or "sender rank (row)" not in legend.group(1) or "(the most of one pair)" not in legend.group(1):
            fail("the message matrix has no legend: %r" % (legend.group(1)[:200] if legend else None))
    if "--gpu" in opts:
        acts = [attrs(t) for t in re.findall(r'<tr class="activity"[^>]*>', dom)]
        want = {a["name"]: a for a in score.get("gpu_activities", [])}
        if len(acts) != len(want) or not acts:
            fail("%d GPU activity rows in the page, prof-score has %d" % (len(acts), len(want)))
        for a in acts:
            s = want.get(a["data-name"])
            if s is None or not close(float(a["data-time"]), s["time"]) or not close(float(a["data-calls"]), s["calls"]):
                fail("GPU activity %s: page %s s / %s calls, prof-score %s" % (a["data-name"], a["data-time"], a["data-calls"], s))
    if problems:
        print("check_report FAIL: %d problem(s)" % len(problems))
        return 1
    print("check_report ok: %d region rows equal prof-score's (top: %s), %d icicle boxes%s" % (
        len(rows), rows[0]["data-name"], len(nodes), ", GPU activities equal" if "--gpu" in opts else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
