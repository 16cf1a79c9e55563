#!/usr/bin/env python3
"""Parse a requirements file with pip's own parser, as `pip install -r` does.

usage: pip-parse.py FILE [--times-file PATH] [--expect N] [--verbose]

Uses the pip that the running interpreter imports (the bench runs it with
Debian's /usr/bin/python3, i.e. python3-pip).  Every line goes through
pip._internal.req.req_file.parse_requirements (line joining, comments,
option parsing with shlex/optparse, -r/-c includes) and every requirement
string through install_req_from_parsed_requirement (PEP 508 parsing of
name, extras, specifier and marker, plus the hash options).

All imports and the PipSession are made before the clock starts, so the
time written to --times-file (one line, milliseconds, appended) is the
parse loop alone; the process wall time is measured from outside.
Exit status: 0 parsed, 1 the count differs from --expect, 2 pip raised.
"""

import sys
import time

from pip._internal.network.session import PipSession
from pip._internal.req.constructors import install_req_from_parsed_requirement
from pip._internal.req.req_file import parse_requirements


def main(argv):
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--times-file")
    ap.add_argument("--expect", type=int)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args(argv)

    session = PipSession()
    n = nhash = 0
    t0 = time.perf_counter()
    try:
        for parsed in parse_requirements(a.file, session=session):
            ireq = install_req_from_parsed_requirement(parsed)
            n += 1
            nhash += len(ireq.hash_options.get("sha256", ()))
    except Exception as e:  # pip's own errors: bad line, missing include ...
        print("pip-parse: pip failed: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return 2
    dt_ms = (time.perf_counter() - t0) * 1000.0
    if a.times_file:
        with open(a.times_file, "a") as f:
            f.write("%.3f\n" % dt_ms)
    if a.verbose:
        import pip

        print("pip %s from %s" % (pip.__version__, pip.__file__))
        print("requirements: %d  sha256 hashes: %d  parse: %.1f ms" % (n, nhash, dt_ms))
    if a.expect is not None and n != a.expect:
        print("pip-parse: pip found %d requirements, expected %d" % (n, a.expect), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
