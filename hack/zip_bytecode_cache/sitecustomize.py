# -*- coding: utf-8 -*-
"""A bytecode cache for modules imported from zip files, for the test command only.

Every Ansible module task runs a fresh Python that imports the module and its module_utils (ansible-core's and the
collection's) from the AnsiballZ zip. zipimport compiles source it finds there on every import and never writes
bytecode, so each module task compiled about 0.1-0.2 s of source (measured: ping 0.41 -> 0.28 s a task; a roce-lab
converge 40 -> 35 s of CPU). hack/test.sh puts this directory on PYTHONPATH, where site.py imports this file at
start-up, and the compiled code is kept under $GPUDIRECT_ZIP_BYTECODE_DIR, keyed by the source's SHA-256 and the
interpreter's cache tag. Nothing else changes: the code objects are those compile() makes, given back with the file
name of the zip entry they came from, so tracebacks read as without the cache. Any failure falls back to compiling.
"""

import hashlib
import marshal
import os
import sys

try:
    import zipimport
except ImportError:  # pragma: no cover - every CPython has it
    zipimport = None

_CACHE_DIR = os.environ.get("GPUDIRECT_ZIP_BYTECODE_DIR", "")
_compile_source = getattr(zipimport, "_compile_source", None)


def _with_file_name(code, file_name):
    constants = tuple(_with_file_name(c, file_name) if isinstance(c, type(code)) else c for c in code.co_consts)
    return code.replace(co_filename=file_name, co_consts=constants)


def _cached_compile_source(pathname, source):
    key = hashlib.sha256(source).hexdigest()
    path = os.path.join(_CACHE_DIR, "%s-O%d" % (sys.implementation.cache_tag, sys.flags.optimize), key[:2], key)
    try:
        with open(path, "rb") as cached:
            return _with_file_name(marshal.load(cached), pathname)
    except (OSError, EOFError, ValueError, TypeError):
        pass
    code = _compile_source(pathname, source)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = "%s.%d" % (path, os.getpid())
        with open(partial, "wb") as out:
            marshal.dump(code, out)
        os.replace(partial, path)  # atomic: a concurrent reader sees the whole file or none
    except OSError:
        pass
    return code


if _CACHE_DIR and _compile_source is not None:
    zipimport._compile_source = _cached_compile_source
