"""Checks of a built collection tarball for hack/release_check.sh.

  release_contents.py files TARBALL ALLOW_LIST     every file of TARBALL matches a line of ALLOW_LIST, and every
                                                   line without a wildcard is a file of TARBALL
  release_contents.py docs TARBALL RESULT_JSON     every module of TARBALL has documentation in galaxy-importer's
                                                   result (importer_result.json); prints "N of M modules documented"
"""

import json
import re
import sys
import tarfile


def _pattern(line):
    # `*` is any run of characters but `/`, so that plugins/modules/*.py does not let plugins/modules/x/y.py in.
    return re.compile("^" + "[^/]*".join(re.escape(part) for part in line.split("*")) + "$")


def _files(tarball):
    with tarfile.open(tarball) as archive:
        return sorted(member.name for member in archive.getmembers() if member.isfile())


def check_files(tarball, allow_list):
    with open(allow_list, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    patterns = [_pattern(line) for line in lines]
    files = _files(tarball)
    unexpected = [name for name in files if not any(p.match(name) for p in patterns)]
    missing = [line for line in lines if "*" not in line and line not in files]
    for name in unexpected:
        print("not in the allow-list (%s): %s" % (allow_list, name))
    for name in missing:
        print("missing from the tarball: %s" % name)
    if unexpected or missing:
        return 1
    print("tarball files: %d, all in the allow-list, every required file there" % len(files))
    return 0


def check_docs(tarball, result_json):
    modules = sorted(name.split("/")[-1][:-3] for name in _files(tarball)
                     if re.match(r"^plugins/modules/[^/]+\.py$", name) and not name.endswith("/__init__.py"))
    with open(result_json, encoding="utf-8") as handle:
        contents = json.load(handle)["docs_blob"]["contents"]
    # What Galaxy and Automation Hub show as a module's documentation: its doc_strings (none when ansible-doc failed,
    # for example on a doc fragment it cannot resolve).
    documented = sorted(entry["content_name"] for entry in contents if entry.get("content_type") == "module"
                        and ((entry.get("doc_strings") or {}).get("doc") or {}).get("short_description"))
    print("galaxy-importer: %d of %d modules documented" % (len(documented), len(modules)))
    undocumented = sorted(set(modules) - set(documented))
    if undocumented or not modules:
        print("without documentation: %s" % ", ".join(undocumented))
        return 1
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "files":
        return check_files(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == "docs":
        return check_docs(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
