"""Serve churn predictions: GET /predict?tenure_months=3&monthly_charges=95&support_calls=4
-> {"p": 0.83}.  Loads $MODEL_DIR/model.json (written by train.py); needs
numpy only (a Debian package pinned in envbuild.yaml), no pandas, no
scikit-learn, no compiler."""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

import numpy as np


def load():
    with open(os.path.join(os.environ.get("MODEL_DIR", "model"), "model.json")) as f:
        m = json.load(f)
    return {"features": m["features"], "mean": np.array(m["mean"]),
            "scale": np.array(m["scale"]), "coef": np.array(m["coef"]),
            "intercept": float(m["intercept"])}


def predict(model, values):
    x = (np.array(values, dtype=float) - model["mean"]) / model["scale"]
    return float(1 / (1 + np.exp(-(x @ model["coef"] + model["intercept"]))))


class Handler(BaseHTTPRequestHandler):
    model = None

    def do_GET(self):
        q = parse_qs(urlparse(self.path).query)
        try:
            values = [float(q[f][0]) for f in self.model["features"]]
        except (KeyError, ValueError):
            self.send_error(400, "need " + ", ".join(self.model["features"]))
            return
        body = json.dumps({"p": round(predict(self.model, values), 4)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)


def main():
    Handler.model = load()
    if "--once" in sys.argv:  # smoke test: one new customer, one prediction
        customer = {"tenure_months": 3, "monthly_charges": 95.0, "support_calls": 4}
        p = predict(Handler.model, [customer[f] for f in Handler.model["features"]])
        print(json.dumps({"customer": customer, "p": round(p, 4)}))
        return
    HTTPServer(("0.0.0.0", int(os.environ.get("PORT", "8000"))), Handler).serve_forever()


if __name__ == "__main__":
    main()
