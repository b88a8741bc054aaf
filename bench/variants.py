#!/usr/bin/env python3
"""Side-by-side table of the systems of one bench/run.sh run (ours, its
--variant systems ours+NAME, relay, ts, ...): per scenario, the median over
rounds of rate, manager CPU per op (for a cross-node system, both nodes':
sut + owner) and p50, and each system's paired ratios
(same round, then the median) against the reference systems.

    bench/variants.py RESULTS.jsonl [--ref ours,ts,relay] [--markdown]
"""
import json
import statistics
import sys


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    path = args[0]
    refs = ["ours", "ts", "relay"]
    markdown = "--markdown" in args
    if "--ref" in args:
        refs = args[args.index("--ref") + 1].split(",")
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            v = json.loads(line)
            if "kind" in v or not v.get("ok"):
                continue
            rows.append(v)
    labels = []
    for r in rows:
        lab = "%s %dx%d" % (r["scenario"], r["callers"], r["inflight"])
        r["label"] = lab
        if lab not in labels:
            labels.append(lab)

    def metric(r, m):
        if m == "rate":
            return r["rate"]
        if m == "cpu":
            # A cross-node call (system cluster) costs on both nodes: the
            # owning node's CPU comes as procs.owner (bench/README.md).
            procs = r["procs"]
            return procs["sut"]["cpu_us_per_op"] + procs.get("owner", {}).get("cpu_us_per_op", 0.0)
        return r["lat_us"]["p50"]

    def med(xs):
        return statistics.median(xs) if xs else float("nan")

    for lab in labels:
        systems = []
        for r in rows:
            if r["label"] == lab and r["system"] not in systems:
                systems.append(r["system"])
        present_refs = [s for s in refs if s in systems]
        head = ["system", "n", "rate/s", "CPU us/op", "p50 us"]
        for ref in present_refs:
            head += ["rate/" + ref, "CPU/" + ref, "p50/" + ref]
        out = []
        for s in systems:
            mine = [r for r in rows if r["label"] == lab and r["system"] == s]
            line = [s, str(len(mine))]
            for m in ("rate", "cpu", "p50"):
                line.append("%.1f" % med([metric(r, m) for r in mine]))
            for ref in present_refs:
                theirs = {r["round"]: r for r in rows if r["label"] == lab and r["system"] == ref}
                for m in ("rate", "cpu", "p50"):
                    xs = [metric(r, m) / metric(theirs[r["round"]], m) for r in mine
                          if r["round"] in theirs and metric(theirs[r["round"]], m) > 0]
                    line.append("%.3f" % med(xs) if s != ref else "-")
            out.append(line)
        print("\n### " + lab + "\n" if markdown else "== " + lab)
        if markdown:
            print("| " + " | ".join(head) + " |")
            print("|" + "---|" * len(head))
            for line in out:
                print("| " + " | ".join(line) + " |")
        else:
            widths = [max(len(x[i]) for x in [head] + out) for i in range(len(head))]
            for line in [head] + out:
                print("  ".join(x.rjust(w) for x, w in zip(line, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
