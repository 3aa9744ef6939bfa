"""Prints the folder on this Python's sys.path where a package installed
under PREFIX belongs (one under PREFIX/lib named dist-packages or
site-packages), or nothing when the Python does not look under PREFIX.
Run by python/npusim/meson.build: python3 site_dir.py PREFIX"""
import os
import sys

prefix = os.path.normpath(sys.argv[1])
for p in sys.path:
    rel = os.path.relpath(os.path.normpath(p), prefix) if p else ""
    if rel.startswith("lib" + os.sep) and os.path.basename(p) in ("dist-packages", "site-packages"):
        print(p)
        break
