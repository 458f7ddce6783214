#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks a .pftrace written by prof-export against the OTF2 trace it came from.

Decoding is independent of prof: `protoc --decode` with the schema subset in
perfetto_subset.proto (a field protoc prints by number is not in Perfetto's schema: an error);
the OTF2 side is read with the otf2 Python module. Checks: descriptors (unique uuids, parents
described, threads with pid/tid, counter tracks before their values), sequences (first packet
clears the incremental state, every iid used resolves on its sequence and is never redefined),
per track: BEGIN/END balanced, nothing left open, time never going back per sequence; flows have
both ends; PerfSamples name a described thread. With --otf2 (a whole-trace export): per location,
slices begun = Enter + BufferFlush events, instants = MPI send/receive + measurement on/off
records, samples = CallingContextSample records, counter values = metric values, collective ENDs
with arguments = MpiCollectiveEnd records, copy ENDs with bytes = RMA records, flows = matched
messages + CUDA launches whose GPU work is in the trace (the "CUDA correlation id" attribute);
--expect-flows N, --expect-slices NAME=N, --window B E (ns: every event inside),
--partial (a window or split part: a flow may start and not end in it), --region-window NAME K
(implies --partial; messages sent and received inside it are arrows; --region-window-end NAME K
ends it with that occurrence instead; the window of the K-th NAME, computed from the OTF2 trace: every event
inside, the first NAME slice begins at its start).

Usage: check_pftrace.py FILE.pftrace [--otf2 traces.otf2] [--expect-slices NAME=N ...]
                        [--expect-flows N] [--window B E] [--region-window NAME K --otf2 A]
                        [--proto PATH]
Exit 1 with one FAIL line per problem (at most 20); last line a summary."""
import argparse
import collections
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
problems = []


def fail(msg):
    if len(problems) < 20:
        print("FAIL: " + msg)
    problems.append(msg)


def decode(path, proto):
    with open(path, "rb") as f:
        p = subprocess.run(["protoc", "--proto_path=" + os.path.dirname(proto), "--decode=perfetto.protos.Trace",
                            os.path.basename(proto)], stdin=f, capture_output=True, text=True)
    if p.returncode:
        fail("protoc --decode failed (rc %d): %s" % (p.returncode, p.stderr.strip()[:500]))
        return None
    return p.stdout


def parse(text):
    """protoc's text format -> nested dicts of lists."""
    root = collections.defaultdict(list)
    stack = [root]
    top = root
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            top = stack[-1]
        elif line[-1] == "{" and line[-2] == " ":
            child = collections.defaultdict(list)
            top[line[:-2]].append(child)
            stack.append(child)
            top = child
        else:
            key, sep, val = line.partition(": ")
            if not sep:
                fail("protoc output line %d not understood: %r" % (n, line))
                return root
            if key[0].isdigit():
                fail("field %s is not in Perfetto's schema (line %d: %s)" % (key, n, line))
                continue
            c = val[0]
            if c == '"':
                val = bytes(val[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")
            elif c.isdigit() or c == "-":
                try:
                    val = int(val)
                except ValueError:
                    val = float(val)
            top[key].append(val)
    return root


def one(d, key, default=None):
    v = d.get(key)
    return v[0] if v else default


def check(packets, args):
    tracks = {}            # uuid -> descriptor
    counter_tracks = set()
    threads = set()        # (pid, tid)
    seq_tables = {}        # seq -> {table: {iid: value}}
    seq_default = {}       # seq -> default track uuid
    seq_last_ts = {}
    open_slices = collections.defaultdict(list)
    begins = collections.Counter()       # track uuid -> BEGIN count
    instants = collections.Counter()
    names = collections.Counter()        # slice name -> BEGIN + INSTANT count
    first_begin = {}                     # slice name -> time of its first BEGIN
    counters = collections.Counter()     # parent track uuid -> counter values
    coll_args = collections.Counter()    # track -> ENDs with an "op" argument
    copy_args = collections.Counter()    # track -> ENDs with a "bytes" argument
    samples = collections.Counter()      # tid -> PerfSamples
    flow_start, flow_end = collections.Counter(), collections.Counter()
    first_ts, last_ts = None, None
    event_tracks_seen = set()

    def table(seq, name):
        return seq_tables.setdefault(seq, {}).setdefault(name, {})

    for i, p in enumerate(packets):
        seq = one(p, "trusted_packet_sequence_id", 0)
        flags = one(p, "sequence_flags", 0)
        if flags & 1:
            seq_tables[seq] = {}
            seq_default.pop(seq, None)
        for idata in p.get("interned_data", []):
            if seq not in seq_tables:
                fail("packet %d: interned data on sequence %d before its first clear" % (i, seq))
            for tname, entries in idata.items():
                for e in entries:
                    iid = one(e, "iid")
                    val = repr({k: v for k, v in e.items() if k != "iid"})
                    t = table(seq, tname)
                    if iid in t and t[iid] != val:
                        fail("packet %d: %s iid %s redefined on sequence %d" % (i, tname, iid, seq))
                    t[iid] = val
        for d in p.get("trace_packet_defaults", []):
            ted = one(d, "track_event_defaults")
            if ted and one(ted, "track_uuid") is not None:
                seq_default[seq] = one(ted, "track_uuid")
        td = one(p, "track_descriptor")
        if td is not None:
            uuid = one(td, "uuid")
            if uuid is None:
                fail("packet %d: track descriptor without uuid" % i)
                continue
            if uuid in tracks:
                fail("packet %d: track %d described twice" % (i, uuid))
            if uuid in event_tracks_seen:
                fail("packet %d: track %d described after its first event" % (i, uuid))
            parent = one(td, "parent_uuid")
            if parent is not None and parent not in tracks:
                fail("packet %d: track %d has parent %d, not described before" % (i, uuid, parent))
            th = one(td, "thread")
            if th is not None:
                if one(th, "pid") is None or one(th, "tid") is None:
                    fail("packet %d: thread track %d without pid/tid" % (i, uuid))
                key = (one(th, "pid"), one(th, "tid"))
                if key in threads:
                    fail("packet %d: thread pid %s tid %s described twice" % (i, key[0], key[1]))
                threads.add(key)
            pr = one(td, "process")
            if pr is not None and one(pr, "pid") is None:
                fail("packet %d: process track %d without pid" % (i, uuid))
            if "counter" in td:
                counter_tracks.add(uuid)
            tracks[uuid] = td
        te = one(p, "track_event")
        ps = one(p, "perf_sample")
        if te is None and ps is None:
            continue
        ts = one(p, "timestamp")
        if ts is None:
            fail("packet %d: event without timestamp" % i)
            continue
        if seq == 0:
            fail("packet %d: event without sequence id" % i)
        if ts < seq_last_ts.get(seq, 0):
            fail("packet %d: time goes back on sequence %d (%d after %d)" % (i, seq, ts, seq_last_ts[seq]))
        seq_last_ts[seq] = ts
        first_ts = ts if first_ts is None else min(first_ts, ts)
        last_ts = ts if last_ts is None else max(last_ts, ts)
        if args.window and not (args.window[0] <= ts <= args.window[1]):
            fail("packet %d: time %d outside the window %d..%d" % (i, ts, args.window[0], args.window[1]))
        tabs = seq_tables.get(seq)
        if tabs is None:
            fail("packet %d: event on sequence %d before its first clear" % (i, seq))
            tabs = {}
        if ps is not None:
            key = (one(ps, "pid"), one(ps, "tid"))
            if key not in threads:
                fail("packet %d: PerfSample of pid %s tid %s, which no thread track has" % (i, key[0], key[1]))
            cs = one(ps, "callstack_iid")
            stack = tabs.get("callstacks", {}).get(cs)
            if stack is None:
                fail("packet %d: callstack iid %s does not resolve" % (i, cs))
            else:
                for fid in re.findall(r"'frame_ids': \[([^\]]*)\]", stack)[0].split(","):
                    frame = tabs.get("frames", {}).get(int(fid))
                    if frame is None:
                        fail("packet %d: frame %s does not resolve" % (i, fid))
                        continue
                    fn = int(re.search(r"'function_name_id': \[(\d+)\]", frame).group(1))
                    mp = int(re.search(r"'mapping_id': \[(\d+)\]", frame).group(1))
                    if fn not in tabs.get("function_names", {}) or mp not in tabs.get("mappings", {}):
                        fail("packet %d: frame %s names an undefined function or mapping" % (i, fid))
            samples[key[1]] += 1
            continue
        track = one(te, "track_uuid", seq_default.get(seq))
        event_tracks_seen.add(track)
        if track not in tracks:
            fail("packet %d: event on track %s, not described before" % (i, track))
            continue
        typ = one(te, "type")
        for fid in te.get("flow_ids", []):
            flow_start[fid] += 1
        for fid in te.get("terminating_flow_ids", []):
            flow_end[fid] += 1
        for u in te.get("extra_counter_track_uuids", []) + te.get("extra_double_counter_track_uuids", []):
            if u not in counter_tracks:
                fail("packet %d: extra counter value for %d, not a counter track" % (i, u))
            counters[one(tracks[u], "parent_uuid")] += 1
        if len(te.get("extra_counter_track_uuids", [])) != len(te.get("extra_counter_values", [])):
            fail("packet %d: extra counter uuids and values differ in number" % i)
        for cat in te.get("category_iids", []):
            if cat not in tabs.get("event_categories", {}):
                fail("packet %d: category iid %d does not resolve" % (i, cat))
        argn = set()
        for a in te.get("debug_annotations", []):
            n = one(a, "name_iid")
            v = tabs.get("debug_annotation_names", {}).get(n)
            if v is None:
                fail("packet %d: annotation name iid %s does not resolve" % (i, n))
            else:
                argn.add(re.search(r"'name': \['([^']*)'\]", v).group(1))
        name = None
        if typ in ("TYPE_SLICE_BEGIN", "TYPE_INSTANT"):
            iid = one(te, "name_iid")
            v = tabs.get("event_names", {}).get(iid)
            if v is None:
                fail("packet %d: event name iid %s does not resolve on sequence %d" % (i, iid, seq))
            else:
                name = re.search(r"'name': \[(['\"])(.*)\1\]", v).group(2)
                names[name] += 1
                first_begin.setdefault(name, ts)
            if not flags & 2:
                fail("packet %d: uses interned names without SEQ_NEEDS_INCREMENTAL_STATE" % i)
        if track in counter_tracks:
            if typ != "TYPE_COUNTER" or (one(te, "counter_value") is None and one(te, "double_counter_value") is None):
                fail("packet %d: %s without value on counter track %d" % (i, typ, track))
            counters[one(tracks[track], "parent_uuid")] += 1
            continue
        if typ == "TYPE_SLICE_BEGIN":
            open_slices[track].append(name)
            begins[track] += 1
            if len(open_slices[track]) > 512:
                fail("packet %d: more than 512 nested slices on track %d" % (i, track))
        elif typ == "TYPE_SLICE_END":
            if not open_slices[track]:
                fail("packet %d: SLICE_END on track %d without an open slice" % (i, track))
            else:
                open_slices[track].pop()
            if "op" in argn:
                coll_args[track] += 1
            if "bytes" in argn:
                copy_args[track] += 1
        elif typ == "TYPE_INSTANT":
            instants[track] += 1
        else:
            fail("packet %d: event type %s on slice track %d" % (i, typ, track))
    for track, st in open_slices.items():
        if st:
            fail("track %d: %d slices never end (innermost %s)" % (track, len(st), st[-1]))
    for fid, n in flow_start.items():
        if args.partial and n == 1 and not flow_end.get(fid):
            continue  # a message whose receive is after the window or file cut
        if n != 1 or flow_end.get(fid) != 1:
            fail("flow %x: started %d times, terminated %d times" % (fid, n, flow_end.get(fid, 0)))
    for fid in flow_end:
        if fid not in flow_start:
            fail("flow %x terminated but never started" % fid)
    return dict(tracks=tracks, begins=begins, instants=instants, names=names, counters=counters, first_begin=first_begin,
                flows_ended=len(flow_end),
                coll_args=coll_args, copy_args=copy_args, samples=samples, flows=len(flow_start),
                first_ts=first_ts, last_ts=last_ts)


def region_window(anchor, name, k):
    """(start, end) in ns since the trace start of the k-th Enter of region `name` (time order,
    any location) and its matching Leave, read with the otf2 module."""
    import otf2
    with otf2.reader.open(anchor) as trace:
        clock = trace.definitions.clock_properties
        ns = lambda t: (t - clock.global_offset) * 10**9 // clock.timer_resolution
        events = sorted(((ev.time, i, loc, ev) for i, (loc, ev) in enumerate(trace.events)), key=lambda x: (x[0], x[1]))
        seen, depth, target = 0, collections.Counter(), None
        for t, _, loc, ev in events:
            if isinstance(ev, otf2.events.Enter):
                if target is None and ev.region.name == name:
                    seen += 1
                    if seen == k:
                        target = (loc, depth[loc], ns(t))
                depth[loc] += 1
            elif isinstance(ev, otf2.events.Leave):
                depth[loc] -= 1
                if target and target[0] == loc and depth[loc] == target[1]:
                    return target[2], ns(t)
    fail("the OTF2 trace has no occurrence %d of %s" % (k, name))
    return 0, 0


def message_pairs(anchor):
    """(send, receive) times in ns of the MPI messages, the n-th send of a (comm, source,
    destination, tag) paired with the n-th receive, read with the otf2 module."""
    import otf2
    E = otf2.events
    sends, recvs = {}, {}
    with otf2.reader.open(anchor) as trace:
        clock = trace.definitions.clock_properties
        ns = lambda t: (t - clock.global_offset) * 10**9 // clock.timer_resolution
        for loc, ev in trace.events:
            if isinstance(ev, (E.MpiSend, E.MpiIsend, E.MpiRecv, E.MpiIrecv)):
                members = list(ev.communicator.group.members) or [loc]
                if isinstance(ev, (E.MpiSend, E.MpiIsend)):
                    key = (id(ev.communicator), loc, members[ev.receiver], ev.msg_tag)
                    sends.setdefault(key, []).append(ns(ev.time))
                else:
                    key = (id(ev.communicator), members[ev.sender], loc, ev.msg_tag)
                    recvs.setdefault(key, []).append(ns(ev.time))
    return [p for key, ts in sends.items() for p in zip(ts, recvs.get(key, []))]


def compare_otf2(anchor, got):
    import otf2
    E = otf2.events
    per = collections.defaultdict(collections.Counter)
    index = {}
    host_ids, gpu_ids = set(), set()   # (process, CUDA correlation id) of launches / of GPU work
    sends, recvs = {}, {}              # (comm, source, destination, tag) -> times, in order
    with otf2.reader.open(anchor) as trace:
        for i, loc in enumerate(trace.definitions.locations):
            index[loc] = i

        def process_of(loc):
            g = loc.group
            return getattr(g, "creating_location_group", None) or g

        for loc, ev in trace.events:
            c = per[loc]
            t = type(ev)
            if t is E.Enter and ev.attributes:
                for a, v in ev.attributes.items():
                    if a.name == "CUDA correlation id":
                        on_gpu = str(loc.type).split(".")[-1] in ("GPU", "ACCELERATOR_STREAM")
                        (gpu_ids if on_gpu else host_ids).add((process_of(loc).name, v))
            if t in (E.Enter, E.BufferFlush):
                c["begins"] += 1
            elif t in (E.MpiSend, E.MpiIsend, E.MpiRecv, E.MpiIrecv, E.MeasurementOnOff):
                c["instants"] += 1
                if t is not E.MeasurementOnOff:
                    members = list(ev.communicator.group.members) or [loc]  # COMM_SELF: no members
                    if t in (E.MpiSend, E.MpiIsend):
                        key = (ev.communicator.name, id(ev.communicator), loc, members[ev.receiver], ev.msg_tag)
                        sends.setdefault(key, []).append(ev.time)
                    else:
                        key = (ev.communicator.name, id(ev.communicator), members[ev.sender], loc, ev.msg_tag)
                        recvs.setdefault(key, []).append(ev.time)
            elif t is E.CallingContextSample:
                c["samples"] += 1
            elif t is E.Metric:
                c["metrics"] += len(ev.values)
            elif t in (E.MpiCollectiveEnd, E.NonBlockingCollectiveComplete):
                c["collectives"] += 1
            elif t in (E.RmaGet, E.RmaPut):
                c["copies"] += 1
        tids = {}
        for uuid, td in got["tracks"].items():
            if "thread" in td:
                tids[uuid] = one(td["thread"][0], "tid")
        for loc, i in index.items():
            c = per.get(loc, collections.Counter())
            uuid = 1 + i
            if uuid not in got["tracks"]:
                if sum(c.values()):
                    fail("location %s (%d events) has no track %d" % (loc.name, sum(c.values()), uuid))
                continue
            what = [("begins", got["begins"][uuid]), ("instants", got["instants"][uuid]),
                    ("metrics", got["counters"][uuid]), ("collectives", got["coll_args"][uuid]),
                    ("copies", got["copy_args"][uuid]), ("samples", got["samples"].get(tids.get(uuid), 0))]
            for key, have in what:
                if c[key] != have:
                    fail("location %s: OTF2 has %d %s, the .pftrace %d" % (loc.name, c[key], key, have))
        # The n-th send of a (comm, source, destination, tag) matches the n-th receive; it is an
        # arrow when the receive is not earlier than the send (ties: either way).
        later = not_earlier = 0
        for key, ts in sends.items():
            for ts_send, ts_recv in zip(ts, recvs.get(key, [])):
                later += ts_recv > ts_send
                not_earlier += ts_recv >= ts_send
        links = len(host_ids & gpu_ids)  # the first GPU work of each launch gets the arrow
        if not (later + links <= got["flows"] <= not_earlier + links) or got["flows_ended"] != got["flows"]:
            fail("%d matched MPI messages (%d with the receive after the send) and %d launches with GPU work in the "
                 "OTF2 trace, %d flows in the .pftrace" % (not_earlier, later, links, got["flows"]))
    total = collections.Counter()
    for c in per.values():
        total.update(c)
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--otf2")
    ap.add_argument("--proto", default=os.path.join(HERE, "perfetto_subset.proto"))
    ap.add_argument("--expect-slices", action="append", default=[])
    ap.add_argument("--expect-flows", type=int)
    ap.add_argument("--window", nargs=2, type=int)
    ap.add_argument("--region-window", nargs=2, metavar=("NAME", "K"))
    ap.add_argument("--region-window-end", nargs=2, metavar=("NAME", "K"), help="the window ends with this occurrence instead")
    ap.add_argument("--partial", action="store_true", help="a window or a part of a split: flows may leave it")
    args = ap.parse_args()
    pairs = None
    if args.region_window:
        args.window = region_window(args.otf2, args.region_window[0], int(args.region_window[1]))
        if args.region_window_end:
            args.window = (args.window[0], region_window(args.otf2, args.region_window_end[0], int(args.region_window_end[1]))[1])
        pairs = message_pairs(args.otf2)
        args.otf2 = None  # a window: the counts are not the whole trace's
        args.partial = True
    text = decode(args.file, args.proto)
    if text is None:
        print("check_pftrace FAIL: %s not decoded" % args.file)
        return 1
    tree = parse(text)
    packets = tree.get("packet", [])
    got = check(packets, args)
    total = None
    if args.otf2:
        total = compare_otf2(args.otf2, got)
    for spec in args.expect_slices:
        name, n = spec.rsplit("=", 1)
        if got["names"][name] != int(n):
            fail("%d slices named %s, expected %s" % (got["names"][name], name, n))
    if pairs is not None:
        # Messages sent and received inside the window are arrows (a receive at the send's time: either way).
        b, e = args.window
        inside = [(ts, tr) for ts, tr in pairs if b <= ts and tr <= e]
        later, not_earlier = sum(tr > ts for ts, tr in inside), sum(tr >= ts for ts, tr in inside)
        if not later <= got["flows_ended"] <= not_earlier:
            fail("%d messages inside the window (%d received after the send), %d arrows end in the .pftrace" %
                 (not_earlier, later, got["flows_ended"]))
    if args.region_window:
        name = args.region_window[0]
        if got["first_begin"].get(name) != args.window[0]:
            fail("the first %s slice begins at %s, the window at %d" % (name, got["first_begin"].get(name), args.window[0]))
    if args.expect_flows is not None and got["flows"] != args.expect_flows:
        fail("%d flows, expected %d" % (got["flows"], args.expect_flows))
    summary = "%d packets, %d tracks, %d slices, %d instants, %d counter values, %d samples, %d flows" % (
        len(packets), len(got["tracks"]), sum(got["begins"].values()), sum(got["instants"].values()),
        sum(got["counters"].values()), sum(got["samples"].values()), got["flows"])
    if total is not None:
        summary += " (OTF2: %d Enter + BufferFlush)" % total["begins"]
    if problems:
        print("check_pftrace FAIL: %d problem(s); %s" % (len(problems), summary))
        return 1
    print("check_pftrace ok: " + summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
