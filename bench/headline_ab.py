"""The headline numbers of `iwlab.run` (medians, the bottleneck's utilisation and drop rate),
this tree — records in memory and written with `out` — against the `iwlab` package found in
another folder (an older tree with its extension), compared to the last bit (`float.hex`), on
13 runs of eight scenarios, from the repository root. Each run is a fresh process.

    .venv/bin/python bench/headline_ab.py /tmp/before/python
"""
import json
import os
import subprocess
import sys
import tempfile

CASES = [("rfc2415", ["duration=20s", "warmup=2s"], s) for s in (1, 2, 3)] + [
    ("congested-links", ["duration=10s", "warmup=1s"], s) for s in (1, 2)] + [
    ("bench/scenarios/short-flows.toml", ["duration=5s"], s) for s in (1, 2, 3)] + [
    ("rfc6928", ["duration=30s", "warmup=2s"], 1), ("iw-function", ["duration=10s", "warmup=1s"], 1),
    ("bench/scenarios/bulk.toml", [], 1), ("bench/scenarios/websearch-1g.toml", ["duration=20s"], 1),
    ("bench/scenarios/short-flows-iw3.toml", ["duration=5s"], 4)]
CHILD = r"""
import json, sys, iwlab
name, sets, seed, out = json.loads(sys.argv[1])
r = iwlab.run(iwlab.load(name, sets=sets), seed=seed, out=out)
keys = ["median_flow_completion", "median_page_delay", "bottleneck_forward_utilisation",
        "bottleneck_forward_drop_rate", "bottleneck_reverse_utilisation", "bottleneck_reverse_drop_rate", "flows", "pages", "events"]
print(json.dumps({k: (r.summary[k].hex() if isinstance(r.summary[k], float) else r.summary[k]) for k in keys}))
"""
def one(pp, case, out):
    env = {"PYTHONPATH": pp} if pp else {}
    p = subprocess.run([sys.executable, "-c", CHILD, json.dumps([*case, out])], capture_output=True, text=True,
                       env={**os.environ, **env}, check=True)
    return json.loads(p.stdout)
bad = 0
for case in CASES:
    before = one(sys.argv[1], case, None)
    mem = one(None, case, None)
    with tempfile.TemporaryDirectory(prefix="iwlab-headline-") as tmp:
        files = one(None, case, tmp)
    same = before == mem == files
    bad += not same
    print("same" if same else "DIFFER", case, before["median_flow_completion"], before["median_page_delay"], before["flows"])
    if not same:
        print(" before", before, "\n mem   ", mem, "\n files ", files)
print("all identical" if not bad else f"{bad} differ")
