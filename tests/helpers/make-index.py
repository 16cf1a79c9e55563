#!/usr/bin/env python3
"""make-index.py - a package index for the Python install tests.

  make-index.py build ROOT WHEELDIR... [--no-system-wheels] [--system-wheels DIR]
      Lay out a simple repository at ROOT for the wheels of every WHEELDIR
      and, unless --no-system-wheels, of DIR (default /usr/share/python-wheels:
      Debian's pip, setuptools and wheel; packages python3-pip-whl,
      python3-setuptools-whl, python3-wheel-whl):
        ROOT/index.json, ROOT/index.html                project list
        ROOT/<project>/index.json                       PEP 691 (api 1.1)
        ROOT/<project>/index.html                       PEP 503 (+ PEP 592/658/714 attributes)
        ROOT/<project>/<wheel>                          the file
        ROOT/<project>/<wheel>.metadata                 PEP 658 core metadata
        ROOT/<project>/<name>-<version>.tar.gz          an sdist of a WHEELDIR
                                                        (no metadata file: the
                                                        index has none for sdists)
      File URLs are relative to the project page, so the same tree works as
      file://ROOT and served over HTTP.  Every file carries its sha256 and
      size, requires-python from its METADATA and the metadata file's sha256.
      Deterministic: no upload times, sorted listings.

  make-index.py serve ROOT [--max-seconds N] [--log FILE] [--no-json]
      Serve ROOT on 127.0.0.1 at /simple/ (and at /) on a free port; print
      the port on the first line of stdout; exit after N seconds (default
      300).  A project directory ("/simple/tinyapp/") answers by content
      negotiation: index.json as application/vnd.pypi.simple.v1+json when the
      Accept header prefers it (and not --no-json), else index.html as
      text/html.  "/simple/tinyapp" (no slash) is redirected.  index.json
      asked for by name is application/vnd.pypi.simple.v1+json too.  With
      --log, one JSON line per request: {"method", "path", "accept", "status"}.

Python 3 standard library only.
"""
import argparse
import hashlib
import html
import json
import os
import posixpath
import re
import shutil
import sys
import threading
import urllib.parse
import zipfile
from email.parser import HeaderParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_TYPE = "text/html"
API = "1.1"


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def wheel_metadata(path):
    """(METADATA bytes) of a wheel: the .dist-info/METADATA at the top."""
    with zipfile.ZipFile(path) as z:
        names = [n for n in z.namelist()
                 if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
        if len(names) != 1:
            raise SystemExit(f"make-index: {path}: {len(names)} METADATA files")
        return z.read(names[0])


def build(root, wheeldirs):
    wheels = {}
    for d in wheeldirs:
        for fn in sorted(os.listdir(d)):
            if fn.endswith(".whl") or fn.endswith(".tar.gz"):
                wheels.setdefault(fn, os.path.join(d, fn))  # later dirs do not override
    projects = {}
    for fn in sorted(wheels):
        stem = fn[:-len(".tar.gz")].rsplit("-", 1)[0] if fn.endswith(".tar.gz") else fn.split("-")[0]
        projects.setdefault(normalize(stem), []).append(fn)

    os.makedirs(root, exist_ok=True)
    for proj in sorted(projects):
        pdir = os.path.join(root, proj)
        if os.path.isdir(pdir):
            shutil.rmtree(pdir)
        os.makedirs(pdir)
        files, versions = [], set()
        for fn in projects[proj]:
            dst = os.path.join(pdir, fn)
            shutil.copyfile(wheels[fn], dst)
            if fn.endswith(".tar.gz"):
                versions.add(fn[:-len(".tar.gz")].rsplit("-", 1)[1])
                files.append({
                    "filename": fn,
                    "url": urllib.parse.quote(fn),
                    "hashes": {"sha256": sha256_file(dst)},
                    "requires-python": None,
                    "size": os.path.getsize(dst),
                    "yanked": False,
                })
                continue
            meta = wheel_metadata(dst)
            with open(dst + ".metadata", "wb") as f:
                f.write(meta)
            hdr = HeaderParser().parsestr(meta.decode("utf-8"))
            versions.add(hdr["Version"])
            files.append({
                "filename": fn,
                "url": urllib.parse.quote(fn),
                "hashes": {"sha256": sha256_file(dst)},
                "requires-python": hdr.get("Requires-Python"),
                "core-metadata": {"sha256": hashlib.sha256(meta).hexdigest()},
                "dist-info-metadata": {"sha256": hashlib.sha256(meta).hexdigest()},
                "size": os.path.getsize(dst),
                "yanked": False,
            })
        for f in files:
            if f["requires-python"] is None:
                del f["requires-python"]
        page = {"meta": {"api-version": API}, "name": proj,
                "versions": sorted(versions), "files": files}
        with open(os.path.join(pdir, "index.json"), "w") as f:
            json.dump(page, f, indent=1, sort_keys=True)
            f.write("\n")
        lines = ["<!DOCTYPE html>", "<html>", "<head>",
                 f'<meta name="pypi:repository-version" content="{API}">',
                 f"<title>Links for {html.escape(proj)}</title>", "</head>", "<body>",
                 f"<h1>Links for {html.escape(proj)}</h1>"]
        for fl in files:
            attrs = [f'href="{html.escape(fl["url"])}#sha256={fl["hashes"]["sha256"]}"']
            if "requires-python" in fl:
                attrs.append(f'data-requires-python="{html.escape(fl["requires-python"])}"')
            if "core-metadata" in fl:
                md = "sha256=" + fl["core-metadata"]["sha256"]
                attrs.append(f'data-core-metadata="{md}"')
                attrs.append(f'data-dist-info-metadata="{md}"')
            lines.append(f'<a {" ".join(attrs)}>{html.escape(fl["filename"])}</a><br/>')
        lines += ["</body>", "</html>", ""]
        with open(os.path.join(pdir, "index.html"), "w") as f:
            f.write("\n".join(lines))

    names = sorted(p for p in os.listdir(root) if os.path.isfile(os.path.join(root, p, "index.json")))
    with open(os.path.join(root, "index.json"), "w") as f:
        json.dump({"meta": {"api-version": API}, "projects": [{"name": n} for n in names]},
                  f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(root, "index.html"), "w") as f:
        f.write("<!DOCTYPE html>\n<html>\n<head>\n"
                f'<meta name="pypi:repository-version" content="{API}">\n'
                "<title>Simple index</title>\n</head>\n<body>\n")
        for n in names:
            f.write(f'<a href="{html.escape(n)}/">{html.escape(n)}</a><br/>\n')
        f.write("</body>\n</html>\n")
    for proj in sorted(projects):
        print(proj)


def accept_prefers_json(accept):
    """Whether an Accept header prefers PEP 691 JSON over HTML."""
    if not accept:
        return False
    q = {}
    for part in accept.split(","):
        bits = [b.strip() for b in part.split(";")]
        mt, weight = bits[0].lower(), 1.0
        for b in bits[1:]:
            if b.lower().startswith("q="):
                try:
                    weight = float(b[2:])
                except ValueError:
                    weight = 0.0
        q[mt] = max(q.get(mt, 0.0), weight)
    j = max(q.get(JSON_TYPE, 0.0), q.get("application/vnd.pypi.simple.latest+json", 0.0))
    h = max(q.get("application/vnd.pypi.simple.v1+html", 0.0), q.get(HTML_TYPE, 0.0),
            q.get("application/vnd.pypi.simple.latest+html", 0.0), q.get("*/*", 0.0))
    return j > 0 and j >= h


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "envbuild-test-index/1"

    def log_message(self, fmt, *args):
        pass

    def log_request_line(self, status):
        log = self.server.opts.log
        if not log:
            return
        rec = {"method": self.command, "path": self.path,
               "accept": self.headers.get("Accept"), "status": status}
        with self.server.lock, open(log, "a") as f:
            f.write(json.dumps(rec) + "\n")

    def reply(self, status, body=b"", ctype="text/plain", headers=()):
        if isinstance(body, str):
            body = body.encode()
        self.log_request_line(status)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        root = self.server.opts.root
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        rel = path
        if rel == "/simple" or rel.startswith("/simple/"):
            rel = rel[len("/simple"):]
        norm = posixpath.normpath("/" + rel.lstrip("/"))
        if ".." in norm.split("/"):
            self.reply(404, "not found\n")
            return
        full = os.path.join(root, norm.lstrip("/"))
        if os.path.isdir(full):
            if not path.endswith("/"):
                self.reply(301, "", headers=[("Location", path + "/")])
                return
            js, ht = os.path.join(full, "index.json"), os.path.join(full, "index.html")
            want_json = not self.server.opts.no_json and accept_prefers_json(
                self.headers.get("Accept"))
            if want_json and os.path.isfile(js):
                self.send_file(js, JSON_TYPE)
            elif os.path.isfile(ht):
                self.send_file(ht, HTML_TYPE + "; charset=utf-8")
            else:
                self.reply(404, "not found\n")
            return
        if not os.path.isfile(full):
            self.reply(404, "not found\n")
            return
        if full.endswith("/index.json") or full == os.path.join(root, "index.json"):
            ctype = JSON_TYPE
        elif full.endswith(".html"):
            ctype = HTML_TYPE + "; charset=utf-8"
        else:
            ctype = "application/octet-stream"
        self.send_file(full, ctype)

    def send_file(self, full, ctype):
        with open(full, "rb") as f:
            body = f.read()
        self.reply(200, body, ctype)


def serve(opts):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.opts = opts
    srv.lock = threading.Lock()
    print(srv.server_address[1], flush=True)
    t = threading.Timer(opts.max_seconds, lambda: os._exit(0))
    t.daemon = True
    t.start()
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("root")
    b.add_argument("wheeldirs", nargs="+")
    b.add_argument("--system-wheels", default="/usr/share/python-wheels")
    b.add_argument("--no-system-wheels", action="store_true")
    s = sub.add_parser("serve")
    s.add_argument("root")
    s.add_argument("--max-seconds", type=float, default=300)
    s.add_argument("--log")
    s.add_argument("--no-json", action="store_true")
    opts = ap.parse_args()
    if opts.cmd == "build":
        dirs = list(opts.wheeldirs)
        if not opts.no_system_wheels:
            if not os.path.isdir(opts.system_wheels):
                sys.exit(f"make-index: no {opts.system_wheels} (Debian: apt-get install "
                         "python3-pip-whl python3-setuptools-whl python3-wheel-whl)")
            dirs.append(opts.system_wheels)
        build(opts.root, dirs)
    else:
        opts.root = os.path.abspath(opts.root)
        serve(opts)


if __name__ == "__main__":
    main()
