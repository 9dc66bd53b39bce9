#!/usr/bin/env bash
# Runs the main job, playbooks/site.yml, and ends with a short summary that says what to run next.
#   hack/site.sh                            against the embedded simulated cluster (started here, stopped at the end)
#   hack/site.sh --profile infiniband-lab   choose the simulated hardware profile (default roce-lab, as the simulator's)
#   hack/site.sh --vars FILE                the gpudirect_rdma_* variables (simulator default: playbooks/vars/simulator/
#                                           <profile>.yml, which fits that profile; the examples fit mixed-lab)
#   hack/site.sh --playbook playbooks/facts.yml   run this playbook instead of playbooks/site.yml
#   hack/site.sh --then playbooks/verify.yml   after site.yml, run more playbooks against the same cluster (repeatable)
#   hack/site.sh --keep                     leave the simulated cluster running at the end; "Next:" then uses it
#   hack/site.sh --kubeconfig FILE          against the cluster of FILE (a real one, or a simulated one kept by --keep)
#   KUBECONFIG=~/.kube/ocp hack/site.sh     against a real cluster (also K8S_AUTH_KUBECONFIG, K8S_AUTH_HOST)
# Anything after `--` goes to ansible-playbook, e.g. `hack/site.sh -- -e @vars.yml --check`.
# shellcheck source=hack/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
caller_dir=$PWD
# A path the user gave is relative to where they ran this from; the playbooks run from $ROOT.
absolute() { case "$1" in /*) echo "$1" ;; *) echo "$caller_dir/$1" ;; esac; }
# Shown relative to $ROOT where it lies inside it: the "Next:" commands run from $ROOT (cd there first).
shown() { case "$1" in "$ROOT"/*) echo "${1#"$ROOT"/}" ;; *) echo "$1" ;; esac; }
cd "$ROOT" || exit 1
profile="roce-lab"  # the simulator's default profile (SimulatedCluster, python -m simulator serve)
profile_given=false
vars_file=""
playbooks=("playbooks/site.yml")
real_kubeconfig=""
keep=false
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile="$2"; profile_given=true; shift 2 ;;
    --kubeconfig) real_kubeconfig="$(absolute "$2")"; shift 2 ;;
    --playbook) playbooks[0]="$(shown "$(absolute "$2")")"; shift 2 ;;
    --then) playbooks+=("$(shown "$(absolute "$2")")"); shift 2 ;;
    --vars) vars_file="$(shown "$(absolute "$2")")"; shift 2 ;;
    --keep) keep=true; shift ;;
    --) shift; extra=("$@"); break ;;
    # The header comment above is the help: every option is in it (tests/integration/test_site_sh.py checks).
    -h|--help) sed -n '2,/^# shellcheck/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) extra+=("$1"); shift ;;
  esac
done

started=$SECONDS
run_playbooks() {
  local pb rc=0
  for pb in "${playbooks[@]}"; do
    ansible-playbook "$pb" "$@" "${extra[@]}" || { rc=$?; failed_playbook="$pb"; return "$rc"; }
  done
}

check_mode=false
for arg in "${extra[@]}"; do
  case "$arg" in --check|-C) check_mode=true ;; esac
done

# "Next:" commands: each runnable as printed from $ROOT in a fresh shell (hack/site.sh sources hack/env.sh itself),
# with the variables and ansible-playbook arguments of this run, against the kept cluster when there is one.
next_command() {
  local cmd="hack/site.sh" arg
  if [ -n "$next_kubeconfig" ]; then
    cmd+=" --kubeconfig $next_kubeconfig"
  elif $profile_given; then
    cmd+=" --profile $profile"
  fi
  [ -n "$vars_file" ] && cmd+=" --vars $vars_file"
  [ $# -gt 0 ] && cmd+=" $*"
  if [ ${#next_extra[@]} -gt 0 ]; then
    cmd+=" --"
    for arg in "${next_extra[@]}"; do cmd+=" $(printf '%q' "$arg")"; done
  fi
  echo "$cmd"
}

summary() {
  local rc=$1 cluster=$2 arg
  # The user's ansible-playbook arguments carry over to the next commands, except check mode (the next step is the
  # real run).
  next_extra=()
  for arg in "${extra[@]}"; do
    case "$arg" in --check|-C|--diff|-D) ;; *) next_extra+=("$arg") ;; esac
  done
  echo
  echo "== Summary =="
  echo "Cluster:       $cluster"
  echo "Playbooks:     ${playbooks[*]}"
  echo "Variables:     ${vars_file:-none given}"
  if [ "$rc" -ne 0 ]; then
    echo "Result:        FAILED in $((SECONDS - started)) s in ${failed_playbook:-?} (rc $rc); the error is just above"
  elif $check_mode; then
    echo "Result:        check mode, nothing written, in $((SECONDS - started)) s (the play's last task shows what a run would do)"
  else
    echo "Result:        succeeded in $((SECONDS - started)) s (the play's last task shows what was installed and configured)"
  fi
  echo "Reports:       ${GPUDIRECT_ARTIFACTS_DIR:-$ROOT/artifacts}/ (facts, verification and, after a failure, diagnostics with summary.md)"
  echo "Next (run from $ROOT):"
  if [ "$rc" -ne 0 ]; then
    # Nothing after a failed step is worth running before its cause is fixed.
    echo "  the cause       the error above; docs/troubleshooting.md explains each message"
    echo "  run it again    $(next_command "${rerun_args[@]}")"
  elif $check_mode; then
    echo "  apply it        $(next_command "${rerun_args[@]}")"
  elif [ "${playbooks[-1]##*/}" = "teardown.yml" ]; then
    # Nothing is left to verify or gather facts for; what remains is installing again.
    if [ -n "$next_kubeconfig" ]; then
      echo "  install again   $(next_command --playbook playbooks/site.yml)"
    else
      echo "  install again   $(next_command)"
    fi
  else
    if [ -n "$next_kubeconfig" ]; then
      echo "  verify RDMA     $(next_command --playbook playbooks/verify.yml)"
      echo "  NIC/GPU facts   $(next_command --playbook playbooks/facts.yml)"
      echo "  tear down       $(next_command --playbook playbooks/teardown.yml)"
    else
      echo "  verify RDMA     $(next_command --then playbooks/verify.yml)"
      echo "  NIC/GPU facts   $(next_command --then playbooks/facts.yml)"
      echo "  tear down       $(next_command --then playbooks/teardown.yml)"
    fi
    echo "  a real cluster  KUBECONFIG=~/.kube/config hack/site.sh --vars my-vars.yml   (see docs/method-chooser.md)"
  fi
  echo "  every test      hack/test.sh"
}

# The playbooks of this run, as site.sh arguments, for "run it again".
rerun_args=(--playbook "${playbooks[0]}")
for pb in "${playbooks[@]:1}"; do rerun_args+=(--then "$pb"); done

if [ -n "$real_kubeconfig" ]; then
  export K8S_AUTH_KUBECONFIG="$real_kubeconfig"
fi
next_kubeconfig=""
if [ -n "${K8S_AUTH_KUBECONFIG:-}${K8S_AUTH_HOST:-}${KUBECONFIG:-}" ]; then
  echo ">> using the cluster given by K8S_AUTH_KUBECONFIG / K8S_AUTH_HOST / KUBECONFIG" >&2
  # The next commands name the same cluster the way this one was given.
  [ -n "$real_kubeconfig" ] && next_kubeconfig="$real_kubeconfig"
  rc=0
  run_playbooks ${vars_file:+-e "@$vars_file"} || rc=$?
  summary "$rc" "the one given by ${K8S_AUTH_KUBECONFIG:+K8S_AUTH_KUBECONFIG=$K8S_AUTH_KUBECONFIG}${K8S_AUTH_HOST:+K8S_AUTH_HOST=$K8S_AUTH_HOST}${KUBECONFIG:+KUBECONFIG=$KUBECONFIG}"
  exit "$rc"
fi

if [ -z "$vars_file" ]; then
  # A shipped profile has a variables file that fits its hardware; another profile (a YAML path, synthetic:...) needs --vars.
  vars_file="playbooks/vars/simulator/${profile%%@*}.yml"  # roce-lab@4.17.30: roce-lab's
  if [ ! -f "$vars_file" ]; then
    shipped=(playbooks/vars/simulator/*.yml)
    shipped=("${shipped[@]##*/}")
    echo "hack/site.sh: no default variables for profile $profile: give --vars FILE (playbooks/vars/simulator/ has" \
      "one per shipped profile: ${shipped[*]%.yml}; the examples in playbooks/vars/examples/ fit mixed-lab)" >&2
    exit 2
  fi
fi
simdir="${GPUDIRECT_SIM_DIR:-$ROOT/.cache/sim}"  # where the simulator keeps its kubeconfig and log
mkdir -p "$simdir"
rm -f "$simdir/ready"
echo ">> no cluster given: starting the simulated OpenShift cluster (profile $profile)" >&2
python -m simulator serve --profile "$profile" --kubeconfig "$simdir/kubeconfig" \
  --ready-file "$simdir/ready" >"$simdir/server.log" 2>&1 &
sim_pid=$!
$keep || trap 'kill "$sim_pid" 2>/dev/null; wait "$sim_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  [ -f "$simdir/ready" ] && break
  kill -0 "$sim_pid" 2>/dev/null || { cat "$simdir/server.log" >&2; exit 1; }
  sleep 0.1
done
[ -f "$simdir/ready" ] || { echo "simulator did not start; see $simdir/server.log" >&2; exit 1; }
export K8S_AUTH_KUBECONFIG="$simdir/kubeconfig"
# A kept cluster is the one the next commands use; without --keep it stops here, so they start a new one.
$keep && next_kubeconfig="$simdir/kubeconfig"
rc=0
run_playbooks -e "@$vars_file" || rc=$?
cluster=$(python - "$simdir/ready" <<'PY'
import json, sys
info = json.load(open(sys.argv[1])).get("profile") or {}
print("simulated OpenShift %s, profile %s: %s" % (info.get("openshift", "?"), info.get("name", "?"),
                                                 info.get("description", "")))
PY
)
summary "$rc" "$cluster"
if $keep; then
  echo
  echo "The simulated cluster keeps running (pid $sim_pid, log $simdir/server.log); the \"Next:\" commands use it."
  echo "ansible-playbook by hand needs the repository's environment first (a fresh shell has neither):"
  echo "  cd $ROOT && source hack/env.sh && set +euo pipefail && export K8S_AUTH_KUBECONFIG=$simdir/kubeconfig"
  echo "  ansible-playbook playbooks/verify.yml -e @$vars_file"
  echo "Stop it with: kill $sim_pid"
fi
exit "$rc"
