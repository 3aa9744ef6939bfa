#!/usr/bin/python3
"""libnpusim exports exactly what its public headers declare with NPU_API:
every exported name is npu_-prefixed, declared in include/npusim/, and every
NPU_API declaration is exported (a missing NPU_API on a public function
would make it unlinkable, a missing -fvisibility=hidden would export the
internals). Arguments: the shared library, the include/npusim folder."""
import pathlib
import re
import subprocess
import sys


def main(lib, include):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    # Every defined dynamic symbol: functions and data (T, D, R, B) and the C++
    # kinds a template or inline function leaves (W, V weak; u unique; i ifunc).
    exported = {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3}
    declared = set()
    for h in sorted(pathlib.Path(include).glob("*.h")):
        text = re.sub(r"/\*.*?\*/", "", h.read_text(), flags=re.S)
        for decl in re.findall(r"NPU_API\s[^;{]*?\b(npu_\w+)\s*[\(\[]", text):
            declared.add(decl)
    problems = [f"exported but not npu_-prefixed: {s}" for s in sorted(exported) if not s.startswith("npu_")]
    problems += [f"exported but not declared with NPU_API in {include}: {s}"
                 for s in sorted(exported - declared) if s.startswith("npu_")]
    problems += [f"declared with NPU_API but not exported: {s}" for s in sorted(declared - exported)]
    for p in problems:
        print(p)
    print(f"{len(exported)} exported, {len(declared)} declared with NPU_API")
    return 1 if problems or not exported else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
