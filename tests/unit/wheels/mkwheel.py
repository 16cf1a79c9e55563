#!/usr/bin/env python3
"""mkwheel.py - write the test wheels of check_wheel.c.

Usage: python3 mkwheel.py OUTDIR VARIANT
Prints the path of the wheel it wrote.

Every wheel starts from one well-formed pure-Python wheel (demo_pkg 1.2.0:
console and GUI entry points, .data/scripts with "#!python", .data/data,
.data/headers, .data/purelib, extras in Requires-Dist, a __pycache__ file,
a name with a comma).  A hostile VARIANT changes exactly one thing, so a
test that sees the wheel refused knows which check refused it.  RECORD is
computed from the members unless the variant is about RECORD.

The zip is written by hand (not with zipfile) so that a variant can hold
what zipfile would refuse or normalise: symlink modes, duplicate names,
precompressed data.
"""
import base64
import hashlib
import os
import struct
import sys
import zlib

NAME = "demo_pkg"
VERSION = "1.2.0"
DI = f"{NAME}-{VERSION}.dist-info"
DATA = f"{NAME}-{VERSION}.data"

METADATA = """Metadata-Version: 2.1
Name: demo-pkg
Version: 1.2.0
Summary: a demo
Requires-Python: >=3.8
Requires-Dist: requests (>=2.0)
Requires-Dist: click>=8 ; extra == "cli"
Requires-Dist: colorama;
  sys_platform == "win32"
Provides-Extra: cli
Provides-Extra: Fancy_Stuff

This is the long description.
Name: not-a-header
"""

WHEEL = """Wheel-Version: 1.0
Generator: mkwheel
Root-Is-Purelib: true
Tag: py3-none-any
"""

ENTRY_POINTS = """[console_scripts]
demo = demo_pkg.cli:main
demo-tool2 = demo_pkg.cli:Tool.run [cli]

[gui_scripts]
demo-gui = demo_pkg.gui:main

[demo.plugins]
x = demo_pkg:plugin
"""


GUI = b"def main():\n    return 0\n"


def base_members():
    """(name, data, mode) in archive order."""
    return [
        (f"{NAME}/__init__.py", b"__version__ = '1.2.0'\n", 0o644),
        (f"{NAME}/cli.py", b"def main():\n    return 0\n\nclass Tool:\n    run = main\n", 0o755),
        (f"{NAME}/gui.py", GUI, 0o644),
        (f"{NAME}/data,file.txt", b"comma\n", 0o644),
        (f"{NAME}/__pycache__/cli.cpython-311.pyc", b"\x00bytecode", 0o644),
        (f"{DATA}/scripts/demo-tool", b"#!python\nprint('tool')\n", 0o644),
        (f"{DATA}/scripts/demo-w", b"#!pythonw -u\r\nprint('w')\n", 0o644),
        (f"{DATA}/scripts/plain.sh", b"#!/bin/sh\necho plain\n", 0o644),
        (f"{DATA}/scripts/demo", b"#!python\n# setuptools wrapper, pip skips it\n", 0o755),
        (f"{DATA}/data/share/demo/readme.txt", b"readme\n", 0o644),
        (f"{DATA}/headers/demo.h", b"#define DEMO 1\n", 0o644),
        (f"{DATA}/purelib/demo_extra.py", b"X = 1\n", 0o644),
        (f"{DI}/METADATA", METADATA.encode(), 0o644),
        (f"{DI}/WHEEL", WHEEL.encode(), 0o644),
        (f"{DI}/entry_points.txt", ENTRY_POINTS.encode(), 0o644),
        (f"{DI}/top_level.txt", b"demo_pkg\n", 0o644),
    ]


def b64(d):
    return base64.urlsafe_b64encode(d).rstrip(b"=").decode()


def record_line(name, data, algo="sha256"):
    h = hashlib.new(algo, data).digest()
    q = f'"{name}"' if "," in name else name
    return f"{q},{algo}={b64(h)},{len(data)}\n"


def record_for(members, skip=()):
    out = ""
    for name, data, _ in members:
        if name in skip or name == f"{DI}/RECORD" or data is None:
            continue
        out += record_line(name, data)
    return out + f"{DI}/RECORD,,\n"


class Member:
    def __init__(self, name, data=None, mode=0o644, raw=None, flags=0x800, local_name=None):
        self.name = name.encode() if isinstance(name, str) else name
        self.local_name = local_name.encode() if local_name else self.name
        self.mode = mode
        self.flags = flags
        if raw is not None:  # (compressed, usize, crc)
            self.comp, self.usize, self.crc = raw
            self.method = 8
        else:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            comp = c.compress(data) + c.flush()
            self.comp, self.usize, self.crc = comp, len(data), zlib.crc32(data)
            self.method = 8


def write_zip(path, members):
    with open(path, "wb") as f:
        central = b""
        for m in members:
            off = f.tell()
            f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, m.flags, m.method, 0, 0x21,
                                m.crc, len(m.comp), m.usize, len(m.local_name), 0))
            f.write(m.local_name)
            f.write(m.comp)
            central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, (3 << 8) | 20, 20, m.flags,
                                   m.method, 0, 0x21, m.crc, len(m.comp), m.usize,
                                   len(m.name), 0, 0, 0, 0, (m.mode & 0xFFFF) << 16, off)
            central += m.name
        cd = f.tell()
        f.write(central)
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                            len(central), cd, 0))


def zip_bomb_member(name, gib=2):
    """2 GiB of zeros in about 2 MB of deflate: after a full flush the
    compressor starts afresh, so every 1 MiB chunk compresses to the same
    bytes and the stream is one block repeated.  The CRC is not computed
    (it would take seconds): an installer must stop long before the end."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    comp = block * (gib * 1024) + c.flush(zlib.Z_FINISH)
    return Member(name, raw=(comp, gib << 30, 0), mode=0o644)


GUI_LINE = record_line(f"{NAME}/gui.py", GUI)


def main():
    outdir, variant = sys.argv[1], sys.argv[2]
    members = base_members()
    fname = f"{NAME}-{VERSION}-py3-none-any.whl"
    record = None
    extra = []  # Member objects appended after RECORD

    def add(name, data, mode=0o644):
        members.append((name, data, mode))

    def replace(name, data):
        for i, (n, _, mode) in enumerate(members):
            if n == name:
                members[i] = (n, data, mode)

    if variant == "good":
        pass
    elif variant == "traversal":
        add("../../etc/x", b"evil\n")
    elif variant == "absolute":
        add("/etc/x", b"evil\n")
    elif variant == "backslash":
        add(f"{NAME}\\evil.py", b"evil\n")
    elif variant == "dotdir":
        add(f"{NAME}/./x.py", b"x\n")
    elif variant == "longname":
        add(f"{NAME}/" + "a" * 300 + ".py", b"x\n")
    elif variant == "deeppath":
        add(f"{NAME}/" + "d/" * 1600 + "x.py", b"x\n")
    elif variant == "newline":
        add(f"{NAME}/a\nb.py", b"x\n")
    elif variant == "whiteout":
        add(f"{NAME}/.wh..wh..opq", b"")
    elif variant == "symlink":
        add(f"{NAME}/link", b"/etc/passwd", 0o120777)
    elif variant == "hash_mismatch":
        record = record_for(members).replace(GUI_LINE, GUI_LINE.replace(
            GUI_LINE.split(",")[1], "sha256=" + b64(hashlib.sha256(b"other").digest())))
    elif variant == "size_mismatch":
        record = record_for(members).replace(GUI_LINE, GUI_LINE.replace(",25\n", ",26\n"))
    elif variant == "md5":
        record = record_for(members).replace(GUI_LINE, record_line(f"{NAME}/gui.py", GUI, "md5"))
    elif variant == "sha512":
        record = "".join(record_line(n, d, "sha512") for n, d, _ in members) + f"{DI}/RECORD,,\n"
    elif variant == "unlisted":
        record = record_for(members, skip={f"{NAME}/gui.py"})
    elif variant == "missing":
        record = record_for(members) + record_line(f"{NAME}/gone.py", b"gone\n")
    elif variant == "no_record":
        record = False
    elif variant == "unknown_data_key":
        add(f"{DATA}/lib/x.py", b"x\n")
    elif variant == "other_data_dir":
        add("other-1.0.data/purelib/x.py", b"x\n")
    elif variant == "ep_slash":
        replace(f"{DI}/entry_points.txt", b"[console_scripts]\n../../evil = demo_pkg.cli:main\n")
    elif variant == "ep_dot":
        replace(f"{DI}/entry_points.txt", b"[gui_scripts]\n.hidden = demo_pkg.cli:main\n")
    elif variant == "ep_inject":
        replace(f"{DI}/entry_points.txt", b"[console_scripts]\nx = os;os.system('id'):main\n")
    elif variant == "wheel_v2":
        replace(f"{DI}/WHEEL", WHEEL.replace("1.0", "2.0").encode())
    elif variant == "wheel_v19":
        replace(f"{DI}/WHEEL", WHEEL.replace("1.0", "1.9").encode())
    elif variant == "platlib":
        replace(f"{DI}/WHEEL", WHEEL.replace("true", "false").encode())
    elif variant == "two_distinfo":
        add("other-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: other\nVersion: 1.0\n")
    elif variant == "distinfo_mismatch":
        members = [(n.replace(DI, "demo_pkg-1.3.0.dist-info"), d, m) for n, d, m in members]
        record = record_for(members).replace(f"{DI}/RECORD", "demo_pkg-1.3.0.dist-info/RECORD")
        members.append(("demo_pkg-1.3.0.dist-info/RECORD", record.encode(), 0o644))
        record = False
    elif variant == "metadata_mismatch":
        replace(f"{DI}/METADATA", METADATA.replace("Name: demo-pkg", "Name: other-pkg").encode())
    elif variant == "duplicate":
        add(f"{NAME}/gui.py", GUI)
    elif variant == "collision":
        # .data/purelib/demo_pkg/gui.py and demo_pkg/gui.py land on one path.
        add(f"{DATA}/purelib/{NAME}/gui.py", b"other\n")
    elif variant == "utf8":
        add(f"{NAME}/donn\u00e9es-\u65e5\u672c.txt", b"utf8\n")
    elif variant == "not_utf8":
        # cp437 to Python, the locale's charset to others
        extra.append(Member(f"{NAME}/caf\u00e9.txt".encode("cp437"), b"x", flags=0))
    elif variant == "local_mismatch":
        # the central directory says gui2.py, the local header evil.py
        extra.append(Member(f"{NAME}/gui2.py", b"x\n", local_name=f"{NAME}/evil.py"))
    elif variant == "bomb":
        extra.append(zip_bomb_member(f"{NAME}/zeros.bin"))
    elif variant == "badname":
        fname = "demo_pkg.whl"
    else:
        sys.exit(f"mkwheel.py: unknown variant {variant}")

    if record is None:
        record = record_for(members)
    zm = [Member(n, d, m) for n, d, m in members]
    if record is not False:
        zm.append(Member(f"{DI}/RECORD", record.encode(), 0o644))
    zm.extend(extra)
    path = os.path.join(outdir, fname)
    write_zip(path, zm)
    print(path)


if __name__ == "__main__":
    main()
