"""Peak memory of publishing a written file to S3: one PUT (the file read
whole) beside a multipart upload (parts read a few at a time), same file,
same moto server on 127.0.0.1, in one run.

A child process writes N MiB of float64 (1 MiB chunks, uncompressed) to
``s3://data/...`` in 16 MiB slices, resets its peak resident size
(``/proc/self/clear_refs``), flushes (the publish), and reports how far
its peak rose above where it stood, with the publish's request counts.

    python bench/cloud/publish_memory.py [--quick] [--json FILE]
"""

import argparse
import json
import subprocess
import sys

import boto3
import moto.server as moto_server

CHILD = r'''
import json, sys
import numpy as np
import arca

def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) / 1024

url, opts, mib = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
f = arca.File(url, "w", storage_options=opts)
n = mib << 17
d = f.create_dataset("x", shape=(n,), dtype="f8", chunks=(1 << 17,))
rng = np.random.default_rng(0)
step = 2 << 20
for a in range(0, n, step):
    d[a:a + step] = rng.standard_normal(min(step, n - a))
with open("/proc/self/clear_refs", "w") as c:
    c.write("5")
before = status("VmRSS")
f.flush()
peak = status("VmHWM")
st = f.io_stats()
f.close()
print(json.dumps({"added_mib": round(peak - before, 1), "puts": st["puts"],
                  "parts": st["parts"], "completes": st["completes"],
                  "bytes_put": st["bytes_put"]}))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="64 MiB instead of 256")
    ap.add_argument("--json", metavar="FILE", help="write the figures here too")
    args = ap.parse_args()
    mib = 64 if args.quick else 256
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                     aws_access_key_id="bench", aws_secret_access_key="bench"
                     ).create_bucket(Bucket="data")
        base = {"aws_endpoint": endpoint, "aws_allow_http": "true",
                "aws_access_key_id": "bench", "aws_secret_access_key": "bench",
                "aws_region": "us-east-1"}
        runs = {
            "one PUT": {"multipart_threshold": str(1 << 40)},
            "multipart (defaults: 64 MiB threshold, 8 MiB parts)": {},
        }
        out = {"file_mib": mib, "runs": {}}
        for i, (name, extra) in enumerate(runs.items()):
            r = subprocess.run(
                [sys.executable, "-c", CHILD, f"s3://data/publish-{i}.arca",
                 json.dumps({**base, **extra}), str(mib)],
                capture_output=True, text=True, check=False)
            if r.returncode != 0:
                sys.exit(f"{name}: {r.stderr[-2000:]}")
            out["runs"][name] = json.loads(r.stdout)
    finally:
        server.stop()
    print(f"publishing a {mib} MiB file: peak resident memory added by the flush")
    for name, fig in out["runs"].items():
        print(f"  {name:55s} {fig['added_mib']:8.1f} MiB   "
              f"puts {fig['puts']}, parts {fig['parts']}, completes {fig['completes']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
