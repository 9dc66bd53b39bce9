#!/usr/bin/env bash
# Builds (once, under a lock) a compatibility lane of the ansible-core versions meta/runtime.yml claims, and prints
# two lines: the lane's virtualenv bin directory and a collections path that holds only its kubernetes.core.
#   hack/compat_env.sh [oldest]  the oldest claimed ansible-core (hack/requirements-oldest.txt) in .venv-oldest, with
#                                the oldest kubernetes.core galaxy.yml accepts (taken from the `ansible` package on
#                                PyPI that first shipped it);
#   hack/compat_env.sh newest    the newest claimed ansible-core minor, newest patch (hack/requirements-newest.txt) in
#                                .venv-newest, on Python 3.12 (ansible-core 2.20 and later need it), with the
#                                kubernetes.core of the newest `ansible` package on PyPI (12.3.0: kubernetes.core 6.2.0).
# Python 3.12 is found, in this order: $GPUDIRECT_PYTHON312, python3.12 on PATH, `pyenv prefix` of a 3.12, then
# ~/.pyenv/versions/3.12*/ (the machine image keeps one there). None: the lane fails, naming where it looked.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LANE="${1:-oldest}"
mkdir -p "$ROOT/.cache"

find_python312() {
  local candidate
  for candidate in "${GPUDIRECT_PYTHON312:-}" "$(command -v python3.12 || true)"; do
    if [ -n "$candidate" ] && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  if command -v pyenv >/dev/null 2>&1; then
    for candidate in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.12(\.[0-9]+)?$' | sort -V -r); do
      if [ -x "$(pyenv root)/versions/$candidate/bin/python3.12" ]; then echo "$(pyenv root)/versions/$candidate/bin/python3.12"; return 0; fi
    done
  fi
  for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12 /root/.pyenv/versions/3.12*/bin/python3.12; do
    [ -x "$candidate" ] || continue  # an unmatched glob stays as written
    if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then echo "$candidate"; return 0; fi
  done
  echo "hack/compat_env.sh newest: ansible-core 2.20 and later need Python 3.12, and none was found (GPUDIRECT_PYTHON312," \
    "python3.12 on PATH, pyenv, ${PYENV_ROOT:-$HOME/.pyenv}/versions/3.12*, /root/.pyenv/versions/3.12*)." \
    "Install one (pyenv install 3.12) or set GPUDIRECT_PYTHON312 to its python3.12." >&2
  return 1
}

case "$LANE" in
  oldest)
    PYTHON="${PYTHON:-python3}"
    VENV="${GPUDIRECT_OLDEST_VENV:-$ROOT/.venv-oldest}"
    COLL="$ROOT/.cache/oldest-kubernetes-core"
    REQUIREMENTS="$ROOT/hack/requirements-oldest.txt"
    # ansible 11.0.0 is the first community package with kubernetes.core 5.0.0, the oldest version galaxy.yml accepts.
    ANSIBLE_PACKAGE="ansible==11.0.0"
    KUBERNETES_CORE="5.0.0"
    ;;
  newest)
    PYTHON="$(find_python312)"
    VENV="${GPUDIRECT_NEWEST_VENV:-$ROOT/.venv-newest}"
    COLL="$ROOT/.cache/newest-kubernetes-core"
    REQUIREMENTS="$ROOT/hack/requirements-newest.txt"
    # The newest community package on PyPI; its kubernetes.core is the newest the project's machines can install.
    ANSIBLE_PACKAGE="ansible==12.3.0"
    KUBERNETES_CORE="6.2.0"
    ;;
  *) echo "hack/compat_env.sh: unknown lane $LANE (oldest or newest)" >&2; exit 2 ;;
esac

exec 9>"$ROOT/.cache/$LANE-env.lock"
flock 9
want="$(cat "$REQUIREMENTS" "$0" | sha256sum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/ansible-playbook" ] || [ "$(cat "$VENV/.stamp" 2>/dev/null)" != "$want" ]; then
  echo ">> creating $VENV ($LANE supported ansible-core, $("$PYTHON" --version))" >&2
  rm -rf "$VENV" "$COLL"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQUIREMENTS" >&2
  mkdir -p "$COLL/ansible_collections/kubernetes"
  tmp="$(mktemp -d)"
  "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps -d "$tmp" "$ANSIBLE_PACKAGE" >&2
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
