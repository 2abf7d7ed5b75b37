"""Run a fixed set of scenarios and print the sha256 of every Parquet table (wall time nulled)."""

import hashlib
import tempfile
from pathlib import Path

import ccbench

S = [
    {
        "name": "cubic_loss",
        "duration": "5s",
        "seed": 3,
        "bottleneck": {"rate": "50Mbit", "rtt": "50ms", "loss": "1%"},
        "flows": [{"cc": "cubic"}],
    },
    {
        "name": "bbr_jitter",
        "duration": "5s",
        "seed": 4,
        "bottleneck": {"rate": "50Mbit", "rtt": "40ms", "jitter": "8ms"},
        "flows": [{"cc": "bbr", "count": 2}, {"cc": "cubic"}],
        "probe": {"ping": "100ms"},
    },
    {
        "name": "fq_codel",
        "duration": "4s",
        "bottleneck": {"rate": "20Mbit", "rtt": "30ms", "aqm": "fq_codel", "buffer": "5bdp"},
        "flows": [{"cc": "reno"}, {"cc": "vegas"}],
    },
    {
        "name": "wifi",
        "duration": "3s",
        "bottleneck": {"link": "wifi", "rtt": "10ms", "buffer": "1000pkt"},
        "flows": [{"cc": "cubic"}],
    },
    {
        "name": "trace",
        "duration": "3s",
        "bottleneck": {"trace": "lte-steady", "rtt": "40ms", "buffer": "200pkt"},
        "flows": [{"cc": "bbr"}],
    },
]
out = Path(tempfile.mkdtemp())
for s in S:
    r = ccbench.run(s)
    d = out / s["name"]
    r.write_parquet(d, wall_time=False)
    for f in sorted(d.rglob("*.parquet")):
        print(s["name"], f.relative_to(d), hashlib.sha256(f.read_bytes()).hexdigest()[:16])
    print(s["name"], "flows.json", hashlib.sha256(r.flows.to_json().encode()).hexdigest()[:16])
