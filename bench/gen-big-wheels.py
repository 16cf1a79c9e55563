#!/usr/bin/env python3
"""gen-big-wheels.py - synthetic wheels shaped like a CUDA PyTorch install
for bench/big (issue 25).

  gen-big-wheels.py OUTDIR SCALE

writes into OUTDIR:
  torch-2.1.0-cp311-cp311-linux_x86_64.whl    ~800 MB installed x SCALE,
      ~15k files x SCALE (a few big shared libraries, many small modules),
      Requires-Dist on every nvidia-* below (no version: a pin change of
      one of them keeps the closure)
  nvidia_<lib>_cu12-12.1.0-py3-none-any.whl   a dozen, 100-700 MB
      installed x SCALE, all shipping nvidia/__init__.py (empty, the same
      bytes) and nvidia/<lib>/...
  nvidia_nvtx_cu12-12.1.1-py3-none-any.whl    the one-pin change (same
      shape as 12.1.0, other bytes)
and prints "NAME==VERSION FILE" for the pinned set, one a line, the
change last.  Shared objects are pseudo-random with runs of text, about
half compressible like real ones; the small modules are valid Python
(.py and .pyi), so both envbuild and pip compile them as they would
torch's; deterministic for a SCALE.
Python 3 standard library only.
"""
import base64
import hashlib
import os
import random
import sys
import zipfile

DATE = (1980, 1, 1, 0, 0, 0)
MB = 1000 * 1000
# (lib, installed MB at SCALE 1): ~2.2 GB, with torch ~3 GB in all
NVIDIA = [("cublas", 700), ("cudnn", 400), ("cusparse", 250), ("cufft", 150),
          ("cusolver", 120), ("nccl", 100), ("curand", 100), ("cuda_runtime", 100),
          ("cuda_nvrtc", 100), ("cuda_cupti", 100), ("nvjitlink", 100), ("nvtx", 100)]


def content(rnd, n):
    """n bytes: random blocks and runs of text, about 2:1 compressible."""
    out = bytearray()
    text = b"_ZN5torch8autograd4NodeE cudaLaunchKernel __device__ void kernel(float*) "
    while len(out) < n:
        k = min(65536, n - len(out))
        if rnd.random() < 0.45:
            out += rnd.randbytes(k)
        else:
            out += (text * (k // len(text) + 1))[:k]
    return bytes(out)


def module(rnd, n, stub):
    """About n bytes of valid Python: functions and a class, as a module
    of torch has (a stub when stub: signatures only)."""
    out = [b'"""Synthetic module for bench/big."""\nimport math\n\n']
    size = len(out[0])
    i = 0
    while size < n:
        k = rnd.randrange(1, 1 << 30)
        if stub:
            t = f"def f{i}(x: float, y: int = {k}) -> float: ...\n"
        elif i % 4 == 3:
            t = (f"class C{i}:\n    scale = {k}\n\n    def __init__(self, x):\n"
                 f"        self.x = x * self.scale\n\n    def forward(self, y):\n"
                 f"        return math.tanh(self.x + y) if y > {k % 97} else [self.x] * {k % 7}\n\n\n")
        else:
            t = (f"def f{i}(x, y={k}):\n    s = 0\n    for j in range(x):\n"
                 f"        s += (j * y) % {k % 1009 + 1}\n    return {{'v': s, 'n': '{k:x}'}}\n\n\n")
        out.append(t.encode())
        size += len(t)
        i += 1
    return b"".join(out)


def rhash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def wheel(outdir, name, version, tag, files, requires=()):
    """files: iterator of (archive path, bytes); streamed into the zip."""
    di = f"{name}-{version}.dist-info"
    fn = os.path.join(outdir, f"{name}-{version}-{tag}.whl")
    rec = []
    with zipfile.ZipFile(fn + ".tmp", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        def put(path, data):
            zi = zipfile.ZipInfo(path, DATE)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.create_system = 3
            zi.external_attr = 0o100644 << 16
            z.writestr(zi, data, compresslevel=1)
            rec.append(f"{path},{rhash(data)},{len(data)}")
        for path, data in files:
            put(path, data)
        # the project's name as published (pip 23.0 compares it with the
        # requirement's as written, "_" and "-" not folded)
        meta = f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n"
        meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
        put(f"{di}/METADATA", meta.encode())
        put(f"{di}/WHEEL", f"Wheel-Version: 1.0\nGenerator: bench-big\nRoot-Is-Purelib: "
            f"{'true' if tag.startswith('py3') else 'false'}\nTag: {tag}\n".encode())
        rec.append(f"{di}/RECORD,,")
        zi = zipfile.ZipInfo(f"{di}/RECORD", DATE)
        zi.create_system = 3
        zi.external_attr = 0o100644 << 16
        z.writestr(zi, ("\n".join(rec) + "\n").encode(), compress_type=zipfile.ZIP_DEFLATED)
    os.replace(fn + ".tmp", fn)
    return fn


def nvidia_files(lib, mb, rnd):
    yield "nvidia/__init__.py", b""
    yield f"nvidia/{lib}/__init__.py", b""
    for i in range(4):
        yield f"nvidia/{lib}/include/{lib}_{i}.h", content(rnd, 20000)
    total = int(mb * MB)
    # two big libraries, as cublas has libcublas and libcublasLt
    for i, share in enumerate((0.7, 0.3)):
        yield f"nvidia/{lib}/lib/lib{lib}{'Lt' if i else ''}.so.12", content(rnd, int(total * share))


def torch_files(scale, rnd):
    total = int(800 * MB * scale)
    nfiles = max(60, int(15000 * scale))
    libs = [("libtorch_cuda.so", 0.55), ("libtorch_cpu.so", 0.25), ("libc10_cuda.so", 0.02),
            ("libc10.so", 0.01), ("libtorch_python.so", 0.03)]
    for n, share in libs:
        yield f"torch/lib/{n}", content(rnd, int(total * share))
    small = nfiles - len(libs)
    per = int(total * 0.14) // small
    for i in range(small):
        d = ("nn", "autograd", "cuda", "distributed", "fx", "_inductor", "testing", "utils")[i % 8]
        stub = i % 5 == 0
        yield (f"torch/{d}/m{i:05d}{'.pyi' if stub else '.py'}",
               module(rnd, max(64, int(per * rnd.uniform(0.2, 1.8))), stub))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, scale = sys.argv[1], float(sys.argv[2])
    os.makedirs(out, exist_ok=True)
    made = []
    for lib, mb in NVIDIA:
        name = f"nvidia_{lib}_cu12"
        f = wheel(out, name, "12.1.0", "py3-none-any",
                  nvidia_files(lib, mb * scale, random.Random(f"{lib}-{scale}")))
        made.append((f"nvidia-{lib.replace('_', '-')}-cu12==12.1.0", f))
    f = wheel(out, "torch", "2.1.0", "cp311-cp311-linux_x86_64",
              torch_files(scale, random.Random(f"torch-{scale}")),
              [f"nvidia-{lib.replace('_', '-')}-cu12" for lib, _ in NVIDIA])
    made.insert(0, ("torch==2.1.0", f))
    f = wheel(out, "nvidia_nvtx_cu12", "12.1.1", "py3-none-any",
              nvidia_files("nvtx", 100 * scale, random.Random(f"nvtx-new-{scale}")))
    made.append(("nvidia-nvtx-cu12==12.1.1", f))
    for pin, f in made:
        print(pin, f)


if __name__ == "__main__":
    main()
