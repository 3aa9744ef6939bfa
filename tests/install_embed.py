#!/usr/bin/env python3
"""The installed library, used as a stranger would (issue 15, item 8).

`meson install --destdir` into a temporary folder; tests/embed_installed.c
compiled there with only `pkg-config --cflags --libs npusim` (the installed
npusim.pc, its prefix pointed into the folder); run on the installed kernels
(NPUSIM_KERNELS) with configs/default.yaml; its cycles must equal
`npusim run`'s for the same kernel, dtype and shape. The installed
libnpusim.so must export only npu_-prefixed symbols (`nm -D`). Where the
SystemC layer is installed, the installed npusim runs on its SystemC engine
module (<libdir>/npusim), and docs/examples/systemc_platform.cc is compiled
the same way with `pkg-config --cflags --libs npusim-systemc` and must give
`npusim run`'s cycles with npusim's DRAM bound.

    install_embed.py BUILD SOURCE NPUSIM_EXE
    (environment: CC, CXX, and SANITIZE_FLAGS, the build's -fsanitize flags)

Prints TAP; exit status 0 when every check held.
"""
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile

RUNS = [("gelu_tanh", "fp16", "1,16,28,28"), ("mish", "fp32", "1,24,7,9")]


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def check(self, ok, what, detail=""):
        self.n += 1
        print(("ok" if ok else "not ok") + f" {self.n} - {what}")
        if not ok:
            self.failed += 1
            for line in str(detail).splitlines():
                print("# " + line)
        return ok


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    build, source, npusim_exe = sys.argv[1:4]
    cc, cxx = os.environ["CC"], os.environ["CXX"]
    cflags = shlex.split(os.environ.get("SANITIZE_FLAGS", ""))
    tap = Tap()
    print(f"1..{9 + len(RUNS)}")
    with tempfile.TemporaryDirectory(prefix="npusim-install-") as dest:
        r = run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", dest])
        if not tap.check(r.returncode == 0, "meson install --destdir", r.stdout + r.stderr):
            return 1
        pcs = glob.glob(os.path.join(dest, "**", "pkgconfig", "npusim.pc"), recursive=True)
        kernels = glob.glob(os.path.join(dest, "**", "npusim", "kernels", "gelu_tanh.s"), recursive=True)
        if not tap.check(len(pcs) == 1 and len(kernels) == 1, "npusim.pc and the kernels are installed", pcs + kernels):
            return 1
        pc_dir = os.path.dirname(pcs[0])
        # <dest><prefix>/<libdir>/pkgconfig/npusim.pc: read the prefix the
        # file names, and point it into the destdir.
        with open(pcs[0]) as f:
            prefix = next(l.split("=", 1)[1].strip() for l in f if l.startswith("prefix="))
        env = dict(os.environ, PKG_CONFIG_PATH=pc_dir)
        def pkg_flags(name):
            r = run(["pkg-config", "--define-variable=prefix=" + dest + prefix, "--cflags", "--libs", name], env=env)
            return shlex.split(r.stdout) if r.returncode == 0 else None

        flags = pkg_flags("npusim")
        if not tap.check(flags is not None, "pkg-config --cflags --libs npusim"):
            return 1
        exe = os.path.join(dest, "embed_installed")
        cmd = shlex.split(cc) + ["-std=c11", "-Wall", "-Werror"] + cflags + \
            [os.path.join(source, "tests", "embed_installed.c"), "-o", exe] + flags
        # The build tree's headers must not be what compiles it.
        r = run(cmd, cwd=dest)
        if not tap.check(r.returncode == 0 and not any(source in f for f in flags),
                         "compiles against the installed headers and library alone", " ".join(cmd) + "\n" + r.stderr):
            return 1
        libdir = next(f[2:] for f in flags if f.startswith("-L"))
        r = run(["nm", "-D", "--defined-only", os.path.join(libdir, "libnpusim.so")])
        names = [l.split()[-1] for l in r.stdout.splitlines() if len(l.split()) == 3]
        others = [n for n in names if not n.startswith("npu_")]
        tap.check(r.returncode == 0 and names and not others,
                  f"nm -D: the installed libnpusim.so exports {len(names)} symbols, all npu_",
                  "not npu_: " + " ".join(others[:20]))
        run_env = dict(os.environ, LD_LIBRARY_PATH=libdir, NPUSIM_KERNELS=os.path.dirname(kernels[0]))
        config = os.path.join(source, "configs", "default.yaml")
        for kernel, dtype, shape in RUNS:
            emb = run([exe, config, kernel, dtype, shape], env=run_env)
            cli = run([npusim_exe, "run", kernel, "--config", config, "--dtype", dtype, "--shape", shape,
                       "--json", "-"])
            want = json.loads(cli.stdout)["cycles"] if cli.returncode == 0 else None
            tap.check(emb.returncode == 0 and want is not None and emb.stdout.strip() == f"cycles={want} passed=1",
                      f"{kernel} {dtype} {shape}: the installed library gives npusim run's cycles ({want})",
                      f"embedded: {emb.stdout}{emb.stderr}\ncli: {cli.stderr}")
        # The installed npusim: it finds libnpusim by its run path, and its
        # kernels in the prefix, never the checkout it was built from.
        installed = os.path.join(dest + prefix, "bin", "npusim")
        r = run(["readelf", "-d", installed])
        runpath = r.stdout
        tap.check(r.returncode == 0 and os.path.dirname(libdir[len(dest):]) in r.stdout and "RUNPATH" in r.stdout,
                  "the installed npusim's run path names the prefix's libdir", r.stdout + r.stderr)
        kernels_at = os.path.dirname(kernels[0])[len(dest):]  # where the installed npusim looks
        alone = run([installed, "run", "relu", "--shape", "1,1,4,4", "-q"], env=dict(os.environ, LD_LIBRARY_PATH=libdir))
        if os.path.isdir(kernels_at):  # npusim is installed on this machine at that prefix
            tap.check(alone.returncode == 0, f"the installed npusim runs {kernels_at}'s relu", alone.stderr)
        else:
            want = (f"the installed kernels are missing ({kernels_at}): install npusim again, or set "
                    "NPUSIM_KERNELS to a folder of kernels\n")
            tap.check(alone.returncode == 2 and alone.stderr == want,
                      "the installed npusim, its kernels not in their place, says so (not the checkout's)",
                      alone.stdout + alone.stderr)
        # The SystemC face, installed: a platform's own sc_main.
        sc_flags = pkg_flags("npusim-systemc")
        if not os.path.exists(os.path.join(pc_dir, "npusim-systemc.pc")):
            for _ in range(2):
                tap.n += 1
                print(f"ok {tap.n} - # SKIP the SystemC layer is not built (-Dsystemc)")
        else:
            # The engine module `run --engine systemc` opens, where the
            # installed npusim's run path looks (here through
            # LD_LIBRARY_PATH: the prefix is inside the temporary folder).
            module = os.path.join(libdir, "npusim", "npusim-systemc-engine.so")
            eng = run([installed, "run", "relu", "--shape", "1,1,4,4", "--engine", "systemc", "-q"],
                      env=dict(os.environ, LD_LIBRARY_PATH=libdir + ":" + os.path.dirname(module),
                               NPUSIM_KERNELS=os.path.dirname(kernels[0])))
            tap.check(os.path.exists(module) and os.path.dirname(module)[len(dest):] in runpath and eng.returncode == 0,
                      "the SystemC engine module is installed in <libdir>/npusim, on the installed npusim's run path, "
                      "and runs", runpath + eng.stdout + eng.stderr)
            platform = os.path.join(dest, "systemc_platform")
            cmd = shlex.split(cxx) + ["-std=c++17"] + cflags + \
                [os.path.join(source, "docs", "examples", "systemc_platform.cc"), "-o", platform] + (sc_flags or [])
            r = run(cmd, cwd=dest)
            plat = run([platform, "gelu_tanh", config, "--dtype", "fp16", "--shape", "1,16,28,28", "--npusim-dram"],
                       env=run_env) if r.returncode == 0 else r
            cli = run([npusim_exe, "run", "gelu_tanh", "--config", config, "--dtype", "fp16", "--shape", "1,16,28,28",
                       "--json", "-"])
            want = json.loads(cli.stdout)["cycles"] if cli.returncode == 0 else None
            tap.check(sc_flags is not None and plat.returncode == 0 and plat.stdout.startswith(f"cycles={want} passed=1"),
                      f"the SystemC example, built with the installed npusim-systemc.pc, gives npusim run's cycles ({want})",
                      " ".join(cmd) + "\n" + plat.stdout + plat.stderr)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
