#!/usr/bin/env python3
"""fault-proxy.py - an HTTP reverse proxy that injects faults, for tests.

Sits between a client and a registry on loopback (Python standard library,
one thread per connection) and forwards every request faithfully, except
those that match a fault rule:

  status=CODE            answer CODE instead of forwarding (the request body
                         is read and dropped first; with `Expect:
                         100-continue` the answer comes before the body and
                         the connection is closed).  429 carries
                         `Retry-After: 1` unless retry_after= says otherwise;
                         the body is a registry-style JSON error.
  retry_after=N|none     the Retry-After header of a status fault
  cut_request_after=K    forward K bytes of the request body, then drop both
                         connections (the client sees a reset/EOF mid-upload)
  cut_response_after=K   forward the response headers and K bytes of the
                         response body, then drop the connection
  delay=D                wait D seconds (a float) before answering; combines
                         with the others (a slow registry)

Which requests: `method` (GET, PATCH, `*`, or a comma list), `path` (a
Python regex searched in the request target, query included), `skip=M`
(leave the first M matches alone) and `times=N` (then fault N of them;
without times, every match after the skipped ones).  The first rule whose
method and path match a request counts it; later rules are not consulted.

Rules come from `--rule 'METHOD REGEX key=value ...'` (repeatable) and/or
`--rules FILE`, a JSON list (or {"rules": [...]}) of objects with the same
keys, e.g. [{"method": "PUT", "path": "/blobs/uploads/", "status": 503,
"times": 1}].  The file is re-read whenever it changes (its counters start
again), so a test can change the faults while the proxy runs.

Forwarding: all headers but the hop-by-hop ones pass unchanged (Range,
Docker-Upload-UUID, Docker-Content-Digest, WWW-Authenticate, ...); Host is
set to the upstream's (unless --preserve-host) and absolute `Location`
headers that point at the upstream are rewritten to the proxy, so the client
keeps talking to the proxy; chunked request bodies (streamed PATCH) are
forwarded chunked, Content-Length bodies with their length; HEAD, 1xx, 204
and 304 answers carry no body; `Expect: 100-continue` is honoured.

Every request is logged to --log as one line:
  SEQ METHOD TARGET STATUS in=BYTES out=BYTES fault=RULE|- ms=MILLISECONDS
where in/out count request/response body bytes between client and proxy,
STATUS is 000 when no answer was sent, and RULE is the rule's name (default
rN, N its 1-based position) with the fault kind, e.g. r1:status.

It prints its port on stdout when ready (and writes it to --port-file), and
exits after --max-seconds (default 600) or on SIGTERM/SIGINT.
"""

import argparse
import http.client
import json
import os
import re
import shlex
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer",
              "upgrade", "transfer-encoding", "proxy-authenticate",
              "proxy-authorization"}
ARGS = None
UPSTREAM = None  # urllib SplitResult
LOG_LOCK = threading.Lock()
SEQ_LOCK = threading.Lock()
SEQ = [0]
PIECE = 64 * 1024

ERROR_CODES = {400: "BAD_REQUEST", 401: "UNAUTHORIZED", 403: "DENIED",
               404: "NOT_FOUND", 408: "TIMEOUT", 416: "RANGE_INVALID",
               429: "TOOMANYREQUESTS", 500: "INTERNAL_ERROR",
               502: "BAD_GATEWAY", 503: "UNAVAILABLE", 504: "GATEWAY_TIMEOUT"}


class Rule:
    KEYS = {"method", "path", "status", "times", "skip", "retry_after",
            "cut_request_after", "cut_response_after", "delay", "name"}

    def __init__(self, spec, index):
        unknown = set(spec) - self.KEYS
        if unknown:
            raise ValueError("unknown rule keys: %s" % ", ".join(sorted(unknown)))
        m = str(spec.get("method", "*")).upper()
        self.methods = None if m == "*" else set(m.split(","))
        self.path = re.compile(spec.get("path", ""))
        self.status = _int(spec.get("status"))
        self.times = _int(spec.get("times"))
        self.skip = _int(spec.get("skip")) or 0
        ra = spec.get("retry_after")
        self.retry_after = None if ra is None else str(ra)
        self.cut_request_after = _int(spec.get("cut_request_after"))
        self.cut_response_after = _int(spec.get("cut_response_after"))
        self.delay = float(spec.get("delay") or 0)
        self.name = str(spec.get("name") or "r%d" % index)
        if (self.status is None and self.cut_request_after is None and
                self.cut_response_after is None and not self.delay):
            raise ValueError("rule %s has no fault (status, cut_*, delay)" % self.name)
        self.matched = 0
        self.lock = threading.Lock()

    def matches(self, method, target):
        if self.methods is not None and method not in self.methods:
            return False
        return self.path.search(target) is not None

    def take(self):
        """Count one match; True if this one is to be faulted."""
        with self.lock:
            self.matched += 1
            n = self.matched - self.skip
        if n <= 0:
            return False
        return self.times is None or n <= self.times

    def kind(self):
        k = []
        if self.delay:
            k.append("delay")
        if self.status is not None:
            k.append("status")
        if self.cut_request_after is not None:
            k.append("cut-request")
        if self.cut_response_after is not None:
            k.append("cut-response")
        return "%s:%s" % (self.name, "+".join(k))


def _int(v):
    if v is None or v == "":
        return None
    return int(v)


def parse_cli_rule(text):
    words = shlex.split(text)
    if len(words) < 2:
        raise ValueError("--rule needs 'METHOD REGEX key=value ...': %r" % text)
    spec = {"method": words[0], "path": words[1]}
    for w in words[2:]:
        k, eq, v = w.partition("=")
        if not eq:
            raise ValueError("not key=value: %r" % w)
        spec[k] = v
    return spec


class Rules:
    def __init__(self, cli_specs, path):
        self.cli = [Rule(s, i + 1) for i, s in enumerate(cli_specs)]
        self.path = path
        self.file_rules = []
        self.mtime = None
        self.lock = threading.Lock()
        self.reload()

    def reload(self):
        if not self.path:
            return
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            with self.lock:
                self.file_rules, self.mtime = [], None
            return
        key = (st.st_mtime_ns, st.st_size)
        with self.lock:
            if key == self.mtime:
                return
            with open(self.path, encoding="utf-8") as f:
                text = f.read()
            data = json.loads(text) if text.strip() else []
            if isinstance(data, dict):
                data = data.get("rules", [])
            base = len(self.cli)
            self.file_rules = [Rule(s, base + i + 1) for i, s in enumerate(data)]
            self.mtime = key

    def find(self, method, target):
        try:
            self.reload()
        except (OSError, ValueError) as e:
            sys.stderr.write("fault-proxy: rules file: %s\n" % e)
        with self.lock:
            rules = self.cli + self.file_rules
        for r in rules:
            if r.matches(method, target):
                return r if r.take() else None
        return None


RULES = None


def log_line(text):
    if not ARGS.log:
        return
    with LOG_LOCK:
        with open(ARGS.log, "a", encoding="utf-8") as f:
            f.write(text + "\n")


class Cut(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fault-proxy"
    _expect = False

    def log_message(self, fmt, *args):
        pass

    def handle_expect_100(self):
        # decide later: a status fault answers before the body is sent
        self._expect = True
        return True

    # -- request bodies ----------------------------------------------------
    def _body_pieces(self):
        """Yields the decoded request body in pieces."""
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            while True:
                line = self.rfile.readline(65537)
                if not line:
                    raise ConnectionError("client closed inside a chunked body")
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while True:  # trailers
                        t = self.rfile.readline(65537)
                        if t in (b"\r\n", b"\n", b""):
                            break
                    return
                while size > 0:
                    data = self.rfile.read(min(size, PIECE))
                    if not data:
                        raise ConnectionError("client closed inside a chunk")
                    size -= len(data)
                    yield data
                self.rfile.readline(3)
        else:
            n = int(self.headers.get("Content-Length") or 0)
            while n > 0:
                data = self.rfile.read(min(n, PIECE))
                if not data:
                    raise ConnectionError("client closed inside the body")
                n -= len(data)
                yield data

    def _has_body(self):
        return ("chunked" in self.headers.get("Transfer-Encoding", "").lower() or
                int(self.headers.get("Content-Length") or 0) > 0)

    def _drop(self):
        """Drop the client connection (FIN both ways)."""
        self.close_connection = True
        try:
            self.wfile.flush()
        except OSError:
            pass
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _send_continue(self):
        if getattr(self, "_expect", False):
            self._expect = False
            self.send_response_only(100)
            self.end_headers()

    # -- the proxy -----------------------------------------------------------
    def _proxy(self):
        t0 = time.monotonic()
        with SEQ_LOCK:
            SEQ[0] += 1
            seq = SEQ[0]
        self._in = 0
        self._out = 0
        self._status = 0
        rule = RULES.find(self.command, self.path)
        fault = rule.kind() if rule else "-"
        try:
            if rule and rule.status is not None and rule.cut_request_after is None:
                self._answer_fault(rule)
            else:
                self._forward(rule)
        except Cut:
            self._drop()
        except (ConnectionError, OSError, http.client.HTTPException) as e:
            if self._status == 0 and not isinstance(e, (BrokenPipeError, ConnectionResetError)):
                try:
                    self._send_simple(502, "BAD_GATEWAY", "fault-proxy: %s" % e)
                except OSError:
                    pass
            self._drop()
        self._expect = False
        ms = int((time.monotonic() - t0) * 1000)
        log_line("%d %s %s %03d in=%d out=%d fault=%s ms=%d" % (
            seq, self.command, self.path, self._status, self._in, self._out, fault, ms))

    def _send_simple(self, status, code, message, extra=None):
        body = json.dumps({"errors": [{"code": code, "message": message}]}).encode()
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or []):
            self.send_header(k, v)
        self.end_headers()
        self._status = status
        if self.command != "HEAD":
            self.wfile.write(body)
            self._out += len(body)

    def _answer_fault(self, rule):
        if rule.delay:
            time.sleep(rule.delay)
        extra = []
        ra = rule.retry_after
        if ra is None and rule.status == 429:
            ra = "1"
        if ra is not None and ra.lower() != "none":
            extra.append(("Retry-After", ra))
        if getattr(self, "_expect", False) and self._has_body():
            # the client waits for 100 before sending the body: answer now
            # and close, so the unsent body cannot confuse the connection
            extra.append(("Connection", "close"))
            self.close_connection = True
        else:
            for piece in self._body_pieces():
                self._in += len(piece)
        self._send_simple(rule.status, ERROR_CODES.get(rule.status, "UNKNOWN"),
                          "injected by fault-proxy", extra)

    def _upstream_conn(self):
        host = UPSTREAM.hostname
        port = UPSTREAM.port or (443 if UPSTREAM.scheme == "https" else 80)
        if UPSTREAM.scheme == "https":
            ctx = ssl.create_default_context(cafile=ARGS.upstream_cafile)
            if ARGS.upstream_insecure:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            return http.client.HTTPSConnection(host, port, timeout=ARGS.timeout, context=ctx)
        return http.client.HTTPConnection(host, port, timeout=ARGS.timeout)

    def _client_origin(self):
        host = self.headers.get("Host") or "%s:%d" % self.server.server_address[:2]
        return "http://" + host

    def _rewrite_location(self, value):
        up = "%s://%s" % (UPSTREAM.scheme, UPSTREAM.netloc)
        if value.startswith(up):
            rest = value[len(up):]
            if rest == "" or rest[0] in "/?#":
                return self._client_origin() + rest
        return value

    def _forward(self, rule):
        chunked = "chunked" in self.headers.get("Transfer-Encoding", "").lower()
        length = self.headers.get("Content-Length")
        conn = self._upstream_conn()
        try:
            conn.putrequest(self.command, self.path, skip_host=True,
                            skip_accept_encoding=True)
            conn_tokens = {t.strip().lower() for t in
                           self.headers.get("Connection", "").split(",") if t.strip()}
            for k, v in self.headers.items():
                lk = k.lower()
                if lk in HOP_BY_HOP or lk in conn_tokens or lk in ("expect", "content-length"):
                    continue
                if lk == "host" and not ARGS.preserve_host:
                    continue
                conn.putheader(k, v)
            if not ARGS.preserve_host:
                conn.putheader("Host", UPSTREAM.netloc)
            if chunked:
                conn.putheader("Transfer-Encoding", "chunked")
            elif length is not None:
                conn.putheader("Content-Length", length)
            conn.endheaders()
            if chunked or (length and int(length) > 0):
                self._send_continue()
                cut = rule.cut_request_after if rule else None
                for piece in self._body_pieces():
                    if cut is not None and self._in + len(piece) >= cut:
                        piece = piece[:cut - self._in]
                        self._in += len(piece)
                        if piece:
                            conn.send(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                        raise Cut()
                    self._in += len(piece)
                    conn.send(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                if chunked:
                    conn.send(b"0\r\n\r\n")
                if cut is not None:
                    raise Cut()  # the body was shorter than the cut point
            elif rule and rule.cut_request_after is not None:
                raise Cut()
            resp = conn.getresponse()
            if rule and rule.delay:
                time.sleep(rule.delay)
            self._relay(resp, rule)
        finally:
            conn.close()

    def _relay(self, resp, rule):
        status = resp.status
        no_body = (self.command == "HEAD" or status in (204, 304) or 100 <= status < 200)
        self.send_response_only(status, resp.reason)
        self._status = status
        upstream_len = None
        for k, v in resp.getheaders():
            lk = k.lower()
            if lk in HOP_BY_HOP:
                continue
            if lk == "content-length":
                upstream_len = v
            if lk == "location" and not ARGS.preserve_host:
                v = self._rewrite_location(v)
            self.send_header(k, v)
        close_delimited = False
        if not no_body and upstream_len is None:
            if resp.chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                close_delimited = True
                self.send_header("Connection", "close")
                self.close_connection = True
        self.end_headers()
        if no_body:
            return
        cut = rule.cut_response_after if rule else None
        chunked_out = upstream_len is None and not close_delimited
        while True:
            data = resp.read1(PIECE) if hasattr(resp, "read1") else resp.read(PIECE)
            if not data:
                break
            if cut is not None and self._out + len(data) >= cut:
                data = data[:cut - self._out]
                if data:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked_out else data)
                    self._out += len(data)
                raise Cut()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked_out else data)
            self._out += len(data)
        if chunked_out:
            self.wfile.write(b"0\r\n\r\n")
        if cut is not None:
            raise Cut()

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _proxy


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global ARGS, UPSTREAM, RULES
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", required=True, help="e.g. http://127.0.0.1:5000")
    ap.add_argument("--upstream-cafile", help="CA for an https upstream")
    ap.add_argument("--upstream-insecure", action="store_true",
                    help="do not verify an https upstream")
    ap.add_argument("--listen", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 = a free port")
    ap.add_argument("--port-file", help="write the port here when ready")
    ap.add_argument("--rule", action="append", default=[],
                    metavar="'METHOD REGEX key=value ...'")
    ap.add_argument("--rules", metavar="FILE", help="JSON rules, re-read on change")
    ap.add_argument("--log", help="append one line per request here")
    ap.add_argument("--preserve-host", action="store_true",
                    help="forward the client's Host and leave Location alone")
    ap.add_argument("--timeout", type=float, default=120,
                    help="upstream socket timeout in seconds")
    ap.add_argument("--max-seconds", type=float, default=600,
                    help="exit after this long (default 600)")
    ARGS = ap.parse_args()
    UPSTREAM = urllib.parse.urlsplit(ARGS.upstream)
    if UPSTREAM.scheme not in ("http", "https") or not UPSTREAM.hostname:
        ap.error("--upstream must be http://HOST:PORT or https://HOST:PORT")
    try:
        RULES = Rules([parse_cli_rule(r) for r in ARGS.rule], ARGS.rules)
    except (ValueError, re.error, OSError) as e:
        ap.error(str(e))

    srv = Server((ARGS.listen, ARGS.port), Handler)

    def stop(*_):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    timer = threading.Timer(ARGS.max_seconds, stop)
    timer.daemon = True
    timer.start()

    port = srv.server_address[1]
    if ARGS.port_file:
        tmp = ARGS.port_file + ".tmp"
        with open(tmp, "w", encoding="ascii") as f:
            f.write("%d\n" % port)
        os.replace(tmp, ARGS.port_file)
    print(port, flush=True)
    try:
        srv.serve_forever(poll_interval=0.2)
    finally:
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
