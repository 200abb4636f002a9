#!/usr/bin/env python3
"""Summarise ONNX Runtime profiles (ttsgen bench --ort-profile PREFIX): per session file, the mean run time, the
time per provider, the operators that took longest, and every node that ran on the CPU provider of a GPU session.
usage: scripts/ort-profile-summary.py PREFIX_*.json"""
import collections
import json
import sys

for path in sys.argv[1:]:
    events = json.load(open(path))
    runs = [e["dur"] for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"]
    nodes = [e for e in events if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")]
    by_provider = collections.Counter()
    by_op = collections.Counter()
    count_op = collections.Counter()
    cpu_nodes = collections.Counter()
    for e in nodes:
        a = e.get("args", {})
        prov, op = a.get("provider", "?"), a.get("op_name", "?")
        by_provider[prov] += e["dur"]
        by_op[(prov, op)] += e["dur"]
        count_op[(prov, op)] += 1
        if prov == "CPUExecutionProvider":
            cpu_nodes[e["name"][:-len("_kernel_time")]] += e["dur"]
    n = max(1, len(runs))
    print(f"== {path}: {len(runs)} runs, mean {sum(runs) / n / 1000:.2f} ms, nodes per run {len(nodes) / n:.0f}")
    for prov, us in by_provider.most_common():
        print(f"   {prov}: {us / n / 1000:.2f} ms per run")
    for (prov, op), us in by_op.most_common(15):
        print(f"   {op:20s} {prov:28s} {us / n / 1000:8.3f} ms/run  {count_op[(prov, op)] / n:5.1f} nodes/run")
    providers = set(by_provider)
    if len(providers) > 1 and "CPUExecutionProvider" in providers:
        print("   on the CPU provider:", ", ".join(f"{k} {v / n / 1000:.3f}" for k, v in cpu_nodes.most_common(25)))
