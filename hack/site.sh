#!/usr/bin/env bash
# Runs the main job, playbooks/site.yml, and ends with a short summary.
#   hack/site.sh                            against the embedded simulated cluster (started here, stopped at the end)
#   hack/site.sh --profile infiniband-lab   choose the simulated hardware profile (default roce-lab, as the simulator's)
#   hack/site.sh --vars FILE                the gpudirect_rdma_* variables (simulator default: playbooks/vars/simulator/
#                                           <profile>.yml, which fits that profile; the examples fit mixed-lab)
#   hack/site.sh --then playbooks/verify.yml   after site.yml, run more playbooks against the same cluster (repeatable)
#   hack/site.sh --keep                     leave the simulated cluster running at the end and say how to reach it
#   KUBECONFIG=~/.kube/ocp hack/site.sh     against a real cluster (also K8S_AUTH_KUBECONFIG, K8S_AUTH_HOST, --kubeconfig)
# Anything after `--` goes to ansible-playbook, e.g. `hack/site.sh -- -e @vars.yml --check`.
# shellcheck source=hack/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT" || exit 1
profile="roce-lab"  # the simulator's default profile (SimulatedCluster, python -m simulator serve)
vars_file=""
playbooks=("playbooks/site.yml")
real_kubeconfig=""
keep=false
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile="$2"; shift 2 ;;
    --kubeconfig) real_kubeconfig="$2"; shift 2 ;;
    --playbook) playbooks[0]="$2"; shift 2 ;;
    --then) playbooks+=("$2"); shift 2 ;;
    --vars) vars_file="$2"; shift 2 ;;
    --keep) keep=true; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
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

summary() {
  local rc=$1 cluster=$2
  echo
  echo "== Summary =="
  echo "Cluster:       $cluster"
  echo "Playbooks:     ${playbooks[*]}"
  echo "Variables:     ${vars_file:-none given}"
  if [ "$rc" -eq 0 ]; then
    echo "Result:        succeeded in $((SECONDS - started)) s (the play's last task shows what was installed and configured)"
  else
    echo "Result:        FAILED in $((SECONDS - started)) s in ${failed_playbook:-?} (rc $rc); the error is just above"
  fi
  echo "Reports:       $ROOT/artifacts/ (facts, verification and, after a failure, diagnostics with summary.md)"
  echo "Next:"
  echo "  verify RDMA     hack/site.sh ${profile_args}--then playbooks/verify.yml"
  echo "  NIC/GPU facts   hack/site.sh ${profile_args}--playbook playbooks/facts.yml"
  echo "  tear down       hack/site.sh ${profile_args}--then playbooks/teardown.yml"
  echo "  a real cluster  KUBECONFIG=~/.kube/config hack/site.sh --vars my-vars.yml   (see docs/method-chooser.md)"
  echo "  every test      hack/test.sh"
}

if [ -n "$real_kubeconfig" ]; then
  export K8S_AUTH_KUBECONFIG="$real_kubeconfig"
fi
profile_args=""
if [ -n "${K8S_AUTH_KUBECONFIG:-}${K8S_AUTH_HOST:-}${KUBECONFIG:-}" ]; then
  echo ">> using the cluster given by K8S_AUTH_KUBECONFIG / K8S_AUTH_HOST / KUBECONFIG" >&2
  rc=0
  run_playbooks ${vars_file:+-e "@$vars_file"} || rc=$?
  summary "$rc" "the one given by ${K8S_AUTH_KUBECONFIG:+K8S_AUTH_KUBECONFIG=$K8S_AUTH_KUBECONFIG}${K8S_AUTH_HOST:+K8S_AUTH_HOST=$K8S_AUTH_HOST}${KUBECONFIG:+KUBECONFIG=$KUBECONFIG}"
  exit "$rc"
fi

[ "$profile" = "roce-lab" ] || profile_args="--profile $profile "
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
  echo "The simulated cluster keeps running (pid $sim_pid, log $simdir/server.log). Use it with:"
  echo "  export K8S_AUTH_KUBECONFIG=$simdir/kubeconfig   # then ansible-playbook playbooks/verify.yml -e @<vars file>"
  echo "Stop it with: kill $sim_pid"
fi
exit "$rc"
