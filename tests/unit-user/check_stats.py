#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check `nfguard stats` reports: check_stats.py SCHEMA DIR|FILE...

- every *.json is one line of strict JSON (no NaN, no duplicate keys) that
  validates against SCHEMA (doc/nfguard-stats.schema.json, jsonschema);
- every *.prom passes promparse.parse() (strict exposition format) and uses
  only nfguard_<ext>_<name> metric names;
- where X.json and X.prom both exist (the same snapshot), they carry the same
  numbers: each number of the JSON is the sample nfguard_<ext>_<key> or
  nfguard_<ext>_<key>_total with the object's labels, each sample is one
  such number, loaded/error agree with nfguard_extension_loaded/_error;
  names are bytes (the JSON writes UTF-8 as it is and each other byte N
  as \\udcNN, json_name()): a label value is the
  name with printable ASCII and printable UTF-8 kept, each backslash doubled
  and every other byte written \\xNN (label_value()), which label_bytes()
  reads back; no two rows of a report may share a label value.
With --selftest, first proves that the schema and the parser refuse broken
input (a check that accepts anything would pass every report).
Prints "N passed, N failed"; exit 1 on any failure.
"""
import copy
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import promparse  # noqa: E402

try:
    import jsonschema
except ImportError:
    sys.exit("check_stats.py: needs python3-jsonschema (tests/deps.d/cli.txt)")

EXTS = ("rangeset", "kconnlimit", "syncookie", "rtcache")
passed = failed = 0


def result(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}", file=sys.stderr)


def label_value(name):
    """The Prometheus label value of a name (bytes), as nfguard(8) documents it."""
    out, i = [], 0
    while i < len(name):
        b = name[i]
        if b == 0x5c:
            out.append("\\\\")
            i += 1
            continue
        if 0x20 <= b < 0x7f:
            out.append(chr(b))
            i += 1
            continue
        for n in (2, 3, 4):
            try:
                ch = name[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(ch) == 1 and ord(ch) >= 0xa0:
                out.append(ch)
                i += n
                break
        else:
            out.append(f"\\x{b:02x}")
            i += 1
    return "".join(out)


def label_bytes(value):
    """label_value() read back."""
    out, i = bytearray(), 0
    while i < len(value):
        if value[i] == "\\":
            if value[i + 1:i + 2] == "\\":
                out.append(0x5c)
                i += 2
            elif re.fullmatch(r"x[0-9a-f]{2}", value[i + 1:i + 4]):
                out.append(int(value[i + 2:i + 4], 16))
                i += 4
            else:
                raise ValueError(f"bad escape in label value {value!r}")
        else:
            out += value[i].encode("utf-8")
            i += 1
    return bytes(out)


def json_name(s):
    """The bytes of a name as the JSON report writes it: UTF-8 as text, each
    other byte N as the lone surrogate U+DCNN (Python's surrogateescape)."""
    return s.encode("utf-8", "surrogateescape")


def strict_json(text):
    def no_dups(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError(f"duplicate keys in {keys}")
        return dict(pairs)

    def no_const(c):
        raise ValueError(f"{c} is not JSON")

    if not text.endswith("\n") or "\n" in text[:-1]:
        raise ValueError("not exactly one line")
    return json.loads(text, object_pairs_hook=no_dups, parse_constant=no_const)


def errors(validator, doc):
    return sorted(e.message for e in validator.iter_errors(doc))


def cross_check(doc, fams, what):
    """Same numbers in both; returns a list of problems."""
    problems = []
    used = set()

    def sample(metric, labels):
        key = (metric, tuple(sorted(labels.items())))
        fam = fams.get(metric)
        if fam is None or key not in fam["raw"]:
            return None
        used.add(key)
        return fam["raw"][key]

    def number(ext, k, v, labels):
        got = [r for r in (sample(f"nfguard_{ext}_{k}", labels),
                           sample(f"nfguard_{ext}_{k}_total", labels)) if r is not None]
        if got != [str(v)]:
            problems.append(f"{ext} {k}{labels}: JSON {v}, Prometheus {got}")

    for ext in EXTS:
        obj = doc["extensions"][ext]
        loaded = sample("nfguard_extension_loaded", {"extension": ext})
        err = sample("nfguard_extension_error", {"extension": ext})
        if loaded != ("1" if obj["loaded"] else "0") or err != ("1" if "error" in obj else "0"):
            problems.append(f"{ext}: loaded/error {obj} vs {loaded}/{err}")
        if not obj["loaded"] or "error" in obj:
            continue
        for k, v in obj.items():
            if k == "loaded" or isinstance(v, list):
                continue
            if k in ("connections", "max_connections"):     # kconnlimit's netns totals
                if v is not None:
                    number(ext, "netns_" + k, v, {})
                continue
            number(ext, k, v, {})
        rows = obj.get("sets", obj.get("rules", []))
        count = sample(f"nfguard_{ext}_{'sets' if ext == 'rangeset' else 'rules'}", {}) \
            if ext in ("rangeset", "kconnlimit") else None
        if ext in ("rangeset", "kconnlimit") and count != str(len(rows)):
            problems.append(f"{ext}: {len(rows)} rows, count sample {count}")
        for row in rows:
            name = json_name(row["name"])
            value = label_value(name)
            if label_bytes(value) != name:
                problems.append(f"{ext}: label value {value!r} does not read back as {name!r}")
            if ext == "rangeset":
                labels = {"set": value, "family": row["family"]}
                text_keys = ("name", "family")
            else:
                labels = {"id": str(row["id"]), "name": value, "family": row["family"]}
                text_keys = ("id", "name", "family", "key", "prefix", "mode")
            for k, v in row.items():
                if k not in text_keys:
                    number(ext, k, v, labels)
    for fam in fams.values():
        for key in fam["raw"]:
            if key not in used:
                problems.append(f"Prometheus sample {key} is not in the JSON report")
    return problems


def check_files(validator, paths):
    docs, proms = {}, {}
    for path in paths:
        base, ext = os.path.splitext(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if ext == ".json":
            try:
                doc = strict_json(text)
            except ValueError as e:
                result(False, f"{path}: {e}")
                continue
            errs = errors(validator, doc)
            result(not errs, f"{path}: schema: {errs}")
            docs[base] = doc
        elif ext == ".prom":
            try:
                fams = promparse.parse(text)
            except promparse.PromError as e:
                result(False, f"{path}: {e}")
                continue
            bad = [n for n in fams if not re.fullmatch(r"nfguard_(extension|%s)_[a-z0-9_]+" % "|".join(EXTS), n)]
            result(not bad, f"{path}: metric names outside nfguard_<ext>_<name>: {bad}")
            proms[base] = fams
    for base in sorted(set(docs) & set(proms)):
        problems = cross_check(docs[base], proms[base], base)
        result(not problems, f"{base}.json vs .prom: " + "; ".join(problems[:5]))
    return docs, proms


GOOD_PROM = """# HELP nfguard_x_hits_total Hits.
# TYPE nfguard_x_hits_total counter
nfguard_x_hits_total{set="a\\\\b\\"c\\nd",family="ipv4"} 12
nfguard_x_hits_total{set="b",family="ipv4"} 1.5e3
# TYPE nfguard_x_size gauge
nfguard_x_size -Inf
"""

BAD_PROM = {
    "no final newline": GOOD_PROM[:-1],
    "blank line": GOOD_PROM.replace("\n# TYPE nfguard_x_size", "\n\n# TYPE nfguard_x_size"),
    "sample without TYPE": "nfguard_x_y 1\n",
    "duplicate TYPE": GOOD_PROM + "# TYPE nfguard_x_size gauge\n",
    "TYPE after samples": GOOD_PROM.replace("# TYPE nfguard_x_size gauge\nnfguard_x_size -Inf\n",
                                            "# TYPE nfguard_x_size gauge\nnfguard_x_size 1\n# HELP nfguard_x_size s\n"),
    "second HELP": GOOD_PROM.replace("# TYPE nfguard_x_hits_total", "# HELP nfguard_x_hits_total again\n# TYPE nfguard_x_hits_total"),
    "bad metric name": "# TYPE 1x gauge\n1x 1\n",
    "bad metric name in sample": GOOD_PROM + "nfguard-x 1\n",
    "bad type": "# TYPE nfguard_x gauges\nnfguard_x 1\n",
    "non-numeric value": GOOD_PROM.replace("} 12", "} twelve"),
    "hex value": GOOD_PROM.replace("} 12", "} 0x12"),
    "empty value": GOOD_PROM.replace("} 12", "} "),
    "negative counter": GOOD_PROM.replace("} 12", "} -1"),
    "NaN counter": GOOD_PROM.replace("} 12", "} NaN"),
    "counter without _total": "# TYPE nfguard_x_hits counter\nnfguard_x_hits 1\n",
    "timestamp": GOOD_PROM.replace("} 12", "} 12 1700000000000"),
    "duplicate sample": GOOD_PROM.replace('nfguard_x_hits_total{set="b"', 'nfguard_x_hits_total{family="ipv4",set="b"}'
                                          ' 1\nnfguard_x_hits_total{set="b"'),
    "samples not contiguous": GOOD_PROM + 'nfguard_x_hits_total{set="c",family="ipv4"} 1\n',
    "bad label name": GOOD_PROM.replace('family="ipv4"} 12', '2family="ipv4"} 12'),
    "reserved label name": GOOD_PROM.replace('family="ipv4"} 12', '__family="ipv4"} 12'),
    "duplicate label": GOOD_PROM.replace('family="ipv4"} 12', 'set="x"} 12'),
    "bad escape": GOOD_PROM.replace("\\\\b", "\\t"),
    "unterminated label value": 'nfguard_x_size{a="b} 1\n',
    "trailing comma": GOOD_PROM.replace('family="ipv4"} 12', 'family="ipv4",} 12'),
    "unquoted label value": GOOD_PROM.replace('family="ipv4"} 12', "family=ipv4} 12"),
    "other comment": "# nfguard\n" + GOOD_PROM,
    "stray whitespace": GOOD_PROM.replace("} 12", "}  12"),
    "trailing whitespace": GOOD_PROM.replace("} 12", "} 12 "),
}


LABEL_CASES = {
    b"plain.set-1:x": "plain.set-1:x",
    b"caf\xc3\xa9": "caf\u00e9",
    b"caf\xe9": "caf\\xe9",
    b"caf\\xe9": "caf\\\\xe9",
    b"a\tb\nc\x7f": "a\\x09b\\x0ac\\x7f",
    b"\xc2\x85": "\\xc2\\x85",                      # C1 control NEL
    b"\xe0\x80\xaf\xed\xa0\x80": "\\xe0\\x80\\xaf\\xed\\xa0\\x80",  # overlong, surrogate
    b"\xf4\x90\x80\x80\xf0\x9f\x9b\xa1": "\\xf4\\x90\\x80\\x80\U0001f6e1",
}


def selftest(validator, sample_doc):
    for name, want in LABEL_CASES.items():
        got = label_value(name)
        result(got == want and label_bytes(got) == name, f"label value of {name!r}: {got!r}, want {want!r}")
    try:
        fams = promparse.parse(GOOD_PROM)
        key = ("nfguard_x_hits_total", (("family", "ipv4"), ("set", 'a\\b"c\nd')))
        result(fams["nfguard_x_hits_total"]["samples"].get(key) == 12.0, "parser: escapes in a label value")
    except promparse.PromError as e:
        result(False, f"parser refuses a valid document: {e}")
    for what, text in BAD_PROM.items():
        try:
            promparse.parse(text)
            result(False, f"parser accepts: {what}")
        except promparse.PromError:
            result(True, what)

    result(not errors(validator, sample_doc), "schema accepts the sample report")
    ext = sample_doc["extensions"]

    def broken(change):
        d = copy.deepcopy(sample_doc)
        change(d)
        return d

    bad_docs = {
        "schema version 2": broken(lambda d: d.update(schema=2)),
        "unknown top-level field": broken(lambda d: d.update(extra=1)),
        "missing extension": broken(lambda d: d["extensions"].pop("rtcache")),
        "absent with data": broken(lambda d: d["extensions"]["rtcache"].update(loaded=False)),
        "loaded without data": broken(lambda d: d["extensions"].update(rtcache={"loaded": True})),
        "string counter": broken(lambda d: d["extensions"]["rtcache"].update(hit="1")),
        "negative counter": broken(lambda d: d["extensions"]["rtcache"].update(hit=-1)),
        "counter past 2^64": broken(lambda d: d["extensions"]["rtcache"].update(hit=2 ** 64)),
        "float counter": broken(lambda d: d["extensions"]["rtcache"].update(hit=1.5)),
        "error without loaded": broken(lambda d: d["extensions"].update(rtcache={"error": "x"})),
    }
    if ext["rangeset"].get("sets"):
        bad_docs["set with unknown family"] = broken(lambda d: d["extensions"]["rangeset"]["sets"][0].update(family="inet"))
        bad_docs["set without hits"] = broken(lambda d: d["extensions"]["rangeset"]["sets"][0].pop("hits"))
        bad_docs["set without packet_adds"] = broken(lambda d: d["extensions"]["rangeset"]["sets"][0].pop("packet_adds"))
        bad_docs["set with timeout past 2^32"] = broken(lambda d: d["extensions"]["rangeset"]["sets"][0].update(timeout=2 ** 32))
    if ext["kconnlimit"].get("rules"):
        bad_docs["rule with bad mode"] = broken(lambda d: d["extensions"]["kconnlimit"]["rules"][0].update(mode="over"))
    for what, doc in bad_docs.items():
        result(bool(errors(validator, doc)), f"schema accepts: {what}")


def main(argv):
    args = argv[1:]
    test = args[:1] == ["--selftest"]
    if test:
        args = args[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    with open(args[0], encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    paths = []
    for a in args[1:]:
        if os.path.isdir(a):
            paths += sorted(os.path.join(a, n) for n in os.listdir(a) if n.endswith((".json", ".prom")))
        else:
            paths.append(a)
    result(bool(paths), "no report files given")
    docs, _ = check_files(validator, paths)
    if test:
        full = [d for d in docs.values() if all(d["extensions"][x]["loaded"] and "error" not in d["extensions"][x]
                                                  for x in EXTS) and d["extensions"]["rangeset"]["sets"]]
        result(bool(full), "selftest needs a report with every extension loaded and a set")
        if full:
            selftest(validator, full[0])
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
