#!/usr/bin/env python3
"""The build executor's overhead against the same commands typed by hand.

Runs `xtask build` from clean build folders, then the very commands of the same plan (from
`xtask plan --json`: venv, cmake configure/build/install, pip wheel, verify) by hand with
subprocess, and compares the time of the command steps. Both sides use the same compiler
cache state (warm: run a build first), alternating, best of ROUNDS.

Usage: python3 xtask/benches/build_overhead.py [--variant cpu] [--python 3.11] [--rounds 2]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# verify is left out: it downloads numpy from PyPI, whose time swamps the rest.
COMMAND_KINDS = {"venv", "configure", "build", "install", "wheel"}


def clean(plan):
    work = plan["work_dir"]
    for sub in ("build", "prefix", "wheel", "dist", "verify"):
        shutil.rmtree(os.path.join(work, sub), ignore_errors=True)
    state = os.path.join(
        ROOT, "target/xtask/state", plan["variant"], plan["platform"], "py" + plan["python"]
    )
    shutil.rmtree(state, ignore_errors=True)


def tool_run(xtask, args, plan):
    clean(plan)
    out = subprocess.run(
        [xtask, "build", *args], capture_output=True, text=True, check=True, cwd=ROOT
    ).stderr
    kinds = {s["id"]: s["kind"] for s in plan["steps"]}
    total = 0.0
    for step, seconds in re.findall(r"\] (\S+) — done in ([0-9.]+) s", out):
        if kinds.get(step) in COMMAND_KINDS:
            total += float(seconds)
    return total


def raw_run(plan):
    """The command steps by hand; the tool's own steps (bundle) are done with the tool so the
    verify step has its fat wheel, but not timed."""
    clean(plan)
    total = 0.0
    for step in plan["steps"]:
        if step["kind"] == "bundle":
            subprocess.run(
                [XTASK, "bundle", *ARGS_NO_BUILD], check=True, cwd=ROOT, capture_output=True
            )
            continue
        if step["kind"] not in COMMAND_KINDS:
            continue
        env = dict(os.environ, **step["env"])
        start = time.monotonic()
        for command in step["commands"]:
            subprocess.run(
                [command["program"], *command["args"]],
                env=env,
                cwd=command.get("cwd") or ROOT,
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        total += time.monotonic() - start
    return total


def main():
    global XTASK, ARGS_NO_BUILD
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", default="cpu")
    parser.add_argument("--python", default="3.11")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--xtask", default=os.path.join(ROOT, "target/release/xtask"))
    a = parser.parse_args()
    XTASK = a.xtask
    args = ["--variant", a.variant, "--python", a.python]
    ARGS_NO_BUILD = args
    plan = json.loads(
        subprocess.run(
            [XTASK, "plan", *args, "--json"], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
    )
    tool, raw = [], []
    for _ in range(a.rounds):
        tool.append(tool_run(XTASK, args, plan))
        raw.append(raw_run(plan))
    best_tool, best_raw = min(tool), min(raw)
    print(f"command steps of `xtask build --variant {a.variant}` (best of {a.rounds}):")
    print(f"| xtask build | {best_tool:.1f} s | by hand | {best_raw:.1f} s | "
          f"overhead {100 * (best_tool / best_raw - 1):+.1f} % |")
    mean = lambda xs: sum(xs) / len(xs)
    print(f"| mean | {mean(tool):.1f} s | | {mean(raw):.1f} s | "
          f"overhead {100 * (mean(tool) / mean(raw) - 1):+.1f} % |")
    print("all rounds: xtask " + ", ".join(f"{t:.1f}" for t in tool)
          + "; by hand " + ", ".join(f"{r:.1f}" for r in raw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
