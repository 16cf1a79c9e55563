#!/usr/bin/env python3
"""make-scenario.py - package indexes for the resolver tests and benchmark.

  make-scenario.py index SCENARIO.json ROOT
      Write a pure wheel for every release of SCENARIO (make-wheels.py's
      deterministic writer) and lay out a simple repository at ROOT with
      make-index.py (PEP 691 + PEP 503, PEP 658 metadata), then apply what
      make-index.py does not do: PEP 592 yanking and dropping the PEP 658
      file of a release (so the wheel's own METADATA must be read).
      SCENARIO is {"releases": [{"name", "version", "deps": [...],
      "requires_python", "tags": ["py3-none-any", ...], "yanked": bool,
      "no_metadata": bool}, ...]}; one wheel per tag.

  make-scenario.py bench ROOT N SEED
      A generated index of N projects for bench/pin: layers of projects,
      each with several versions whose dependencies reach into the next
      layers with ranges, and some newest versions that need a version of
      a dependency that others need newer, so a resolver must backtrack.
      Prints the top-level requirements, one a line.

  make-scenario.py serve ROOT [MAX_SECONDS [LOG]]
      make-index.py's server with Nagle's algorithm off (TCP_NODELAY):
      its handler writes headers and body separately, and with Nagle on
      every response waits for the client's delayed ACK (about 40 ms),
      which would time the loopback, not the resolvers.

Python 3 standard library only; deterministic for a given input.
"""
import contextlib
import importlib.util
import io
import json
import os
import random
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


mw = load("make_wheels", "make-wheels.py")
mi = load("make_index", "make-index.py")


def write_release(out, r):
    meta = ""
    if r.get("requires_python"):
        meta += f"Requires-Python: {r['requires_python']}\n"
    extras = set()
    for d in r.get("deps", []):
        meta += f"Requires-Dist: {d}\n"
        m = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", d)
        if m:
            extras.add(m.group(1))
    for e in sorted(extras):
        meta += f"Provides-Extra: {e}\n"
    mod = re.sub(r"[-.]", "_", r["name"])
    for tag in r.get("tags", ["py3-none-any"]):
        mw.write_wheel(out, r["name"], r["version"],
                       [(f"{mod}/__init__.py", f"VERSION = {r['version']!r}\n".encode(), False)],
                       meta, tag=tag)


def postprocess(root, releases):
    by_file = {}
    for r in releases:
        for tag in r.get("tags", ["py3-none-any"]):
            by_file[f"{r['name']}-{r['version']}-{tag}.whl"] = r
    for proj in sorted(os.listdir(root)):
        pj = os.path.join(root, proj, "index.json")
        if not os.path.isfile(pj):
            continue
        with open(pj) as f:
            page = json.load(f)
        changed = False
        for fl in page["files"]:
            r = by_file.get(fl["filename"], {})
            if r.get("yanked"):
                fl["yanked"] = "withdrawn by the test"
                changed = True
            if r.get("no_metadata"):
                del fl["core-metadata"]
                del fl["dist-info-metadata"]
                os.unlink(os.path.join(root, proj, fl["filename"] + ".metadata"))
                changed = True
        if not changed:
            continue
        with open(pj, "w") as f:
            json.dump(page, f, indent=1, sort_keys=True)
            f.write("\n")
        # The HTML page says the same.
        ph = os.path.join(root, proj, "index.html")
        with open(ph) as f:
            text = f.read()
        for fl in page["files"]:
            r = by_file.get(fl["filename"], {})
            anchor = f">{fl['filename']}</a>"
            line = next(l for l in text.split("\n") if l.endswith(anchor + "<br/>"))
            new = line
            if r.get("yanked"):
                new = new.replace("<a ", '<a data-yanked="withdrawn by the test" ', 1)
            if r.get("no_metadata"):
                new = re.sub(r' data-(core|dist-info)-metadata="[^"]*"', "", new)
            text = text.replace(line, new)
        with open(ph, "w") as f:
            f.write(text)


def index(scenario, root):
    with open(scenario) as f:
        releases = json.load(f)["releases"]
    with tempfile.TemporaryDirectory() as w:
        for r in releases:
            write_release(w, r)
        with contextlib.redirect_stdout(io.StringIO()):
            mi.build(root, [w])
    postprocess(root, releases)


def bench(root, n, seed):
    rnd = random.Random(seed)
    layers = 8
    per = n // layers
    names = [[f"bp{l}x{i:04d}" for i in range(per)] for l in range(layers)]
    releases = []
    for l in range(layers):
        for name in names[l]:
            nver = rnd.randint(3, 12)
            for v in range(nver):
                deps = []
                if l + 1 < layers:
                    for _ in range(rnd.randint(1, 4)):
                        tl = rnd.randint(l + 1, min(layers - 1, l + 2))
                        dep = rnd.choice(names[tl])
                        lo = rnd.randint(0, 2)
                        deps.append(f"{dep}>=1.{lo}")
                    if nver >= 6 and v >= nver - 2 and rnd.random() < 0.3:
                        # the newest versions cap a dependency that others
                        # need newer: a resolver must backtrack.  (Always
                        # satisfiable: the newest uncapped version of every
                        # project is >= 1.3 and no bound asks more than 1.2;
                        # pip 23's resolver gives up on a range that matches
                        # nothing, so none is used.)
                        deps.append(f"{rnd.choice(names[l + 1])}<1.1")
                releases.append({"name": name, "version": f"1.{v}", "deps": sorted(set(deps))})
    with tempfile.TemporaryDirectory() as w:
        for r in releases:
            write_release(w, r)
        with contextlib.redirect_stdout(io.StringIO()):
            mi.build(root, [w])
    top = sorted(rnd.sample(names[0], min(20, len(names[0]))))
    for t in top:
        print(t)


def main(argv):
    if len(argv) == 4 and argv[1] == "index":
        index(argv[2], argv[3])
    elif len(argv) in (3, 4, 5) and argv[1] == "serve":
        import argparse
        mi.Handler.disable_nagle_algorithm = True
        mi.serve(argparse.Namespace(root=os.path.abspath(argv[2]),
                                    max_seconds=float(argv[3]) if len(argv) >= 4 else 300,
                                    log=argv[4] if len(argv) == 5 else None,
                                    no_json=False))
    elif len(argv) == 5 and argv[1] == "bench":
        bench(argv[2], int(argv[3]), int(argv[4]))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
