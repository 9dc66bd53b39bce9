#!/usr/bin/env bash
# Runs every test and quality gate. Usage: hack/test.sh [stage ...]
# Stages: sanity unit simulator integration lint docs molecule (default: all, in that order).
# shellcheck source=hack/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT" || exit 1
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(sanity unit simulator integration lint docs molecule)
PYTEST_ARGS=(-q -p no:cacheprovider -n "${GPUDIRECT_TEST_WORKERS:-2}" --dist loadgroup --durations=15)

# ansible-test insists on a real (not symlinked) ansible_collections/<ns>/<name> tree.
workspace() {
  local ws="$ROOT/.cache/ansible-test/ansible_collections"
  mkdir -p "$ws/gpudirect/openshift"
  rm -rf "$ws/gpudirect/openshift" && mkdir -p "$ws/gpudirect/openshift"
  # tracked and new-but-not-ignored files: what a fresh clone would hold, plus work in progress
  (cd "$ROOT" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - 2>/dev/null) \
    | tar -xf - -C "$ws/gpudirect/openshift"
  # ansible-test lists targets with git; an index is enough
  (cd "$ws/gpudirect/openshift" && git init -q && git add -A)
  ln -sfn "$VENV/lib/python3.11/site-packages/ansible_collections/kubernetes" "$ws/kubernetes"
  local pipv
  pipv=$(python -c "import re,os,ansible_test as a;print(re.search(r\"pip='([0-9.]+)'\",open(os.path.join(os.path.dirname(a.__file__),'_internal','python_requirements.py')).read()).group(1))")
  install -D -m 0644 "$ROOT/hack/get_pip_shim.py" "$HOME/.ansible/test/cache/get_pip_${pipv//./_}.py"
  echo "$ws/gpudirect/openshift"
}

run_stage() {
  local t0=$SECONDS
  echo "==> $1"
  case "$1" in
    sanity)
      (cd "$(workspace)" && ansible-test sanity --venv --python 3.11 --color no) ;;
    unit)
      pytest "${PYTEST_ARGS[@]}" tests/unit ;;
    simulator)
      pytest "${PYTEST_ARGS[@]}" tests/simulator ;;
    integration)
      pytest "${PYTEST_ARGS[@]}" tests/integration ;;
    lint)
      ansible-lint --profile production --offline
      antsibull-changelog lint ;;
    docs)
      antsibull-docs lint-collection-docs --plugin-docs --skip-rstcheck "$ROOT/.cache/collections/ansible_collections/gpudirect/openshift" ;;
    molecule)
      if [ -d extensions/molecule ]; then molecule test --all; else echo "no molecule scenarios yet"; fi ;;
    *) echo "unknown stage $1" >&2; return 2 ;;
  esac
  echo "<== $1 passed in $((SECONDS - t0)) s"
}

for s in "${stages[@]}"; do run_stage "$s"; done
echo "all stages passed: ${stages[*]} (${SECONDS} s)"
