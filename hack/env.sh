# shellcheck shell=bash
# Sourced by the hack/ scripts: builds (once) the virtualenv from pinned requirements, links the
# checkout into an ansible_collections tree and exports the paths every tool needs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT
VENV="${GPUDIRECT_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
stamp="$VENV/.requirements.sha256"
want="$(cat "$ROOT/requirements.txt" "$ROOT/requirements-test.txt" "$ROOT/constraints.txt" | sha256sum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo ">> creating virtualenv $VENV (pinned requirements; about 2 minutes the first time)" >&2
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    -r "$ROOT/requirements-test.txt" -c "$ROOT/constraints.txt" >&2
  echo "$want" > "$stamp"
fi
export PATH="$VENV/bin:$PATH"
export VIRTUAL_ENV="$VENV"
# ansible_collections/gpudirect/openshift -> this checkout (playbooks, pytest); ansible-test gets a copy.
COLL_ROOT="$ROOT/.cache/collections"
mkdir -p "$COLL_ROOT/ansible_collections/gpudirect"
ln -sfn "$ROOT" "$COLL_ROOT/ansible_collections/gpudirect/openshift"
export ANSIBLE_COLLECTIONS_PATH="$COLL_ROOT"
export ANSIBLE_CONFIG="$ROOT/ansible.cfg"
export PYTHONPATH="$ROOT:$COLL_ROOT${PYTHONPATH:+:$PYTHONPATH}"
# Test data lives in the repository, each folder with its SOURCES.md.
export GPUDIRECT_CRD_DIR="${GPUDIRECT_CRD_DIR:-$ROOT/simulator/data/crds}"
export GPUDIRECT_FIXTURES_DIR="${GPUDIRECT_FIXTURES_DIR:-$ROOT/tests/unit/fixtures/captures}"
export ANSIBLE_LOCAL_TEMP="$ROOT/.cache/ansible-tmp"
export ANSIBLE_HOME="$ROOT/.cache/ansible-home"
