"""Serve churn predictions over HTTP: GET /predict?x=1.5 -> {"p": 0.8}."""
import json
import math
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse


def load():
    with open(os.path.join(os.environ.get("MODEL_DIR", "model"), "model.json")) as f:
        return json.load(f)


class Handler(BaseHTTPRequestHandler):
    model = None

    def do_GET(self):
        q = parse_qs(urlparse(self.path).query)
        x = float(q.get("x", ["0"])[0])
        p = 1 / (1 + math.exp(-(self.model["w"] * x + self.model["b"])))
        body = json.dumps({"p": round(p, 4)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)


def main():
    Handler.model = load()
    if "--once" in sys.argv:  # smoke test: print one prediction and exit
        p = 1 / (1 + math.exp(-(Handler.model["w"] * 1.0 + Handler.model["b"])))
        print(json.dumps({"p": round(p, 4)}))
        return
    HTTPServer(("0.0.0.0", int(os.environ.get("PORT", "8000"))), Handler).serve_forever()


if __name__ == "__main__":
    main()
