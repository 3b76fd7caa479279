#!/usr/bin/env python3
"""Regenerates crates/bundle/policy/manylinux-x86_64.json from auditwheel's policy file.

Usage: scripts/manylinux-policy.py path/to/auditwheel/policy/manylinux-policy.json COMMIT

Keeps the x86_64 entries of pypa/auditwheel src/auditwheel/policy/manylinux-policy.json
(the `linux` entry dropped): name, priority, aliases, lib_whitelist, blacklist (library ->
symbols a manylinux system may lack) and symbol_versions (prefix -> allowed versions).
"""
import json
import sys

source, commit = sys.argv[1], sys.argv[2]
policies = []
for p in json.load(open(source)):
    if p["name"] == "linux":
        continue
    policies.append({
        "name": p["name"],
        "priority": p["priority"],
        "aliases": p["aliases"],
        "lib_whitelist": sorted(p["lib_whitelist"]),
        "blacklist": {k: sorted(v) for k, v in sorted(p.get("blacklist", {}).items())},
        "symbol_versions": p["symbol_versions"]["x86_64"],
    })
out = {
    "source": f"pypa/auditwheel src/auditwheel/policy/manylinux-policy.json at {commit}, "
              "x86_64 entries (scripts/manylinux-policy.py)",
    "policies": policies,
}
json.dump(out, open("crates/bundle/policy/manylinux-x86_64.json", "w"), indent=1)
print(f"{len(policies)} policies written")
