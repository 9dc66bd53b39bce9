#!/usr/bin/env bash
# Runs every test and quality gate. Usage: hack/test.sh [stage ...] | hack/test.sh --lanes "stage ..." "stage ..."
# Stages: sanity unit simulator integration lint docs molecule release.
# With no stage named, all of them run in two lanes at once, so that both cores stay busy: the static checks
# and molecule in one, the pytest suites (each on GPUDIRECT_TEST_WORKERS workers) in the other. Each stage's
# output goes to $GPUDIRECT_TEST_LOG_DIR/<stage>.log (default .cache/test-logs) and is printed whole when the
# stage ends. --lanes runs the given lanes (one quoted, space-separated list of stages each) the same way.
# GPUDIRECT_TEST_LANES=1 runs every stage one after the other instead, printing as it goes.
# Named stages always run one after the other, printing as they go.
# shellcheck source=hack/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT" || exit 1
ALL_STAGES=(sanity unit simulator integration lint docs molecule release)
STATIC_LANE=(sanity lint docs release molecule)
PYTEST_LANE=(unit simulator integration)
PYTEST_ARGS=(-q -p no:cacheprovider -n "${GPUDIRECT_TEST_WORKERS:-2}" --dist loadgroup --durations=60)
LOG_DIR="${GPUDIRECT_TEST_LOG_DIR:-$ROOT/.cache/test-logs}"
# Module tasks import their module_utils from the AnsiballZ zip, which Python compiles again on every task: the
# stages that run playbooks keep that bytecode (hack/zip_bytecode_cache/sitecustomize.py says how and what it saves).
# GPUDIRECT_ZIP_BYTECODE_DIR= (empty) turns it off.
zip_bytecode_cache() {
  export GPUDIRECT_ZIP_BYTECODE_DIR="${GPUDIRECT_ZIP_BYTECODE_DIR-$ROOT/.cache/zip-bytecode}"
  export PYTHONPATH="$ROOT/hack/zip_bytecode_cache${PYTHONPATH:+:$PYTHONPATH}"
}

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

stage_commands() {
  case "$1" in
    sanity)
      local ws
      ws="$(workspace)" && (cd "$ws" && ansible-test sanity --venv --python 3.11 --color no) ;;
    unit)
      pytest "${PYTEST_ARGS[@]}" tests/unit ;;
    simulator)
      zip_bytecode_cache
      pytest "${PYTEST_ARGS[@]}" simulator/tests ;;
    integration)
      zip_bytecode_cache
      pytest "${PYTEST_ARGS[@]}" tests/integration ;;
    lint)
      ansible-lint --profile production --offline && antsibull-changelog lint && python hack/gen_argument_specs.py --check ;;
    docs)
      # The venv (and kubernetes.core in it) lies inside this git checkout, ignored: without a ceiling antsibull-docs
      # copies the dependency with git, which copies nothing, and every module's kubernetes.core doc fragment is missing.
      GIT_CEILING_DIRECTORIES="$VENV" antsibull-docs lint-collection-docs --plugin-docs --skip-rstcheck "$ROOT/.cache/collections/ansible_collections/gpudirect/openshift" ;;
    molecule)
      zip_bytecode_cache
      # Every scenario shares the same playbooks and differs only by its variables file and profile (checked by
      # tests/integration/test_molecule_layout.py), and test_site.py converges each configuration's variables: the
      # test command runs the harness in full on the operators scenario and one scenario per fabric (shared device
      # over RoCE, SR-IOV over InfiniBand) and checks the syntax of the others, which keeps CI inside its time.
      # GPUDIRECT_MOLECULE_ALL=1 runs `molecule test --all` (docs/contributing.md: before a release).
      if [ "${GPUDIRECT_MOLECULE_ALL:-0}" = 1 ]; then
        molecule test --all
      else
        local scenario
        for scenario in default operators shared_device_roce sriov_legacy_infiniband; do molecule test -s "$scenario"; done
        for scenario in shared_device_infiniband host_device_roce host_device_infiniband sriov_legacy_roce; do
          molecule syntax -s "$scenario"
        done
      fi ;;
    release)
      bash hack/release_check.sh ;;
    *) echo "unknown stage $1" >&2; return 2 ;;
  esac
}

run_stage() {
  local t0=$SECONDS rc=0
  echo "==> $1"
  # A subshell with errexit: inside `if` the caller's set -e is off, and a failing first command must count.
  (set -e; stage_commands "$1") || rc=$?
  if [ "$rc" -eq 0 ]; then echo "<== $1 passed in $((SECONDS - t0)) s"; else echo "<== $1 FAILED (rc $rc) in $((SECONDS - t0)) s"; fi
  return "$rc"
}

# One lane: its stages in order, each into its own log, printed whole (under a lock, never interleaved) at its end.
run_lane() {
  local s rc
  for s in "$@"; do
    echo "--> $s started ($SECONDS s)"
    rc=0
    run_stage "$s" > "$LOG_DIR/$s.log" 2>&1 < /dev/null || rc=$?
    [ "$rc" -eq 0 ] || echo "$s" >> "$LOG_DIR/failed"
    flock "$LOG_DIR/.print" cat "$LOG_DIR/$s.log"
  done
}

# Each lane (a space-separated list of stages) in the background; every stage of every lane runs.
run_lanes() {
  local lane pids=()
  rm -rf "$LOG_DIR" && mkdir -p "$LOG_DIR"
  for lane in "$@"; do
    # shellcheck disable=SC2086  # a lane is a word list on purpose
    run_lane $lane &
    pids+=($!)
  done
  wait "${pids[@]}" || true
  if [ -f "$LOG_DIR/failed" ]; then mapfile -t failed < "$LOG_DIR/failed"; fi
}

failed=()
full_run=false
if [ "${1:-}" = "--lanes" ]; then
  shift
  read -r -a stages <<< "$*"
  run_lanes "$@"
elif [ $# -gt 0 ] || [ "${GPUDIRECT_TEST_LANES:-2}" = 1 ]; then
  stages=("$@")
  [ ${#stages[@]} -gt 0 ] || { stages=("${ALL_STAGES[@]}"); full_run=true; }
  # Every stage runs even after a failure, so one CI run shows everything that is wrong.
  for s in "${stages[@]}"; do
    run_stage "$s" || failed+=("$s")
  done
else
  stages=("${ALL_STAGES[@]}")
  full_run=true
  run_lanes "${STATIC_LANE[*]}" "${PYTEST_LANE[*]}"
fi
# Only a run of every stage is the test command's duration (make bench reports it).
if $full_run; then mkdir -p "$ROOT/.cache" && echo "${SECONDS}" > "$ROOT/.cache/last-test-duration"; fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED stages: ${failed[*]} (${SECONDS} s)"
  exit 1
fi
echo "all stages passed: ${stages[*]} (${SECONDS} s)"
