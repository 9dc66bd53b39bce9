"""The repository stands alone: no tracked file reads the reference material that developers keep beside the
checkout, and the data the tests use is in the repository with its provenance."""

import os
import re
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUTSIDE = re.compile(r"\.\./" + "shared\\b|/work/" + "shared\\b")  # split so this file does not match itself


def _tracked_files():
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    return [path for path in out.splitlines() if os.path.isfile(os.path.join(ROOT, path))]


def test_no_file_reads_material_outside_the_repository():
    offenders = []
    for path in _tracked_files():
        if path.endswith("SOURCES.md") or path.startswith("changelogs/"):
            continue  # provenance and history may name where data came from
        try:
            with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
                text = handle.read()
        except UnicodeDecodeError:
            continue
        offenders.extend("%s:%d" % (path, text[:m.start()].count("\n") + 1) for m in OUTSIDE.finditer(text))
    assert not offenders, "paths outside the repository: %s" % ", ".join(offenders)


def test_test_data_has_its_provenance_beside_it():
    for folder in ("simulator/data/crds", "tests/unit/fixtures/captures"):
        assert os.path.isfile(os.path.join(ROOT, folder, "SOURCES.md")), folder
