#!/usr/bin/env python3
"""Turn the samples of one bench run into BENCH.json and BENCH.md.

usage: report.py META SAMPLES METRICS OUTPREFIX

META: key=value lines written by nfb_run (tests/bench/lib.sh); "ruleset=NAME<TAB>DESC"
and "ratio=A/B" may repeat. SAMPLES: TSV with round, ruleset, pps, pkts, l4, secs.
METRICS: TSV lines NAME VALUE UNIT DESC (nfb_metric), may be empty.
Writes OUTPREFIX.json and OUTPREFIX.md.

Overhead of a ruleset above the floor, per round r: 1e9 * (1/pps_r - 1/floor_r) ns per
packet, where floor_r is the floor's sample of the same round; the reported overhead is
the median over rounds. Generator cost is in every pps figure and cancels out here.
"""
import csv
import json
import statistics
import sys


def main():
    meta_path, samples_path, metrics_path, prefix = sys.argv[1:5]
    meta = {}
    rulesets = []
    ratios = []
    with open(meta_path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            k, _, v = line.partition("=")
            if k == "ruleset":
                name, _, desc = v.partition("\t")
                rulesets.append((name, desc or name))
            elif k == "ratio":
                ratios.append(v)
            else:
                meta[k] = v
    samples = {}
    with open(samples_path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            samples.setdefault(row["ruleset"], {})[int(row["round"])] = row

    floor = meta.get("floor") or None
    res = []
    by_name = {}
    for name, desc in rulesets:
        rows = samples.get(name, {})
        rounds = sorted(rows)
        pps = [float(rows[r]["pps"]) for r in rounds]
        pkts = sum(int(rows[r]["pkts"]) for r in rounds)
        l4 = sum(int(rows[r]["l4"]) for r in rounds)
        e = {
            "name": name,
            "desc": desc,
            "floor": name == floor,
            "pps": pps,
            "median_pps": statistics.median(pps) if pps else None,
            "min_pps": min(pps) if pps else None,
            "max_pps": max(pps) if pps else None,
            "l4_share": (l4 / pkts) if pkts else None,
        }
        if floor and floor in samples:
            fl = samples[floor]
            ov = [1e9 * (1.0 / float(rows[r]["pps"]) - 1.0 / float(fl[r]["pps"]))
                  for r in rounds if r in fl and float(rows[r]["pps"]) > 0 and float(fl[r]["pps"]) > 0]
            e["overhead_ns_rounds"] = [round(x, 1) for x in ov]
            e["overhead_ns"] = round(statistics.median(ov), 1) if ov else None
        res.append(e)
        by_name[name] = e
    if floor and floor in by_name and by_name[floor]["median_pps"]:
        fm = by_name[floor]["median_pps"]
        for e in res:
            e["pps_vs_floor"] = round(e["median_pps"] / fm, 3) if e["median_pps"] else None

    ratio_out = []
    for r in ratios:
        a, _, b = r.partition("/")
        ea, eb = by_name.get(a), by_name.get(b)
        if not ea or not eb:
            print("report.py: ratio %s: unknown ruleset" % r, file=sys.stderr)
            sys.exit(1)
        ro = {"a": a, "b": b,
              "pps_ratio": round(ea["median_pps"] / eb["median_pps"], 3)
              if ea["median_pps"] and eb["median_pps"] else None}
        oa, ob = ea.get("overhead_ns"), eb.get("overhead_ns")
        ro["overhead_ratio"] = round(oa / ob, 3) if oa is not None and ob else None
        ratio_out.append(ro)

    metrics = []
    with open(metrics_path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3:
                continue
            metrics.append({"name": parts[0], "value": float(parts[1]), "unit": parts[2],
                            "desc": parts[3] if len(parts) > 3 and parts[3] else parts[0]})

    doc = dict(meta)
    for k in ("secs", "warmup"):
        if k in doc:
            doc[k] = float(doc[k])
    for k in ("rounds", "cpus", "cpu"):
        if k in doc:
            doc[k] = int(doc[k])
    doc["floor"] = floor
    doc["rulesets"] = res
    doc["ratios"] = ratio_out
    doc["metrics"] = metrics
    with open(prefix + ".json", "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")

    def kpps(x):
        return "-" if x is None else "%.1f" % (x / 1000.0)

    md = []
    md.append("### %s — %s" % (meta.get("bench", "?"), meta.get("kernel", "?")))
    md.append("")
    if res:
        md.append("%s; %s rounds × %s s (+%s s warm-up), %s vCPUs, generator and receiver on CPU %s; %s."
                  % (meta.get("packet", "?"), meta.get("rounds", "?"), meta.get("secs", "?"),
                     meta.get("warmup", "?"), meta.get("cpus", "?"), meta.get("cpu", "?"),
                     meta.get("date", "?")))
    else:
        md.append("%s vCPUs; %s." % (meta.get("cpus", "?"), meta.get("date", "?")))
    if res:
        md.extend(table(res, kpps))
    if ratio_out:
        md.append("")
        for ro in ratio_out:
            md.append("- %s / %s: overhead ratio %s, pps ratio %s" % (
                ro["a"], ro["b"],
                "-" if ro["overhead_ratio"] is None else "%.2f" % ro["overhead_ratio"],
                "-" if ro["pps_ratio"] is None else "%.2f" % ro["pps_ratio"]))
    if metrics:
        md.append("")
        md.append("| measurement | value |")
        md.append("|---|---:|")
        for m in metrics:
            md.append("| %s | %s %s |" % (m["desc"], "%g" % m["value"], m["unit"]))
    if res:
        md.append("")
        md.append("overhead = 1/pps − 1/pps_floor per round (paired with that round's floor sample), "
                  "median over rounds; rounds alternate the rulesets in the order listed.")
    with open(prefix + ".md", "w") as f:
        f.write("\n".join(md) + "\n")


def table(res, kpps):
    md = [""]
    md.append("| ruleset | median kpps | min–max kpps | pps vs floor | overhead ns/pkt | reached L4 |")
    md.append("|---|---:|---:|---:|---:|---:|")
    for e in res:
        label = e["desc"] if e["desc"] == e["name"] else "%s: %s" % (e["name"], e["desc"])
        if e["floor"]:
            label += " **(floor)**"
        ov = e.get("overhead_ns")
        md.append("| %s | %s | %s–%s | %s | %s | %s |" % (
            label, kpps(e["median_pps"]), kpps(e["min_pps"]), kpps(e["max_pps"]),
            "-" if e.get("pps_vs_floor") is None else "%.2f" % e["pps_vs_floor"],
            "-" if ov is None else "%.0f" % ov,
            "-" if e["l4_share"] is None else "%.0f%%" % (100 * e["l4_share"])))
    return md


if __name__ == "__main__":
    main()
