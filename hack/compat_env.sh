#!/usr/bin/env bash
# Builds (once, under a lock) the compatibility lane: the oldest ansible-core the collection claims
# (hack/requirements-oldest.txt) in .venv-oldest, and a collections path that holds only the oldest supported
# kubernetes.core (taken from the `ansible` package on PyPI that first shipped it).
# Prints two lines: the virtualenv's bin directory and that collections path.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="${GPUDIRECT_OLDEST_VENV:-$ROOT/.venv-oldest}"
COLL="$ROOT/.cache/oldest-kubernetes-core"
# ansible 11.0.0 is the first community package with kubernetes.core 5.0.0, the oldest version galaxy.yml accepts.
ANSIBLE_PACKAGE="ansible==11.0.0"
KUBERNETES_CORE="5.0.0"
mkdir -p "$ROOT/.cache"
exec 9>"$ROOT/.cache/oldest-env.lock"
flock 9
want="$(cat "$ROOT/hack/requirements-oldest.txt" "$0" | sha256sum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/ansible-playbook" ] || [ "$(cat "$VENV/.stamp" 2>/dev/null)" != "$want" ]; then
  echo ">> creating $VENV (oldest supported ansible-core)" >&2
  rm -rf "$VENV" "$COLL"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$ROOT/hack/requirements-oldest.txt" >&2
  tmp="$(mktemp -d)"
  "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps -d "$tmp" "$ANSIBLE_PACKAGE" >&2
  mkdir -p "$COLL/ansible_collections/kubernetes"
  "$VENV/bin/python" - "$tmp" "$COLL" "$KUBERNETES_CORE" <<'PY'
import glob, json, sys, zipfile
tmp, coll, want = sys.argv[1:]
wheel = zipfile.ZipFile(glob.glob(tmp + "/ansible-*.whl")[0])
prefix = "ansible_collections/kubernetes/core/"
members = [n for n in wheel.namelist() if n.startswith(prefix)]
version = json.loads(wheel.read(prefix + "MANIFEST.json"))["collection_info"]["version"]
if version != want:
    sys.exit("the wheel carries kubernetes.core %s, not %s" % (version, want))
wheel.extractall(coll, members)
PY
  rm -rf "$tmp"
  echo "$want" > "$VENV/.stamp"
fi
echo "$VENV/bin"
echo "$COLL"
