"""hack/release_contents.py, as the release stage runs it: a tarball passes only when every file is allowed and
every required file is there, and a module counts as documented only with its documentation in the importer's result."""

import io
import json
import os
import subprocess
import sys
import tarfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "hack", "release_contents.py")


def _tarball(path, names):
    with tarfile.open(str(path), "w:gz") as archive:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 2
            archive.addfile(info, io.BytesIO(b"x\n"))
    return str(path)


def _run(*args):
    proc = subprocess.run([sys.executable, SCRIPT] + [str(a) for a in args], capture_output=True, text=True,
                          check=False)
    return proc.returncode, proc.stdout


def test_allow_list_rejects_unexpected_and_missing_files(tmp_path):
    allow = tmp_path / "allow.txt"
    allow.write_text("# comment\nREADME.md\nplugins/modules/*.py\n", encoding="utf-8")
    good = _tarball(tmp_path / "good.tar.gz", ["README.md", "plugins/modules/a.py"])
    assert _run("files", good, allow)[0] == 0

    # `*` does not cross a directory: a nested file, a test file and a missing README each fail.
    rc, out = _run("files", _tarball(tmp_path / "nested.tar.gz", ["README.md", "plugins/modules/x/b.py"]), allow)
    assert rc == 1 and "plugins/modules/x/b.py" in out
    rc, out = _run("files", _tarball(tmp_path / "extra.tar.gz", ["README.md", "tests/unit/t.py"]), allow)
    assert rc == 1 and "tests/unit/t.py" in out
    rc, out = _run("files", _tarball(tmp_path / "missing.tar.gz", ["plugins/modules/a.py"]), allow)
    assert rc == 1 and "missing from the tarball: README.md" in out


def test_docs_counts_modules_with_documentation_only(tmp_path):
    tarball = _tarball(tmp_path / "c.tar.gz", ["plugins/modules/a.py", "plugins/modules/b.py"])
    result = tmp_path / "importer_result.json"

    def write(contents):
        result.write_text(json.dumps({"docs_blob": {"contents": contents}}), encoding="utf-8")

    documented = {"content_type": "module", "content_name": "a", "doc_strings": {"doc": {"short_description": "A"}}}
    write([documented, {"content_type": "module", "content_name": "b", "doc_strings": None}])
    rc, out = _run("docs", tarball, result)
    assert rc == 1 and "1 of 2 modules documented" in out and "without documentation: b" in out

    write([documented, dict(documented, content_name="b")])
    rc, out = _run("docs", tarball, result)
    assert rc == 0 and "2 of 2 modules documented" in out
