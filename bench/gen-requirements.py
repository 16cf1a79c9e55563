#!/usr/bin/env python3
"""Write a large, fully pinned, fully hashed pip requirements file.

usage: gen-requirements.py OUTDIR [--lines N] [--seed S]

Writes OUTDIR/requirements.txt (exactly N physical lines, default 10000),
two small included files next to it (OUTDIR/extra-requirements.txt, named
with -r, and OUTDIR/constraints.txt, named with -c), and OUTDIR/meta.json
with the counts a parser must find.  The output depends only on N and the
seed: the same arguments give the same bytes on every machine (only the
standard library's random.Random with a fixed seed is used).

The main file looks like `pip-compile --generate-hashes` output: a header,
index options, then one block per package:

    name==1.2.3 \\
        --hash=sha256:<64 hex> \\
        --hash=sha256:<64 hex>
        # via
        #   other-package

with a share of extras (`pkg[a,b]==1.0`), environment markers
(`; python_version >= "3.9"`), local version labels (`==2.1.0+cu118`),
stand-alone comments and blank lines.  Every requirement, in every file,
is an exact `==` pin with at least one sha256 hash (pip's hash mode is
all-or-nothing, envbuild rule EB211), and every package name is unique
after PEP 503 normalisation, so `envbuild check` must print nothing.
"""

import argparse
import json
import os
import random
import re
import sys

WORDS = (
    "torch numpy data flow vision text audio core util http async json yaml "
    "cloud client server fast py ml net graph tensor learn kit lib tools "
    "stream cache config parse query auth crypto image signal model train "
    "metrics log trace test mock web api grpc proto arrow table frame plot "
    "geo time date sci stat opt linear sparse deep bayes cuda rocm onnx "
    "serve batch queue event schema types lint format build wheel"
).split()

SEPARATORS = ["-", "_", ".", "-", "-"]

MARKERS = [
    'python_version >= "3.9"',
    'python_version < "3.12"',
    'sys_platform == "linux"',
    'sys_platform != "win32"',
    'platform_machine == "x86_64"',
    'platform_system == "Linux"',
    'implementation_name == "cpython"',
    'os_name == "posix"',
    'python_full_version >= "3.9.2"',
    'python_version >= "3.9" and sys_platform == "linux"',
    '(python_version < "3.11" or platform_machine == "aarch64") and os_name == "posix"',
]

EXTRAS = ["all", "dev", "test", "cuda", "docs", "socks", "security", "full",
          "grpc", "http2", "speedups", "toml"]

LOCAL_LABELS = ["cu118", "cu121", "cpu", "rocm5.6", "cu117.ubuntu22"]

COMMENTS = [
    "# ---- pinned by the platform team ----",
    "# The following packages are considered to be unsafe in a requirements file:",
    "# keep in sync with constraints.txt",
    "# NOTE: bump together with the CUDA base image",
    "#",
]


def canon(name):
    return re.sub(r"[-_.]+", "-", name).lower()


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.seen = set()

    def name(self):
        r = self.rng
        while True:
            n = r.choice([1, 2, 2, 3])
            parts = [r.choice(WORDS) for _ in range(n)]
            name = parts[0]
            for p in parts[1:]:
                name += r.choice(SEPARATORS) + p
            if r.random() < 0.3:
                name += str(r.randint(2, 99))
            if r.random() < 0.05:
                name = name.capitalize()
            c = canon(name)
            if c not in self.seen:
                self.seen.add(c)
                return name

    def version(self):
        r = self.rng
        v = "%d.%d" % (r.randint(0, 30), r.randint(0, 40))
        if r.random() < 0.8:
            v += ".%d" % r.randint(0, 30)
        x = r.random()
        if x < 0.03:
            v += "rc%d" % r.randint(1, 3)
        elif x < 0.05:
            v += ".post%d" % r.randint(1, 2)
        elif x < 0.06:
            v += "b%d" % r.randint(1, 4)
        return v

    def hash_(self):
        return "%064x" % self.rng.getrandbits(256)

    def requirement(self, allow_extras=True, allow_local=True, allow_marker=True):
        r = self.rng
        s = self.name()
        if allow_extras and r.random() < 0.10:
            ex = sorted(r.sample(EXTRAS, r.randint(1, 3)))
            s += "[" + ",".join(ex) + "]"
        s += "==" + self.version()
        if allow_local and r.random() < 0.04:
            s += "+" + r.choice(LOCAL_LABELS)
        if allow_marker and r.random() < 0.15:
            s += " ; " + r.choice(MARKERS)
        return s

    def block(self, via_pool):
        """One pip-compile style block: requirement, hashes, via comments."""
        r = self.rng
        req = self.requirement()
        nh = r.choice([1, 2, 2, 2, 3, 3, 4])
        lines = [req + " \\"]
        for i in range(nh):
            tail = " \\" if i < nh - 1 else ""
            lines.append("    --hash=sha256:" + self.hash_() + tail)
        if via_pool and r.random() < 0.6:
            vias = r.sample(via_pool, min(len(via_pool), r.randint(1, 3)))
            if len(vias) == 1 and r.random() < 0.5:
                lines.append("    # via " + vias[0])
            else:
                lines.append("    # via")
                lines.extend("    #   " + v for v in sorted(vias))
        return lines


def write(path, lines):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--lines", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=20240611)
    a = ap.parse_args()
    if a.lines < 200:
        ap.error("--lines must be at least 200")
    g = Gen(a.seed)
    os.makedirs(a.outdir, exist_ok=True)

    # constraints.txt: a -c file, entries named, no extras, no editables;
    # hashed too, like a `pip-compile --generate-hashes` constraints output.
    cons = ["# constraints shared by every image (generated)"]
    ncons = 0
    for _ in range(12):
        cons.append(g.requirement(allow_extras=False) + " \\")
        cons.append("    --hash=sha256:" + g.hash_())
        ncons += 1
    write(os.path.join(a.outdir, "constraints.txt"), cons)

    # extra-requirements.txt: a -r file with a handful of hashed pins.
    extra = ["# extra tooling pulled in with -r (generated)", ""]
    nextra = 0
    for _ in range(15):
        extra.extend(g.block([]))
        nextra += 1
    write(os.path.join(a.outdir, "extra-requirements.txt"), extra)

    out = [
        "#",
        "# This file is autogenerated by pip-compile with Python 3.11",
        "# by the following command:",
        "#",
        "#    pip-compile --generate-hashes --output-file=requirements.txt requirements.in",
        "#",
        "--index-url https://pypi.org/simple",
        "--extra-index-url https://download.pytorch.org/whl/cu118",
        "",
        "-c constraints.txt",
        "-r extra-requirements.txt",
        "",
    ]
    nreq = 0
    via_pool = ["-r requirements.in", "-c constraints.txt"]
    # Leave room for the closing lines; stop before overshooting.
    while True:
        x = g.rng.random()
        if x < 0.04:
            chunk = [g.rng.choice(COMMENTS)]
        elif x < 0.08:
            chunk = [""]
        else:
            chunk = g.block(via_pool)
        if len(out) + len(chunk) > a.lines - 2:
            break
        out.extend(chunk)
        if chunk and chunk[0].endswith(" \\"):
            nreq += 1
            # later packages may be "via" this one
            via_pool.append(chunk[0].split("==")[0].split("[")[0])
    # Pad to exactly a.lines lines with comments / blank lines.
    out.append("")
    while len(out) < a.lines - 1:
        out.append("# (padding)")
    out.append("# end of file")
    assert len(out) == a.lines, len(out)
    write(os.path.join(a.outdir, "requirements.txt"), out)

    meta = {
        "lines": a.lines,
        "seed": a.seed,
        "requirements_main": nreq,
        "requirements_extra": nextra,
        "constraints": ncons,
        # what pip's parse_requirements yields: every requirement and
        # every constraint, across the three files
        "parsed_total": nreq + nextra + ncons,
    }
    with open(os.path.join(a.outdir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
