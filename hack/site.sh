#!/usr/bin/env bash
# Runs the main job, playbooks/site.yml.
#   hack/site.sh                         against the embedded simulated cluster (started and stopped here)
#   hack/site.sh --profile infiniband-lab   choose the simulated hardware profile
#   hack/site.sh --vars FILE             the gpudirect_rdma_* variables (simulator default: example 1, shared device RoCE)
#   KUBECONFIG=~/.kube/ocp hack/site.sh  against a real cluster (also K8S_AUTH_KUBECONFIG, K8S_AUTH_HOST, --kubeconfig)
# Anything after `--` goes to ansible-playbook, e.g. `hack/site.sh -- -e @vars.yml --check`.
# shellcheck source=hack/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT" || exit 1
profile="mixed-lab"
vars_file=""
playbook="playbooks/site.yml"
real_kubeconfig=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile="$2"; shift 2 ;;
    --kubeconfig) real_kubeconfig="$2"; shift 2 ;;
    --playbook) playbook="$2"; shift 2 ;;
    --vars) vars_file="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) extra+=("$1"); shift ;;
  esac
done

if [ -n "$real_kubeconfig" ]; then
  export K8S_AUTH_KUBECONFIG="$real_kubeconfig"
fi
if [ -n "${K8S_AUTH_KUBECONFIG:-}${K8S_AUTH_HOST:-}${KUBECONFIG:-}" ]; then
  echo ">> using the cluster given by K8S_AUTH_KUBECONFIG / K8S_AUTH_HOST / KUBECONFIG" >&2
  exec ansible-playbook "$playbook" ${vars_file:+-e "@$vars_file"} "${extra[@]}"
fi

simdir="$ROOT/.cache/sim"
mkdir -p "$simdir"
rm -f "$simdir/ready"
echo ">> no cluster given: starting the simulated OpenShift cluster (profile $profile)" >&2
python -m simulator serve --profile "$profile" --kubeconfig "$simdir/kubeconfig" \
  --ready-file "$simdir/ready" >"$simdir/server.log" 2>&1 &
sim_pid=$!
trap 'kill "$sim_pid" 2>/dev/null; wait "$sim_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  [ -f "$simdir/ready" ] && break
  kill -0 "$sim_pid" 2>/dev/null || { cat "$simdir/server.log" >&2; exit 1; }
  sleep 0.1
done
[ -f "$simdir/ready" ] || { echo "simulator did not start; see $simdir/server.log" >&2; exit 1; }
export K8S_AUTH_KUBECONFIG="$simdir/kubeconfig"
ansible-playbook "$playbook" -e "@${vars_file:-playbooks/vars/examples/1-shared-device-roce.yml}" "${extra[@]}"
