#!/usr/bin/env python3
"""make-sdists.py - the source distributions of the sdist tests.

Usage: make-sdists.py OUTDIR
Prints the path of every sdist it wrote, one a line.

Each is a real PEP 517 project (pyproject.toml with [build-system] on
setuptools.build_meta, [project] metadata, PKG-INFO at the top as
setuptools' sdist writes it), laid out deterministically: sorted entries,
mtime 0, uid/gid 0, modes 0644/0755, gzip without a name or time, so the
same script gives the same bytes anywhere.

  barsdist-1.0.0      package barsdist (ANSWER = 42), console script
                      `barsdist` (prints "barsdist ok"); sdist-only
  netsdist-1.0.0      setup.py connects to 127.0.0.1:PORT (PORT: the
                      environment's EB_CANARY_PORT when this script runs,
                      written into setup.py) and fails the build when it
                      cannot
  forever-1.0.0       setup.py sleeps for ever
  wrongname-1.0.0     the archive says wrongname-1.0.0, the project inside
                      builds othername-1.0.0
  escape-1.0.0        setup.py writes /tmp/escape-canary and $HOME/escape
  dotdot-1.0.0        a member "dotdot-1.0.0/../../evil"
  symlinked-1.0.0     a member that is a symlink to /etc/passwd
  hookextra-1.0.0     an in-tree backend (backend-path) wrapping setuptools'
                      whose get_requires_for_build_wheel adds
                      "tinydep==1.2.0" (not in [build-system] requires) and
                      whose build_wheel imports tinydep; console script
                      `hookextra` (prints "hookextra ok")
  hookfail-1.0.0      an in-tree backend whose get_requires_for_build_wheel
                      raises ("hookfail: this backend cannot say")
  legacysdist-1.0.0   no pyproject.toml: setup.py with setuptools' legacy
                      backend (pip's fallback), PKG-INFO 2.2
  poemsdist-1.0.0     poetry-core's backend (poetry.core.masonry.api,
                      [tool.poetry]), Requires-Dist tinydep>=1.0 (PKG-INFO
                      2.2, as poetry-core 2 writes it), console script
                      `poemsdist` (prints "poemsdist ok <tinydep's version>")

Python 3 standard library only.
"""
import gzip
import io
import os
import sys
import tarfile

PYPROJECT = """[build-system]
requires = ["setuptools>=40.8.0"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "{version}"
description = "{name} for the envbuild sdist tests"
requires-python = ">=3.7"
{extra}
"""

PKG_INFO = """Metadata-Version: 2.1
Name: {name}
Version: {version}
Summary: {name} for the envbuild sdist tests
Requires-Python: >=3.7
"""


def add(tar, path, data, mode=0o644):
    ti = tarfile.TarInfo(path)
    ti.size = len(data)
    ti.mtime = 0
    ti.mode = mode
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = "root"
    tar.addfile(ti, io.BytesIO(data))


def write_sdist(out, name, version, files, members=()):
    base = f"{name}-{version}"
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            data = files[path]
            add(tar, f"{base}/{path}", data.encode() if isinstance(data, str) else data)
        for ti, data in members:
            tar.addfile(ti, io.BytesIO(data) if data is not None else None)
    path = os.path.join(out, base + ".tar.gz")
    with open(path, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as gz:
            gz.write(raw.getvalue())
    print(path)


def project(name, version, setup_py=None, extra="", pkg=None, pkgname=None, pkg_info=None):
    pkgname = pkgname or name
    files = {
        "pyproject.toml": PYPROJECT.format(name=pkgname, version=version, extra=extra),
        "PKG-INFO": pkg_info or PKG_INFO.format(name=pkgname, version=version),
        f"src/{pkgname}/__init__.py": pkg or "ANSWER = 42\n",
        "setup.cfg": "[options]\npackage_dir =\n    = src\npackages = find:\n\n"
                     "[options.packages.find]\nwhere = src\n",
    }
    if setup_py:
        files["setup.py"] = setup_py
    return files


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    out = argv[1]
    os.makedirs(out, exist_ok=True)

    write_sdist(out, "barsdist", "1.0.0", project(
        "barsdist", "1.0.0",
        extra='[project.scripts]\nbarsdist = "barsdist:main"\n',
        pkg='ANSWER = 42\n\n\ndef main():\n    print("barsdist ok")\n'))

    # what `envbuild pin` reads without a build: Requires-Dist of a
    # metadata 2.2 PKG-INFO; and a project whose dependencies are dynamic
    write_sdist(out, "depsdist", "1.0.0", project(
        "depsdist", "1.0.0", extra='dependencies = ["nosuchproject"]\n',
        pkg_info="Metadata-Version: 2.2\nName: depsdist\nVersion: 1.0.0\n"
                 "Requires-Python: >=3.7\nRequires-Dist: tinydep>=1.0\n"))
    write_sdist(out, "dynsdist", "1.0.0", project(
        "dynsdist", "1.0.0", extra='dynamic = ["dependencies"]\n'))

    write_sdist(out, "netsdist", "1.0.0", project("netsdist", "1.0.0", setup_py=(
        "import os, socket, sys\n"
        "from setuptools import setup\n"
        + "port = %d\n" % int(os.environ.get("EB_CANARY_PORT", "9")) +
        "try:\n"
        "    socket.create_connection(('127.0.0.1', port), timeout=3).sendall(b'reached')\n"
        "except OSError as e:\n"
        "    print('netsdist: no network:', e, file=sys.stderr)\n"
        "    sys.exit(3)\n"
        "print('netsdist: reached the canary', file=sys.stderr)\n"
        "setup()\n")))

    write_sdist(out, "forever", "1.0.0", project("forever", "1.0.0", setup_py=(
        "import time\nwhile True:\n    time.sleep(1)\n")))

    write_sdist(out, "wrongname", "1.0.0", project("wrongname", "1.0.0",
                                                   pkgname="othername"))

    write_sdist(out, "escape", "1.0.0", project("escape", "1.0.0", setup_py=(
        "import os\n"
        "from setuptools import setup\n"
        "for p in ('/tmp/escape-canary', os.path.expanduser('~/escape-canary')):\n"
        "    try:\n"
        "        open(p, 'w').write('escaped')\n"
        "    except OSError:\n"
        "        pass\n"
        "setup()\n")))

    ti = tarfile.TarInfo("dotdot-1.0.0/../../evil")
    ti.size, ti.mtime, ti.mode = 5, 0, 0o644
    write_sdist(out, "dotdot", "1.0.0", project("dotdot", "1.0.0"),
                members=[(ti, b"evil\n")])

    ti = tarfile.TarInfo("symlinked-1.0.0/src/symlinked/passwd")
    ti.type, ti.linkname, ti.mtime, ti.mode = tarfile.SYMTYPE, "/etc/passwd", 0, 0o777
    write_sdist(out, "symlinked", "1.0.0", project("symlinked", "1.0.0"),
                members=[(ti, None)])

    more(out)


HOOK_PYPROJECT = """[build-system]
requires = ["setuptools>=40.8.0"]
build-backend = "{backend}"
backend-path = ["_backend"]

[project]
name = "{name}"
version = "1.0.0"
description = "{name} for the envbuild sdist tests"
requires-python = ">=3.7"
{extra}
"""

EXTRA_BACKEND = """\"\"\"extra_backend - setuptools' backend, asking for one more build requirement.\"\"\"
from setuptools import build_meta as _st
from setuptools.build_meta import *  # noqa: F401,F403 (the other hooks)


def get_requires_for_build_wheel(config_settings=None):
    return _st.get_requires_for_build_wheel(config_settings) + ["tinydep==1.2.0"]


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    import tinydep  # noqa: F401 (the build environment has what the hook asked for)
    return _st.build_wheel(wheel_directory, config_settings, metadata_directory)
"""

FAIL_BACKEND = """\"\"\"fail_backend - a backend whose hook fails.\"\"\"
from setuptools.build_meta import *  # noqa: F401,F403


def get_requires_for_build_wheel(config_settings=None):
    raise RuntimeError("hookfail: this backend cannot say")
"""

POETRY_PYPROJECT = """[build-system]
requires = ["poetry-core>=1.0.0"]
build-backend = "poetry.core.masonry.api"

[tool.poetry]
name = "poemsdist"
version = "1.0.0"
description = "poemsdist for the envbuild sdist tests"
authors = ["envbuild <dev@envbuild.invalid>"]
packages = [{ include = "poemsdist", from = "src" }]

[tool.poetry.dependencies]
python = ">=3.7"
tinydep = ">=1.0"

[tool.poetry.scripts]
poemsdist = "poemsdist:main"
"""

POETRY_PKG = """import importlib.metadata

ANSWER = 42


def main():
    print("poemsdist ok", importlib.metadata.version("tinydep"))
"""


def hook_project(name, backend, module, extra=""):
    files = project(name, "1.0.0", extra=extra,
                    pkg=f'ANSWER = 42\n\n\ndef main():\n    print("{name} ok")\n')
    files["pyproject.toml"] = HOOK_PYPROJECT.format(name=name, backend=backend, extra=extra)
    files[f"_backend/{backend}.py"] = module
    return files


def more(out):
    write_sdist(out, "hookextra", "1.0.0", hook_project(
        "hookextra", "extra_backend", EXTRA_BACKEND,
        extra='[project.scripts]\nhookextra = "hookextra:main"\n'))
    write_sdist(out, "hookfail", "1.0.0", hook_project("hookfail", "fail_backend", FAIL_BACKEND))
    write_sdist(out, "legacysdist", "1.0.0", {
        "setup.py": "from setuptools import setup\n"
                    "setup(name='legacysdist', version='1.0.0', packages=['legacysdist'],\n"
                    "      package_dir={'': 'src'})\n",
        "PKG-INFO": "Metadata-Version: 2.2\nName: legacysdist\nVersion: 1.0.0\n"
                    "Summary: legacysdist for the envbuild sdist tests\n",
        "src/legacysdist/__init__.py": "ANSWER = 42\n",
    })
    write_sdist(out, "poemsdist", "1.0.0", {
        "pyproject.toml": POETRY_PYPROJECT,
        "PKG-INFO": "Metadata-Version: 2.2\nName: poemsdist\nVersion: 1.0.0\n"
                    "Summary: poemsdist for the envbuild sdist tests\n"
                    "Requires-Python: >=3.7\nRequires-Dist: tinydep>=1.0\n",
        "src/poemsdist/__init__.py": POETRY_PKG,
    })


if __name__ == "__main__":
    main(sys.argv)
