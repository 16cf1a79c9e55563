#!/usr/bin/env python3
"""repack-deb-wheel.py - a real wheel from a Debian python3-* package
installed on this machine, for the loopback test index.

Usage: repack-deb-wheel.py OUTDIR PACKAGE...
Prints the path of every wheel it wrote, one a line.

A wheel is the files it installs into site-packages plus its .dist-info;
a Debian python3-* package built from a wheel installs exactly those into
/usr/lib/python3/dist-packages (which files: `dpkg -L PACKAGE`), so they
are packed back as they are.  Bytecode (__pycache__, made by py3compile
at install time, not the package's) is left out.  The .dist-info's RECORD
is written anew from the files packed (Debian's may name files it does
not ship), each with its sha256 (urlsafe base64, no padding) and size,
RECORD itself without either; WHEEL is kept, and must say
Root-Is-Purelib: true (a pure-Python wheel: the tag is its Tag lines').

Deterministic: entries sorted, every timestamp 1980-01-01, modes 0644
(0755 for files executable in the package), deflated; the same package
gives the same bytes.

Used for python3-poetry-core (poetry-core 1.4.0, Debian 12: pure Python,
its dependencies vendored), the second PEP 517 backend of
tests/cli/sdist_backends.sh.

Python 3 standard library only.
"""
import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from email.parser import HeaderParser

SITE = "/usr/lib/python3/dist-packages/"


def record_hash(data):
    d = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(d).rstrip(b"=").decode()


def repack(out, package):
    listing = subprocess.run(["dpkg", "-L", package], check=True, capture_output=True,
                             text=True).stdout.splitlines()
    files = sorted(p[len(SITE):] for p in listing
                   if p.startswith(SITE) and os.path.isfile(p) and not os.path.islink(p)
                   and "/__pycache__/" not in p)
    infos = sorted({f.split("/")[0] for f in files if f.split("/")[0].endswith(".dist-info")})
    if len(infos) != 1:
        sys.exit(f"{package}: not one .dist-info in {SITE}: {infos}")
    info = infos[0]
    with open(SITE + info + "/METADATA", encoding="utf-8") as f:
        md = HeaderParser().parse(f)
    with open(SITE + info + "/WHEEL", encoding="utf-8") as f:
        wh = HeaderParser().parse(f)
    if wh.get("Root-Is-Purelib", "").strip().lower() != "true":
        sys.exit(f"{package}: not a pure-Python wheel (Root-Is-Purelib)")
    tags = sorted(set(t.strip() for t in wh.get_all("Tag", [])))
    if len(tags) != 1:
        sys.exit(f"{package}: one Tag expected, not {tags}")
    dist = md["Name"].strip().replace("-", "_").replace(".", "_")
    version = md["Version"].strip()
    if info != f"{dist}-{version}.dist-info" and info.lower() != f"{dist}-{version}.dist-info".lower():
        sys.exit(f"{package}: {info} does not name {dist} {version}")
    record_name = info + "/RECORD"
    members = [f for f in files if f != record_name]
    rows = []
    path = os.path.join(out, f"{dist}-{version}-{tags[0]}.whl")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        def put(name, data, mode):
            zi = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)

        # the .dist-info last, as wheel builders write it
        for name in sorted(members, key=lambda m: (m.startswith(info + "/"), m)):
            with open(SITE + name, "rb") as f:
                data = f.read()
            mode = 0o755 if os.stat(SITE + name).st_mode & 0o111 else 0o644
            put(name, data, mode)
            rows.append(f"{name},{record_hash(data)},{len(data)}")
        rows.append(f"{record_name},,")
        put(record_name, ("\n".join(rows) + "\n").encode(), 0o644)
    print(path)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    os.makedirs(argv[1], exist_ok=True)
    for package in argv[2:]:
        repack(argv[1], package)


if __name__ == "__main__":
    main(sys.argv)
