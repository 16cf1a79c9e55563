#!/usr/bin/env python3
"""serve.py - a static package index for the index unit tests.

Serves --root on 127.0.0.1 on a free port (printed as the first line of
stdout) and exits when its stdin closes, so a crashed test leaves no server
behind.  Python 3 standard library only.

A request for a directory ("/simple/alpha/") answers with index.json as
application/vnd.pypi.simple.v1+json when the Accept header asks for that
type and the file exists (unless --no-json), else with index.html as
text/html, else 404.  A directory without its trailing slash is redirected,
as http.server does; the client must never need that.

Options: --auth USER:PASSWORD requires Basic auth on every path;
--status PATH=CODE answers CODE for PATH (repeatable); --type PATH=TYPE
overrides the content type of PATH (repeatable); --cut PATH=N,TIMES sends
only the first N bytes of PATH's body (with the full Content-Length) and
drops the connection, for the first TIMES requests of it.  GET /_log returns the
requests seen so far as JSON: [{"path", "accept", "authorization"}].
"""
import argparse
import base64
import json
import os
import posixpath
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
LOG = []
JSON_TYPE = "application/vnd.pypi.simple.v1+json"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-index/1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def reply(self, status, body=b"", ctype="text/plain", headers=(), cut=None):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command == "HEAD":
            return
        if cut is not None:
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)

    def cut_for(self, path):
        if path not in self.server.cuts:
            return None
        n, times = self.server.cuts[path]
        with LOCK:
            seen = self.server.cut_seen.get(path, 0)
            self.server.cut_seen[path] = seen + 1
        return n if seen < times else None

    def do_GET(self):
        opts = self.server.opts
        path = urllib.parse.urlsplit(self.path).path
        if path == "/_log":
            with LOCK:
                self.reply(200, json.dumps(LOG), "application/json")
            return
        with LOCK:
            LOG.append({
                "path": path,
                "accept": self.headers.get("Accept"),
                "authorization": self.headers.get("Authorization"),
            })
        if opts.auth:
            want = "Basic " + base64.b64encode(opts.auth.encode()).decode()
            if self.headers.get("Authorization") != want:
                self.reply(401, "unauthorized", headers=[
                    ("WWW-Authenticate", 'Basic realm="index"')])
                return
        if path in self.server.status:
            self.reply(self.server.status[path], "scripted answer")
            return

        rel = posixpath.normpath(urllib.parse.unquote(path)).lstrip("/")
        if rel.startswith(".."):
            self.reply(404, "not found")
            return
        full = os.path.join(opts.root, rel)
        if os.path.isdir(full):
            if not path.endswith("/"):
                self.reply(301, "", headers=[("Location", path + "/")])
                return
            accept = self.headers.get("Accept") or ""
            js = os.path.join(full, "index.json")
            html = os.path.join(full, "index.html")
            if not opts.no_json and JSON_TYPE in accept and os.path.isfile(js):
                full, ctype = js, JSON_TYPE
            elif os.path.isfile(html):
                full, ctype = html, "text/html; charset=utf-8"
            else:
                self.reply(404, "not found")
                return
        elif os.path.isfile(full):
            ctype = "application/octet-stream"
        else:
            self.reply(404, "not found")
            return
        ctype = self.server.types.get(path, ctype)
        with open(full, "rb") as f:
            self.reply(200, f.read(), ctype, cut=self.cut_for(path))

    do_HEAD = do_GET


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def pairs(values, conv):
    out = {}
    for v in values or []:
        k, _, val = v.rpartition("=")
        out[k] = conv(val)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--auth")
    ap.add_argument("--no-json", action="store_true")
    ap.add_argument("--status", action="append")
    ap.add_argument("--type", action="append")
    ap.add_argument("--cut", action="append")
    opts = ap.parse_args()

    srv = Server(("127.0.0.1", 0), Handler)
    srv.opts = opts
    srv.status = pairs(opts.status, int)
    srv.types = pairs(opts.type, str)
    srv.cuts = pairs(opts.cut, lambda v: tuple(int(x) for x in v.split(",")))
    srv.cut_seen = {}

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    # A test that hangs must not leave a server forever.
    threading.Timer(300, lambda: os._exit(0)).start()
    sys.stdout.write("%d\n" % srv.server_port)
    sys.stdout.flush()
    srv.serve_forever()


if __name__ == "__main__":
    main()
