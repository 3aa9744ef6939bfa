#!/usr/bin/env python3
"""The SystemC face (issue 15, item 3): docs/examples/systemc_platform.cc,
a platform's own sc_main with npusim's cores and L2 before its own TLM-2.0
memory target, under its own TLM quantum.

    systemc_platform.py PLATFORM_EXE NPUSIM_EXE SOURCE_ROOT

Prints TAP; exit status 0 when every check held.
"""
import json
import os
import subprocess
import sys

KERNEL, DTYPE, SHAPE = "gelu_tanh", "fp16", "1,16,28,28"


def main():
    platform, npusim, source = sys.argv[1:4]
    config = os.path.join(source, "configs", "default.yaml")
    checks = []

    def check(ok, what, detail=""):
        checks.append((ok, what, detail))

    def run_platform(*args):
        r = subprocess.run([platform, KERNEL, config, "--dtype", DTYPE, "--shape", SHAPE, *args],
                           capture_output=True, text=True)
        fields = dict(f.split("=", 1) for f in r.stdout.split()) if r.returncode == 0 else {}
        return fields, r

    def npusim_cycles(*sets):
        cmd = [npusim, "run", KERNEL, "--config", config, "--dtype", DTYPE, "--shape", SHAPE, "--json", "-"]
        for s in sets:
            cmd += ["--set", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        return json.loads(r.stdout)["cycles"] if r.returncode == 0 else None

    # npusim's own DRAM, bound by the platform: npusim run's cycles.
    for cores in (1, 2):
        want = npusim_cycles(f"system.cores={cores}")
        got, r = run_platform("--npusim-dram", "--set", f"system.cores={cores}", "--quantum", "37")
        check(want is not None and got.get("cycles") == str(want) and got.get("passed") == "1",
              f"{cores} core(s), npusim's DRAM: the platform's cycles are npusim run's ({want})",
              r.stdout + r.stderr)

    # The platform's own memory, two cores sharing the L2: one result for every quantum.
    lines = {}
    for q in ("1", "64", "100000"):
        got, r = run_platform("--set", "system.cores=2", "--quantum", q, "--latency", "100")
        lines[q] = r.stdout.strip()
        check(got.get("passed") == "1" and int(got.get("memory_reads", "0")) > 0 and
              int(got.get("memory_writes", "0")) > 0,
              f"own memory, 2 cores, quantum {q}: passes, and the memory served reads and writes",
              r.stdout + r.stderr)
    check(len(set(lines.values())) == 1, "own memory: the same cycles and requests at quanta 1, 64 and 100000",
          "\n".join(f"{q}: {l}" for q, l in lines.items()))
    slow, r = run_platform("--set", "system.cores=2", "--latency", "400")
    fast = dict(f.split("=", 1) for f in lines["64"].split()) if lines["64"] else {}
    check(slow.get("passed") == "1" and fast and int(slow["cycles"]) > int(fast["cycles"]),
          f"own memory: latency 400 costs more cycles than latency 100 ({slow.get('cycles')} > {fast.get('cycles')})",
          r.stdout + r.stderr)
    # Bad input from the platform's side is one line through the library.
    got, r = run_platform("--set", "system.cores=0")
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and "system.cores" in r.stderr,
          "a bad override is one line naming the key", r.stderr)

    print(f"1..{len(checks)}")
    for i, (ok, what, detail) in enumerate(checks, 1):
        print(("ok" if ok else "not ok") + f" {i} - {what}")
        if not ok:
            for line in str(detail).splitlines():
                print("# " + line)
    return 0 if all(ok for ok, _, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
