#!/usr/bin/env python3
"""make-wheels.py - build the wheels of the Python install tests.

Usage: make-wheels.py OUTDIR
Prints the path of every wheel it wrote, one a line.

Pure wheels are written with the standard library only (zipfile, hashlib,
base64), deterministically: entries in a fixed order, every timestamp
1980-01-01, fixed modes, so the same script gives the same bytes anywhere.
Every wheel has a correct RECORD (sha256 urlsafe-base64 without padding,
sizes) except where a hostile wheel is about RECORD.

  tinyapp-1.0.0       package tinyapp: console_scripts `tinyapp` (prints
                      "tinyapp ok"), gui_scripts `tinyapp-gui`,
                      .data/scripts/tinyapp-legacy ("#!python"),
                      .data/data/share/tinyapp/README,
                      Requires-Dist tinydep>=1.0 and tinyextra==2.0 [fancy]
  tinydep-0.9.0/1.2.0/1.3.0
  tinyextra-2.0.0
  futureonly-1.0.0    Requires-Python: >=3.99
  evil-1.0.0          RECORD's hash of evil/__init__.py is wrong
  patchdep-1.0.0      Requires-Dist tinydep>=1.0 when python_full_version >= 3.11.1
  badmarker-1.0.0     Requires-Dist tinydep; python_version ~= '3' (packaging
                      raises: '3' is not a version ~= accepts)
  traversal-1.0.0     an entry "../../etc/evil" (listed in RECORD correctly)
  tinyspeedup-1.0.0   a real C extension module `_speedup` (answer() -> 42),
                      built from cext/_speedup.c by setuptools + wheel with
                      the system python3 (Debian: python3-setuptools,
                      python3-wheel, python3-dev, gcc); tagged
                      cp311-cp311-linux_x86_64 on Debian bookworm.

--no-cext skips the C extension.  The C build uses SOURCE_DATE_EPOCH and
-g0, so it is reproducible too (same compiler, same Python).
"""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

DATE = (1980, 1, 1, 0, 0, 0)


def record_hash(data):
    d = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(d).rstrip(b"=").decode()


def write_wheel(outdir, name, version, files, metadata_extra="", tag="py3-none-any",
                entry_points=None, bad_record=None):
    """files: list of (archive path, bytes, executable).  dist-info is added."""
    di = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" \
           f"Summary: {name}, a test package of envbuild\n{metadata_extra}"
    wheel = f"Wheel-Version: 1.0\nGenerator: envbuild-make-wheels\n" \
            f"Root-Is-Purelib: true\nTag: {tag}\n"
    members = list(files)
    members.append((f"{di}/METADATA", meta.encode(), False))
    members.append((f"{di}/WHEEL", wheel.encode(), False))
    if entry_points:
        members.append((f"{di}/entry_points.txt", entry_points.encode(), False))
    members.append((f"{di}/top_level.txt", f"{name}\n".encode(), False))
    lines = []
    for path, data, _ in members:
        h = record_hash(data)
        if bad_record == path:
            h = record_hash(data + b"tampered")
        lines.append(f"{path},{h},{len(data)}")
    lines.append(f"{di}/RECORD,,")
    record = ("\n".join(lines) + "\n").encode()
    members.append((f"{di}/RECORD", record, False))

    fn = os.path.join(outdir, f"{name}-{version}-{tag}.whl")
    tmp = fn + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data, exe in members:
            zi = zipfile.ZipInfo(path, DATE)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.create_system = 3
            zi.external_attr = (0o100755 if exe else 0o100644) << 16
            z.writestr(zi, data)
    os.replace(tmp, fn)
    return fn


def tinyapp(out):
    v = "1.0.0"
    init = b'''"""tinyapp - an envbuild test package."""
__version__ = "1.0.0"


def greeting():
    return "tinyapp ok"


def main():
    print(greeting())
    return 0


def gui():
    print("tinyapp gui")
    return 0
'''
    legacy = b'''#!python
import tinyapp
print("tinyapp-legacy " + tinyapp.__version__)
'''
    readme = b"tinyapp: data files land under <prefix>/share/tinyapp/\n"
    ep = "[console_scripts]\ntinyapp = tinyapp:main\n\n[gui_scripts]\ntinyapp-gui = tinyapp:gui\n"
    meta = ("Requires-Python: >=3.8\n"
            "Requires-Dist: tinydep>=1.0\n"
            'Requires-Dist: tinyextra==2.0; extra == "fancy"\n'
            "Provides-Extra: fancy\n")
    return write_wheel(out, "tinyapp", v, [
        ("tinyapp/__init__.py", init, False),
        (f"tinyapp-{v}.data/scripts/tinyapp-legacy", legacy, True),
        (f"tinyapp-{v}.data/data/share/tinyapp/README", readme, False),
    ], meta, entry_points=ep)


def simple(out, name, version, meta="", **kw):
    body = f'"""{name} {version} - an envbuild test package."""\n' \
           f'__version__ = "{version}"\n'.encode()
    return write_wheel(out, name, version, [(f"{name}/__init__.py", body, False)], meta, **kw)


def traversal(out):
    body = b'__version__ = "1.0.0"\n'
    return write_wheel(out, "traversal", "1.0.0", [
        ("traversal/__init__.py", body, False),
        ("../../etc/evil", b"owned\n", False),
    ])


CEXT_C = r'''/* _speedup.c - the smallest real C extension: answer() -> 42 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *answer(PyObject *self, PyObject *args)
{
	(void)self;
	(void)args;
	return PyLong_FromLong(42);
}

static PyMethodDef methods[] = {
	{ "answer", answer, METH_NOARGS, "The answer." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "_speedup", NULL, -1, methods };

PyMODINIT_FUNC PyInit__speedup(void)
{
	return PyModule_Create(&module);
}
'''

CEXT_SETUP = '''from setuptools import Extension, setup

setup(
    name="tinyspeedup",
    version="1.0.0",
    description="a real C extension for the envbuild tests",
    ext_modules=[Extension("_speedup", ["cext/_speedup.c"])],
)
'''


def system_python():
    """The interpreter that has setuptools and wheel (Debian's, not a pyenv one)."""
    cands = [os.environ.get("EB_CEXT_PYTHON"), "/usr/bin/python3", sys.executable, "python3"]
    for py in cands:
        if not py:
            continue
        r = subprocess.run([py, "-c", "import setuptools, wheel"], capture_output=True)
        if r.returncode == 0:
            return py
    sys.exit("make-wheels: no python3 with setuptools and wheel "
             "(Debian: apt-get install python3-setuptools python3-wheel python3-dev gcc)")


def cext(out):
    py = system_python()
    work = tempfile.mkdtemp(prefix="envbuild-cext.")
    try:
        os.makedirs(os.path.join(work, "src", "cext"))
        with open(os.path.join(work, "src", "cext", "_speedup.c"), "w") as f:
            f.write(CEXT_C)
        with open(os.path.join(work, "src", "setup.py"), "w") as f:
            f.write(CEXT_SETUP)
        env = dict(os.environ, SOURCE_DATE_EPOCH="315532800", CFLAGS="-g0", PIP_CONFIG_FILE=os.devnull,
                   PYTHONDONTWRITEBYTECODE="1")
        dist = os.path.join(work, "dist")
        r = subprocess.run([py, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "--no-index", "-q", "-w", dist, "."],
                           cwd=os.path.join(work, "src"), env=env, capture_output=True, text=True)
        if r.returncode != 0:  # no pip: setuptools directly
            r = subprocess.run([py, "setup.py", "-q", "bdist_wheel", "-d", dist],
                               cwd=os.path.join(work, "src"), env=env, capture_output=True,
                               text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stdout + r.stderr)
            sys.exit("make-wheels: building the C extension wheel failed")
        whl = [f for f in os.listdir(dist) if f.endswith(".whl")]
        if len(whl) != 1:
            sys.exit(f"make-wheels: expected one C extension wheel, got {whl}")
        dst = os.path.join(out, whl[0])
        shutil.copyfile(os.path.join(dist, whl[0]), dst)
        return dst
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    out = args[0]
    os.makedirs(out, exist_ok=True)
    made = [
        tinyapp(out),
        simple(out, "tinydep", "0.9.0"),
        simple(out, "tinydep", "1.2.0"),
        simple(out, "tinydep", "1.3.0"),
        simple(out, "tinyextra", "2.0.0"),
        simple(out, "futureonly", "1.0.0", "Requires-Python: >=3.99\n"),
        simple(out, "evil", "1.0.0", bad_record="evil/__init__.py"),
        simple(out, "patchdep", "1.0.0",
               "Requires-Dist: tinydep>=1.0; python_full_version >= '3.11.1'\n"),
        simple(out, "badmarker", "1.0.0", "Requires-Dist: tinydep; python_version ~= '3'\n"),
        traversal(out),
    ]
    if "--no-cext" not in argv:
        made.append(cext(out))
    for m in made:
        print(m)


if __name__ == "__main__":
    main(sys.argv)
