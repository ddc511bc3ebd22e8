#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Strict parser of the Prometheus text exposition format (0.0.4), as
node_exporter's textfile collector reads it, stricter where our output
should be:

- every line ends with \\n (also the last), no blank lines, no stray
  whitespace, no comment lines other than "# HELP" and "# TYPE";
- metric and label names match [a-zA-Z_:][a-zA-Z0-9_:]* / [a-zA-Z_][a-zA-Z0-9_]*
  (label names not starting with "__"); label values only use the escapes
  \\\\ \\" \\n; no duplicate label name in a sample, no trailing comma;
- HELP and TYPE at most once per metric family, before its samples; a TYPE
  of counter|gauge|untyped|summary|histogram; a sample whose family has no
  TYPE is refused (we always declare); a family's samples are contiguous;
  counters end in _total and are finite and >= 0;
- values are Go ParseFloat numbers (or NaN, +Inf, -Inf); no timestamps
  (the textfile collector refuses them); no two samples with the same name
  and labels.

parse(text) returns {family: {"type": T, "help": H, "samples":
{(name, ((label, value), ...sorted)): float}, "raw": {same key: the value's
text}}} or raises PromError.
As a program: promparse.py FILE... checks each file (exit 1 on error).
"""
import math
import re
import sys

METRIC_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
VALUE_RE = re.compile(r"[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|Inf|NaN)")
TYPES = ("counter", "gauge", "untyped", "summary", "histogram")


class PromError(Exception):
    pass


def _family_of(name, families):
    """The declared family a sample name belongs to (histogram/summary suffixes)."""
    if name in families:
        return name
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and families.get(name[: -len(suffix)], {}).get("type") in (
            "histogram",
            "summary",
        ):
            return name[: -len(suffix)]
    return None


def _labels(s, lineno):
    """Parse '{...}' at the start of s; return (labels tuple, rest)."""
    assert s[0] == "{"
    i, labels, seen = 1, [], set()
    if s[i:i + 1] == "}":
        return (), s[i + 1:]
    while True:
        m = LABEL_RE.match(s, i)
        if not m:
            raise PromError(f"line {lineno}: bad label name at {s[i:i + 20]!r}")
        lname = m.group(0)
        if lname.startswith("__"):
            raise PromError(f"line {lineno}: reserved label name {lname!r}")
        if lname in seen:
            raise PromError(f"line {lineno}: duplicate label {lname!r}")
        seen.add(lname)
        i = m.end()
        if s[i:i + 2] != '="':
            raise PromError(f"line {lineno}: expected =\" after label {lname!r}")
        i += 2
        val = []
        while True:
            if i >= len(s):
                raise PromError(f"line {lineno}: unterminated label value")
            c = s[i]
            if c == "\\":
                nxt = s[i + 1:i + 2]
                if nxt not in ("\\", '"', "n"):
                    raise PromError(f"line {lineno}: bad escape \\{nxt} in label value")
                val.append("\n" if nxt == "n" else nxt)
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise PromError(f"line {lineno}: newline in label value")
            else:
                val.append(c)
                i += 1
        labels.append((lname, "".join(val)))
        if s[i:i + 1] == "}":
            return tuple(sorted(labels)), s[i + 1:]
        if s[i:i + 1] != ",":
            raise PromError(f"line {lineno}: expected , or }} after label {lname!r}")
        i += 1
        if s[i:i + 1] == "}":
            raise PromError(f"line {lineno}: trailing comma in labels")


def parse(text):
    if not text:
        raise PromError("empty input")
    if not text.endswith("\n"):
        raise PromError("last line does not end with a newline")
    families = {}
    order = []          # families in the order their samples appeared
    samples_seen = set()
    for lineno, line in enumerate(text[:-1].split("\n"), 1):
        if line == "":
            raise PromError(f"line {lineno}: blank line")
        if line != line.strip() or "\t" in line or "\r" in line:
            raise PromError(f"line {lineno}: stray whitespace")
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) < 3 or parts[0] != "#" or parts[1] not in ("HELP", "TYPE"):
                raise PromError(f"line {lineno}: comment that is not # HELP or # TYPE: {line!r}")
            kind, name = parts[1], parts[2]
            if not METRIC_RE.fullmatch(name):
                raise PromError(f"line {lineno}: bad metric name {name!r}")
            fam = families.setdefault(name, {"type": None, "help": None, "samples": {}, "raw": {}})
            if fam["samples"]:
                raise PromError(f"line {lineno}: {kind} of {name} after its samples")
            if kind == "HELP":
                if fam["help"] is not None:
                    raise PromError(f"line {lineno}: second HELP for {name}")
                doc = parts[3] if len(parts) == 4 else ""
                if re.search(r"\\[^\\n]|\\$", doc):
                    raise PromError(f"line {lineno}: bad escape in HELP of {name}")
                fam["help"] = doc
            else:
                if fam["type"] is not None:
                    raise PromError(f"line {lineno}: duplicate TYPE for {name}")
                if len(parts) != 4 or parts[3] not in TYPES:
                    raise PromError(f"line {lineno}: bad TYPE line {line!r}")
                if parts[3] == "counter" and not name.endswith("_total"):
                    raise PromError(f"line {lineno}: counter {name} does not end in _total")
                fam["type"] = parts[3]
            continue
        m = METRIC_RE.match(line)
        if not m:
            raise PromError(f"line {lineno}: bad metric name in {line!r}")
        name, rest = m.group(0), line[m.end():]
        labels = ()
        if rest.startswith("{"):
            labels, rest = _labels(rest, lineno)
        if not rest.startswith(" "):
            raise PromError(f"line {lineno}: expected a space before the value in {line!r}")
        fields = rest[1:].split(" ")
        if len(fields) != 1:
            raise PromError(f"line {lineno}: timestamp or trailing text after the value in {line!r}")
        if not VALUE_RE.fullmatch(fields[0]):
            raise PromError(f"line {lineno}: value {fields[0]!r} is not a number")
        value = float(fields[0])
        famname = _family_of(name, families)
        if famname is None or families[famname]["type"] is None:
            raise PromError(f"line {lineno}: sample {name} without a TYPE")
        fam = families[famname]
        if order and order[-1] != famname and famname in order:
            raise PromError(f"line {lineno}: samples of {famname} are not contiguous")
        if not order or order[-1] != famname:
            order.append(famname)
        if fam["type"] == "counter" and (math.isnan(value) or value < 0 or math.isinf(value)):
            raise PromError(f"line {lineno}: counter {name} has value {fields[0]}")
        key = (name, labels)
        if key in samples_seen:
            raise PromError(f"line {lineno}: duplicate sample {name}{dict(labels)}")
        samples_seen.add(key)
        fam["samples"][key] = value
        fam["raw"][key] = fields[0]
    return families


def main(argv):
    rc = 0
    for path in argv[1:]:
        try:
            with open(path, encoding="utf-8") as f:
                parse(f.read())
        except (PromError, UnicodeDecodeError, OSError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
