#!/usr/bin/env python3
"""token-server.py - a small Docker/OCI registry token server for tests.

Issues JWT bearer tokens that the CNCF distribution registry (2.8, `auth:
token:`) accepts.  Python standard library only; the RS256 signature is made
by `openssl dgst -sha256 -sign KEY`.

The JWT header carries both `x5c` (the signing certificate, which is also the
registry's `rootcertbundle`, so distribution's x509 chain check succeeds) and
`kid` (the libtrust fingerprint of the key: base32 of the first 240 bits of
sha256(DER SubjectPublicKeyInfo), in groups of four joined by ':'), which is
what distribution looks up when a token has no x5c.

Protocol (distribution docs spec/auth/token.md and oauth.md):
  GET  REALM?service=S&scope=repository:NAME:pull,push&scope=...
       [&offline_token=true&client_id=C&account=U]
       Basic credentials optional.  Answers
       {"token", "access_token", "expires_in", "issued_at"[, "refresh_token"]}
  POST REALM (application/x-www-form-urlencoded)
       grant_type=password&username=U&password=P&service=S&client_id=C
           &scope=SPACE-SEPARATED[&access_type=offline]
       grant_type=refresh_token&refresh_token=R&service=S&client_id=C&scope=...
       Answers {"access_token", "scope", "expires_in", "issued_at"
                [, "refresh_token"]}

Grants: a --user gets every action it asks for; a --readonly-user only
`pull`; anonymous requests get a token with no access (as Docker Hub does for
private repositories) unless --anonymous-pull.  Wrong credentials get 401.

Every request is logged to --log as one line, without secrets:
  METHOD PATH?QUERY STATUS user=NAME grant=TYPE:NAME:ACTIONS;...
(passwords and refresh tokens never appear: POST bodies are not logged, and
the query keys password/refresh_token are dropped).

It prints its port on stdout when ready (and writes it to --port-file), and
exits after --max-seconds or on SIGTERM/SIGINT.
"""

import argparse
import base64
import hashlib
import json
import os
import secrets
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOG_LOCK = threading.Lock()
REFRESH_LOCK = threading.Lock()
REFRESH = {}  # refresh token -> user name
KEY_ID = ""
X5C = ""


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def pem_cert_to_der(path):
    with open(path, "r", encoding="ascii") as f:
        text = f.read()
    body = text.split("-----BEGIN CERTIFICATE-----", 1)[1]
    body = body.split("-----END CERTIFICATE-----", 1)[0]
    return base64.b64decode("".join(body.split()))


def libtrust_key_id(key_path):
    """distribution's `kid`: libtrust keyIDFromCryptoKey."""
    der = subprocess.run(
        ["openssl", "pkey", "-in", key_path, "-pubout", "-outform", "DER"],
        check=True, capture_output=True).stdout
    digest = hashlib.sha256(der).digest()[:30]
    enc = base64.b32encode(digest).decode("ascii").rstrip("=")
    return ":".join(enc[i:i + 4] for i in range(0, len(enc), 4))


def sign(data):
    out = subprocess.run(
        ["openssl", "dgst", "-sha256", "-sign", ARGS.key],
        input=data, check=True, capture_output=True).stdout
    return out


def make_jwt(user, access, expires_in):
    now = int(time.time())
    header = {"typ": "JWT", "alg": "RS256"}
    if ARGS.jwt_header in ("kid", "both"):
        header["kid"] = KEY_ID
    if ARGS.jwt_header in ("x5c", "both"):
        header["x5c"] = [X5C]
    claims = {
        "iss": ARGS.issuer,
        "sub": user or "",
        "aud": ARGS.service,
        "exp": now + expires_in,
        "nbf": now - 1,
        "iat": now,
        "jti": secrets.token_hex(16),
        "access": access,
    }
    signing_input = (b64url(json.dumps(header, separators=(",", ":")).encode())
                     + "." +
                     b64url(json.dumps(claims, separators=(",", ":")).encode()))
    sig = sign(signing_input.encode("ascii"))
    return signing_input + "." + b64url(sig)


def parse_scope(scope):
    """TYPE:NAME:ACTIONS, where NAME may itself contain ':' (a port)."""
    parts = scope.split(":")
    if len(parts) < 3:
        return None
    typ, actions = parts[0], parts[-1]
    name = ":".join(parts[1:-1])
    if not typ or not name:
        return None
    return typ, name, [a for a in actions.split(",") if a]


def grant(user_kind, scopes):
    access = []
    for s in scopes:
        p = parse_scope(s)
        if p is None:
            continue
        typ, name, actions = p
        if user_kind == "full":
            allowed = actions
        elif user_kind in ("readonly", "anonymous-pull"):
            allowed = [a for a in actions if a == "pull"] if typ == "repository" else []
        else:
            allowed = []
        # merge duplicates of one resource
        for a in access:
            if a["type"] == typ and a["name"] == name:
                for x in allowed:
                    if x not in a["actions"]:
                        a["actions"].append(x)
                break
        else:
            access.append({"type": typ, "name": name, "actions": list(allowed)})
    return access


def check_user(name, password):
    """Returns 'full', 'readonly' or None."""
    for spec, kind in ((ARGS.user, "full"), (ARGS.readonly_user, "readonly")):
        for u in spec or []:
            n, _, p = u.partition(":")
            if n == name and secrets.compare_digest(p.encode(), password.encode()):
                return kind
    return None


def kind_of(name):
    for u in ARGS.user or []:
        if u.partition(":")[0] == name:
            return "full"
    for u in ARGS.readonly_user or []:
        if u.partition(":")[0] == name:
            return "readonly"
    return None


def log_line(text):
    if not ARGS.log:
        return
    with LOG_LOCK:
        with open(ARGS.log, "a", encoding="utf-8") as f:
            f.write(text + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "envbuild-token-server/1"

    def log_message(self, fmt, *args):  # silence stderr access log
        pass

    def _send_json(self, status, obj, extra=None):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _log(self, status, user, access, note=""):
        u = urllib.parse.urlsplit(self.path)
        q = [(k, v) for k, v in urllib.parse.parse_qsl(u.query, keep_blank_values=True)
             if k not in ("password", "refresh_token")]
        path = u.path + ("?" + urllib.parse.urlencode(q, safe=":/,@") if q else "")
        g = ";".join("%s:%s:%s" % (a["type"], a["name"], ",".join(a["actions"]))
                     for a in access or [])
        line = "%s %s %d user=%s grant=%s" % (self.command, path, status,
                                              user or "-", g or "-")
        if note:
            line += " " + note
        log_line(line)

    def _unauthorized(self, user, msg, note=""):
        self._log(401, user, None, note)
        self._send_json(401, {"errors": [{"code": "UNAUTHORIZED", "message": msg}]},
                        {"WWW-Authenticate": 'Basic realm="envbuild-token-server"'})

    def _path_ok(self):
        return urllib.parse.urlsplit(self.path).path == ARGS.path

    def _expires(self):
        return max(1, ARGS.expires_in)

    def _issue(self, user, kind, scopes, offline, oauth):
        access = grant(kind, scopes)
        exp = self._expires()
        tok = make_jwt(user, access, exp)
        resp = {"expires_in": exp,
                "issued_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if oauth:
            resp["access_token"] = tok
            resp["scope"] = " ".join(scopes)
        else:
            if ARGS.token_field in ("token", "both"):
                resp["token"] = tok
            if ARGS.token_field in ("access_token", "both"):
                resp["access_token"] = tok
        if offline and user:
            rt = secrets.token_urlsafe(24)
            with REFRESH_LOCK:
                REFRESH[rt] = user
            resp["refresh_token"] = rt
        return resp, access

    def do_GET(self):
        if not self._path_ok():
            self._log(404, None, None)
            self._send_json(404, {"errors": [{"code": "NOT_FOUND", "message": "no such path"}]})
            return
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        scopes = q.get("scope", [])
        # some clients put several scopes space-separated in one parameter
        scopes = [s for item in scopes for s in item.split(" ") if s]
        offline = q.get("offline_token", ["false"])[0].lower() == "true"
        user, kind = None, None
        auth = self.headers.get("Authorization", "")
        if auth:
            scheme, _, cred = auth.partition(" ")
            if scheme.lower() != "basic":
                self._unauthorized(None, "unsupported authorization scheme")
                return
            try:
                name, _, pw = base64.b64decode(cred.strip()).decode("utf-8").partition(":")
            except (ValueError, UnicodeDecodeError):
                self._unauthorized(None, "malformed basic credentials")
                return
            kind = check_user(name, pw)
            if kind is None:
                self._unauthorized(name, "invalid username or password")
                return
            user = name
        else:
            kind = "anonymous-pull" if ARGS.anonymous_pull else "anonymous"
        resp, access = self._issue(user, kind, scopes, offline, oauth=False)
        self._log(200, user, access)
        self._send_json(200, resp)

    def do_POST(self):
        if not self._path_ok() or ARGS.no_oauth:
            self._log(404, None, None)
            self._send_json(404, {"errors": [{"code": "NOT_FOUND", "message": "no such path"}]})
            return
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n).decode("utf-8", "replace") if n > 0 else ""
        form = urllib.parse.parse_qs(raw, keep_blank_values=True)

        def f(k):
            return form.get(k, [""])[0]

        gt = f("grant_type")
        scopes = [s for s in f("scope").split(" ") if s]
        note = "grant_type=%s client_id=%s" % (gt or "-", f("client_id") or "-")
        if gt == "password":
            kind = check_user(f("username"), f("password"))
            if kind is None:
                self._unauthorized(f("username") or None, "invalid username or password", note)
                return
            user = f("username")
            offline = f("access_type") == "offline"
        elif gt == "refresh_token":
            with REFRESH_LOCK:
                user = REFRESH.get(f("refresh_token"))
            if user is None:
                self._unauthorized(None, "invalid refresh token", note)
                return
            kind = kind_of(user)
            offline = True  # hand back a (new) refresh token
        else:
            self._log(400, None, None, note)
            self._send_json(400, {"error": "unsupported_grant_type"})
            return
        resp, access = self._issue(user, kind, scopes, offline, oauth=True)
        self._log(200, user, access, note)
        self._send_json(200, resp)

    def do_HEAD(self):
        self._log(405, None, None)
        self._send_json(405, {"errors": [{"code": "UNSUPPORTED", "message": "use GET"}]})


def main():
    global ARGS, KEY_ID, X5C
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--listen", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 = a free port")
    ap.add_argument("--port-file", help="write the port here when ready")
    ap.add_argument("--path", default="/token", help="the realm's path")
    ap.add_argument("--key", required=True, help="RSA private key (PEM) to sign with")
    ap.add_argument("--cert", required=True,
                    help="its certificate (PEM), the registry's rootcertbundle")
    ap.add_argument("--issuer", default="envbuild-token-server")
    ap.add_argument("--service", default="envbuild-registry")
    ap.add_argument("--user", action="append", metavar="NAME:PASSWORD",
                    help="a user granted every requested action (repeatable)")
    ap.add_argument("--readonly-user", action="append", metavar="NAME:PASSWORD",
                    help="a user granted only pull (repeatable)")
    ap.add_argument("--anonymous-pull", action="store_true",
                    help="grant pull to requests without credentials")
    ap.add_argument("--expires-in", type=int, default=300,
                    help="token lifetime in seconds (the registry adds 60 s leeway)")
    ap.add_argument("--token-field", choices=("token", "access_token", "both"),
                    default="both", help="which field(s) a GET answer carries")
    ap.add_argument("--jwt-header", choices=("x5c", "kid", "both"), default="both")
    ap.add_argument("--no-oauth", action="store_true", help="answer POST with 404")
    ap.add_argument("--tls-cert", help="serve HTTPS with this certificate")
    ap.add_argument("--tls-key")
    ap.add_argument("--log", help="append one line per request here")
    ap.add_argument("--max-seconds", type=float, default=3600,
                    help="exit after this long (default 3600)")
    ARGS = ap.parse_args()

    KEY_ID = libtrust_key_id(ARGS.key)
    X5C = base64.b64encode(pem_cert_to_der(ARGS.cert)).decode("ascii")

    srv = ThreadingHTTPServer((ARGS.listen, ARGS.port), Handler)
    srv.daemon_threads = True
    if ARGS.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(ARGS.tls_cert, ARGS.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)

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
