# -*- coding: utf-8 -*-
"""hack/zip_bytecode_cache: a module imported from a zip is compiled once, then read from the cache, and behaves
and fails as it does without the cache (tracebacks name the zip entry)."""

import os
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE_HOOK = os.path.join(ROOT, "hack", "zip_bytecode_cache")

MODULE = b'''
def answer():
    return 42

def fail():
    raise ValueError("from the zipped module")
'''

PROGRAM = '''
import sys, traceback
sys.path.insert(0, sys.argv[1])
import zipped
print(zipped.answer())
try:
    zipped.fail()
except ValueError:
    print(traceback.extract_tb(sys.exc_info()[2])[-1].filename)
'''


def _run(tmp_path, zip_name, cache_dir):
    archive = tmp_path / zip_name
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("zipped.py", MODULE)
    env = dict(os.environ, PYTHONPATH=CACHE_HOOK, GPUDIRECT_ZIP_BYTECODE_DIR=str(cache_dir))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(archive)], env=env, capture_output=True, text=True, check=True)
    return done.stdout.splitlines(), archive


def _cached_files(cache_dir):
    return sorted(os.path.join(d, f) for d, _, files in os.walk(cache_dir) for f in files)


def test_the_first_import_fills_the_cache_and_the_next_one_reads_it(tmp_path):
    cache_dir = tmp_path / "cache"
    first, first_zip = _run(tmp_path, "first.zip", cache_dir)
    cached = _cached_files(cache_dir)
    assert len(cached) == 1, cached
    stamp = os.stat(cached[0]).st_mtime_ns
    second, second_zip = _run(tmp_path, "second.zip", cache_dir)  # another zip (AnsiballZ paths differ per task)
    assert _cached_files(cache_dir) == cached and os.stat(cached[0]).st_mtime_ns == stamp  # read, not rewritten
    assert first == ["42", os.path.join(str(first_zip), "zipped.py")]
    assert second == ["42", os.path.join(str(second_zip), "zipped.py")]  # the code carries the zip it came from


def test_an_empty_cache_directory_setting_turns_it_off(tmp_path):
    lines, _ = _run(tmp_path, "plain.zip", "")
    assert lines[0] == "42"
    assert not (tmp_path / "cache").exists()
