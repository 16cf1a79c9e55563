#!/usr/bin/env python3
"""registry.py - a scripted registry for the HTTP and auth unit tests.

Listens on 127.0.0.1 on a free port (printed as the first line of stdout),
optionally over TLS, and exits when its stdin closes (so a crashed test
leaves no server behind).  Python 3 standard library only.

Auth modes for /v2/ paths: none, basic (user/password), bearer (a token
realm at /token on this server).  Scenario paths under /v2/r/ script the
failures the client must survive; /_stats reports what the server saw.
"""
import argparse
import base64
import datetime
import hashlib
import json
import os
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATS = {}


def reset_stats():
    STATS.clear()
    STATS.update({"requests": {}, "auth_seen": {}, "tokens": [], "unauthorized": 0})


reset_stats()
TOKENS = {}  # token -> (issued monotonic time, scopes)
COUNTERS = {}  # path -> count, for scripted failures


def bump(path):
    with LOCK:
        COUNTERS[path] = COUNTERS.get(path, 0) + 1
        return COUNTERS[path]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-registry/1"

    def setup(self):
        ctx = self.server.ssl_ctx
        if ctx is not None:
            # a bound for a client that never completes the handshake (each
            # connection has its own thread); generous, since OpenSSL under
            # valgrind on a loaded machine takes seconds to answer
            self.request.settimeout(120)
            self.request = ctx.wrap_socket(self.request, server_side=True)
            self.request.settimeout(None)
        super().setup()

    def log_message(self, fmt, *args):  # quiet
        pass

    # ---- helpers -------------------------------------------------------
    def body_in(self):
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            data = b""
            while True:
                line = self.rfile.readline()
                size = int(line.strip().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length", "0") or 0)
        return self.rfile.read(n) if n else b""

    def reply(self, status, body=b"", headers=None, ctype="text/plain"):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in headers or []:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def reply_json(self, status, obj, headers=None):
        self.reply(status, json.dumps(obj), headers, "application/json")

    def origin(self):
        scheme = "https" if self.server.ssl_ctx else "http"
        return "%s://%s:%d" % (scheme, self.server.opts.realm_host, self.server.server_port)

    def record(self, path):
        with LOCK:
            STATS["requests"][path] = STATS["requests"].get(path, 0) + 1
            STATS["auth_seen"].setdefault(path, []).append(
                "Authorization" in self.headers)

    def unauthorized(self, challenge):
        with LOCK:
            STATS["unauthorized"] += 1
        self.reply_json(401, {"errors": [{"code": "UNAUTHORIZED",
                                          "message": "authentication required"}]},
                        [("WWW-Authenticate", challenge)])

    def basic_ok(self):
        o = self.server.opts
        want = "Basic " + base64.b64encode(("%s:%s" % (o.user, o.password)).encode()).decode()
        return self.headers.get("Authorization") == want

    def bearer_challenge(self, error=None, scope="repository:r:pull"):
        c = 'Bearer realm="%s/token",service="test-registry",scope="%s"' % (self.origin(), scope)
        if error:
            c += ',error="%s"' % error
        return c

    def check_auth(self, path):
        """True when the request may go on; otherwise the 401 is sent."""
        o = self.server.opts
        if o.mode == "basic":
            if not self.basic_ok():
                self.unauthorized('Basic realm="test"')
                return False
        elif o.mode == "bearer":
            a = self.headers.get("Authorization", "")
            tok = a[7:] if a.startswith("Bearer ") else None
            with LOCK:
                info = TOKENS.get(tok)
            if info is None:
                self.unauthorized(self.bearer_challenge())
                return False
            if time.monotonic() - info[0] > o.token_ttl:
                self.unauthorized(self.bearer_challenge("invalid_token"))
                return False
            if "/insufficient" in path and "repository:extra:pull" not in info[1]:
                self.unauthorized(self.bearer_challenge(
                    "insufficient_scope", "repository:r:pull repository:extra:pull"))
                return False
        return True

    # ---- token realm ---------------------------------------------------
    def token(self):
        o = self.server.opts
        entry = {"method": self.command}
        if self.command == "POST":
            form = urllib.parse.parse_qs(self.body_in().decode())
            for k in ("grant_type", "refresh_token", "service", "client_id", "scope"):
                if k in form:
                    entry[k] = form[k][0]
            with LOCK:
                STATS["tokens"].append(entry)
            if o.oauth404:
                return self.reply(404, "no oauth here")
            if form.get("refresh_token", [""])[0] != o.refresh_token:
                return self.reply_json(401, {"error": "invalid_grant"})
            scopes = entry.get("scope", "").split(" ")
            key = "access_token"
        else:
            q = urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query)
            scopes = [v for k, v in q if k == "scope"]
            entry["scopes"] = scopes
            entry["service"] = next((v for k, v in q if k == "service"), None)
            entry["account"] = next((v for k, v in q if k == "account"), None)
            a = self.headers.get("Authorization")
            entry["basic"] = a is not None
            with LOCK:
                STATS["tokens"].append(entry)
            if a is not None and not self.basic_ok():
                return self.reply_json(401, {"details": "bad credentials"})
            if a is None and o.require_token_auth:
                return self.reply_json(401, {"details": "credentials required"})
            key = o.token_key
        with LOCK:
            tok = "tok-%d" % (len(TOKENS) + 1)
            TOKENS[tok] = (time.monotonic(), scopes)
        body = {key: tok, "expires_in": o.expires_in}
        if o.issued_at_past:
            past = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
            body["issued_at"] = past.strftime("%Y-%m-%dT%H:%M:%S.123456Z")
        self.reply_json(200, body)

    # ---- dispatch ------------------------------------------------------
    def handle_any(self):
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, dict(urllib.parse.parse_qsl(url.query))
        if path == "/_stats":
            with LOCK:
                return self.reply_json(200, STATS)
        if path == "/_reset":
            with LOCK:
                reset_stats()
                COUNTERS.clear()
            return self.reply(200, "reset")
        self.record(path)
        if path == "/token":
            return self.token()
        if path.startswith("/storage/"):
            auth = "yes" if "Authorization" in self.headers else "no"
            return self.reply(200, "storage auth=%s" % auth)
        if not path.startswith("/v2/"):
            return self.reply(404, "not found")
        body = self.body_in() if self.command in ("PUT", "POST", "PATCH") else b""
        if not self.check_auth(path):
            return
        n = bump(path)
        if "/retry429/" in path and n == 1:
            return self.reply(429, "slow down", [("Retry-After", query.get("ra", "0"))])
        if "/retry503/" in path and n <= 2:
            return self.reply(503, "unavailable")
        if "/always503/" in path:
            return self.reply(503, "unavailable")
        if "/upload503once" in path and n == 1:
            return self.reply(503, "unavailable")
        if "/cut/" in path:
            size = 100000
            data = bytes(i % 251 for i in range(size))
            if n <= int(query.get("times", "1")):
                self.send_response(200)
                self.send_header("Content-Length", str(size))
                self.end_headers()
                self.wfile.write(data[:1000])
                self.wfile.flush()
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            return self.reply(200, data, ctype="application/octet-stream")
        if "/redirect/" in path:
            if query.get("to") == "same":
                loc = "/storage/x"
            else:
                scheme = "https" if self.server.ssl_ctx else "http"
                loc = "%s://localhost:%d/storage/x" % (scheme, self.server.server_port)
            return self.reply(int(query.get("code", "307")), "", [("Location", loc)])
        if "/loop" in path:
            return self.reply(302, "", [("Location", path)])
        if "/big" in path:
            return self.reply(200, b"x" * 2000000, ctype="application/octet-stream")
        if "/trickle" in path:
            # 2000 bytes/s of a 100000-byte body: above any low-speed
            # limit, far below a sane throughput
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                for _ in range(500):
                    self.wfile.write(b"x" * 200)
                    self.wfile.flush()
                    time.sleep(0.1)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if "/slow" in path:
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"x")
            self.wfile.flush()
            time.sleep(8)
            return
        if "/missing" in path:
            return self.reply_json(404, {"errors": [{"code": "MANIFEST_UNKNOWN",
                                                     "message": "manifest unknown"}]})
        info = {
            "method": self.command,
            "path": path,
            "query": url.query,
            "body_len": len(body),
            "body_sha256": hashlib.sha256(body).hexdigest(),
            "content_length": self.headers.get("Content-Length"),
            "transfer_encoding": self.headers.get("Transfer-Encoding"),
            "content_type": self.headers.get("Content-Type"),
            "user_agent": self.headers.get("User-Agent"),
            "attempt": n,
        }
        self.reply_json(201 if self.command in ("PUT", "POST") else 200, info, [
            ("Docker-Content-Digest", "sha256:" + info["body_sha256"]),
            ("Location", "/v2/r/blobs/uploads/abc?_state=xyz"),
            ("Range", "0-%d" % max(len(body) - 1, 0)),
            ("OCI-Chunk-Min-Length", "1024"),
            ("X-Multi", "one"),
            ("X-Multi", "two"),
        ])

    do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):  # TLS failures etc.: quiet
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["none", "basic", "bearer"], default="none")
    ap.add_argument("--user", default="alice")
    ap.add_argument("--password", default="s3cret-pw")
    ap.add_argument("--refresh-token", default="refresh-xyz")
    ap.add_argument("--token-key", default="token")
    ap.add_argument("--token-ttl", type=float, default=300)
    ap.add_argument("--expires-in", type=int, default=300)
    ap.add_argument("--issued-at-past", action="store_true")
    ap.add_argument("--oauth404", action="store_true")
    ap.add_argument("--require-token-auth", action="store_true")
    ap.add_argument("--realm-host", default="127.0.0.1")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    opts = ap.parse_args()

    srv = Server(("127.0.0.1", 0), Handler)
    srv.opts = opts
    srv.ssl_ctx = None
    if opts.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(opts.tls[0], opts.tls[1])
        srv.ssl_ctx = ctx

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
