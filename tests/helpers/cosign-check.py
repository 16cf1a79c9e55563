#!/usr/bin/env python3
"""cosign-check.py - check an image's cosign simple-signing signatures the
way containers/image does under a `sigstoreSigned` policy with `keyPath`
and `signedIdentity: matchRepository` (signature/sigstore.go,
signature/internal/sigstore_payload.go, docker/ sigstore attachments): the
tag sha256-<hex>.sig of the manifest list AND of the chosen instance, each
holding at least one application/vnd.dev.cosign.simplesigning.v1+json
layer whose payload has exactly the critical fields, names the digest and
the repository, and whose dev.cosignproject.cosign/signature annotation is
an ECDSA-SHA256 signature of the payload by the key (checked by openssl).

usage: cosign-check.py REGISTRY_URL REPO TAG PUBKEY [ARCH]
Prints "accepted" (exit 0) or "refused: WHY" (exit 1).  For tests on
machines whose skopeo has sigstore compiled out (Debian 12)."""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

ACCEPT = ", ".join([
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.docker.distribution.manifest.v2+json"])
SIG_TYPE = "application/vnd.dev.cosign.simplesigning.v1+json"
SIG_ANN = "dev.cosignproject.cosign/signature"


class Refused(Exception):
    pass


def get(url, accept=None):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise


def exact(obj, keys):
    return isinstance(obj, dict) and set(obj) == set(keys)


def check_one(base, repo, digest, pub, identity):
    raw = get(f"{base}/v2/{repo}/manifests/sha256-{digest[7:]}.sig", ACCEPT)
    if raw is None:
        raise Refused(f"no signature for {digest}")
    why = "no simple-signing layer"
    for layer in json.loads(raw).get("layers", []):
        if layer.get("mediaType") != SIG_TYPE:
            continue
        payload = get(f"{base}/v2/{repo}/blobs/{layer['digest']}")
        if payload is None or "sha256:" + hashlib.sha256(payload).hexdigest() != layer["digest"]:
            why = "payload blob missing or not its digest"
            continue
        sig = layer.get("annotations", {}).get(SIG_ANN)
        if not sig:
            why = "no signature annotation"
            continue
        with tempfile.TemporaryDirectory() as d:
            pf, sf = os.path.join(d, "p"), os.path.join(d, "s")
            open(pf, "wb").write(payload)
            open(sf, "wb").write(base64.b64decode(sig))
            r = subprocess.run(["openssl", "dgst", "-sha256", "-verify", pub, "-signature", sf, pf],
                               capture_output=True)
        if r.returncode != 0:
            why = "cryptographic signature verification failed"
            continue
        p = json.loads(payload)
        c = p.get("critical") if isinstance(p, dict) else None
        if not exact(p, ["critical", "optional"]) or not exact(c, ["identity", "image", "type"]) \
                or c["type"] != "cosign container image signature" \
                or not exact(c["image"], ["docker-manifest-digest"]) \
                or not exact(c["identity"], ["docker-reference"]):
            why = "payload fields are not exactly containers/image's"
            continue
        if c["image"]["docker-manifest-digest"] != digest:
            why = "payload names another digest"
            continue
        if c["identity"]["docker-reference"].split("@")[0] != identity:
            why = "payload names another repository"
            continue
        return
    raise Refused(f"{digest}: {why}")


def main():
    base, repo, tag, pub = sys.argv[1:5]
    arch = sys.argv[5] if len(sys.argv) > 5 else None
    identity = base.split("://", 1)[1] + "/" + repo
    try:
        top = get(f"{base}/v2/{repo}/manifests/{tag}", ACCEPT)
        if top is None:
            raise Refused("no such image")
        top_digest = "sha256:" + hashlib.sha256(top).hexdigest()
        check_one(base, repo, top_digest, pub, identity)
        doc = json.loads(top)
        if "manifests" in doc:
            chosen = [m for m in doc["manifests"]
                      if m.get("platform", {}).get("architecture") == (arch or "amd64")]
            if not chosen:
                raise Refused("no manifest for the architecture")
            check_one(base, repo, chosen[0]["digest"], pub, identity)
    except Refused as e:
        print(f"refused: {e}")
        return 1
    print("accepted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
