#!/usr/bin/env python3
"""pin-verify.py ROOT TOP.in PINS - is PINS (name==version, one a line) a
valid answer for TOP.in on the index tree ROOT (make-scenario.py bench)?
Every top-level name pinned, every Requires-Dist of every pin satisfied,
nothing pinned that nothing needs.  Exit 0 when valid, else 1 with the
violations.  Uses pip's vendored packaging (the same PEP 440 rules)."""
import os
import re
import sys
from email.parser import HeaderParser

try:
    from packaging.requirements import Requirement
except ImportError:
    from pip._vendor.packaging.requirements import Requirement


def main(root, top, pins_file):
    pins = {}
    for line in open(pins_file):
        m = re.match(r"^([a-z0-9_.-]+)(\[[^\]]*\])?==(\S+)", line)
        if m:
            pins[m.group(1)] = m.group(3)
    bad, needed = [], set()
    for line in open(top):
        n = line.strip()
        if n:
            needed.add(n)
            if n not in pins:
                bad.append(f"top-level {n} not pinned")
    for n, v in sorted(pins.items()):
        md = open(os.path.join(root, n, f"{n}-{v}-py3-none-any.whl.metadata")).read()
        for rd in HeaderParser().parsestr(md).get_all("Requires-Dist") or []:
            r = Requirement(rd)
            needed.add(r.name)
            if r.name not in pins or not r.specifier.contains(pins[r.name], prereleases=True):
                bad.append(f"{n}=={v} needs {rd}, pinned {pins.get(r.name)}")
    for n in sorted(set(pins) - needed):
        bad.append(f"{n} pinned but not needed")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
