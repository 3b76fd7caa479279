# PyInstaller hook for the CTranslate2 build in this portable folder (written by
# `cargo xtask bundle`). It adds the libraries and data files the bundle placed (listed in
# binaries.json next to this file) as `binaries`, with absolute source paths, so it works
# from a .spec file in any folder: PyInstaller resolves relative sources in a .spec against
# the .spec file's folder (pyinstaller/pyinstaller doc/spec-files.rst), and a hook's
# `binaries` entries are (source, destination folder) pairs (doc/hooks.rst).
#
# Use (the folder holding this file is the hooks folder; `_internal` holds the package):
#   pyinstaller --additional-hooks-dir PORTABLE --paths PORTABLE/_internal app.py
# or in a .spec: Analysis([...], pathex=[r"PORTABLE/_internal"], hookspath=[r"PORTABLE"])
import json
import os

_portable = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_portable, "binaries.json"), encoding="utf-8") as _f:
    binaries = [
        (os.path.join(_portable, source), destination or ".")
        for source, destination in json.load(_f)
    ]
