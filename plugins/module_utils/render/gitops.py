# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rendered objects as a kustomize tree that Argo CD (OpenShift GitOps) syncs: a base per layer, an overlay per
cluster (with a nested overlay per node group), a kustomization.yaml at each level, sync waves in the apply order of
the render (names.PHASES, the order apply_manifests and the roles follow), an InstallPlan approver for Manual
operators pinned by startingCSV, and Argo CD health checks (render/argocd_health.py). Pure: objects in, files out.

Argo CD applies a sync wave, then waits until every resource of it is Healthy before the next wave (argoproj/argo-cd
docs/user-guide/sync-waves.md); within a wave it orders by kind (Namespace, ServiceAccount, Role ... then custom
resources). A custom resource whose CRD an operator installs cannot be dry-run before that operator exists, so it
carries SkipDryRunOnMissingResource=true (docs/user-guide/sync-options.md).
"""


import copy

from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import argocd_health
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import groups
from ansible_collections.gpudirect.openshift.plugins.module_utils import names

SYNC_WAVE = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
SKIP_DRY_RUN = "SkipDryRunOnMissingResource=true"
KUSTOMIZATION = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}

# The layers, each a base directory, with the render phases it holds (every phase of names.PHASES is in one).
LAYERS = (
    ("operators", ("olm",)),
    ("operator-configuration", ("nfd", "sriov_operator", "nic_cluster_policy", "gpu_cluster_policy")),
    ("host-preparation", ("machineconfig",)),
    ("rdma-networks", ("sriov_pool", "sriov_policy", "network")),
    ("verification", ("verification",)),
)
# Phases whose objects differ per node group (a group's MachineConfigs, SR-IOV objects and networks); the others are
# rendered once for all groups (the NicClusterPolicy merges every group's, render/groups.py merge).
GROUP_PHASES = ("machineconfig", "sriov_pool", "sriov_policy", "network")
# The API groups whose CRDs the four operators install (OLM, MachineConfig and core kinds exist on every cluster).
OPERATOR_API_GROUPS = tuple(api.rpartition("/")[0] for api in (names.API_NFD, names.API_SRIOV, names.API_MELLANOX,
                                                               names.API_NVIDIA))

# The operators' own objects come before every phase; the verification Job after the last one. Both are derived from
# names.PHASES, the one definition of the apply order, as the file numbers are (wave x 100 + position).
OLM_WAVE = names.OLM_WAVE
VERIFICATION_WAVE = names.VERIFICATION_WAVE

# The OpenShift "cli" image stream, which every cluster serves from its internal registry (the catalog's jobs use it:
# redhat-cop/gitops-catalog advanced-cluster-security-operator/instance/base/create-cluster-init-bundle-job.yaml). It
# has sh and kubectl (openshift/oc images/cli/Dockerfile.rhel links kubectl to oc).
DEFAULT_APPROVER_IMAGE = "image-registry.openshift-image-registry.svc:5000/openshift/cli:latest"
APPROVER_NAME = "gpudirect-installplan-approver"
VERIFICATION_NAME = "gpudirect-rdma-verify"

# The approver's script: approve the one InstallPlan of the namespace that lists the pinned CSV, and nothing else. OLM
# names the CSVs a plan installs in spec.clusterServiceVersionNames and waits for spec.approved with Manual approval
# (operator-framework/api pkg/operators/v1alpha1/installplan_types.go). The plan appears once OLM resolved the
# Subscription, so the script polls; the Job's backoffLimit bounds the retries. A plan for any other CSV (an upgrade
# OLM offers later) is left for a person, or for a new pin in Git.
APPROVER_SCRIPT = """set -eu
for attempt in $(seq 1 "${ATTEMPTS:-60}"); do
  kubectl get installplans.operators.coreos.com -n "$NAMESPACE" \\
    -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.approved}{" "}\
{.spec.clusterServiceVersionNames[*]}{"\\n"}{end}' > /tmp/plans
  while read -r plan approved csvs; do
    case " $csvs " in
      *" $CSV "*)
        if [ "$approved" = "true" ]; then echo "InstallPlan $plan of $CSV is approved"; exit 0; fi
        kubectl patch installplans.operators.coreos.com "$plan" -n "$NAMESPACE" --type=merge \
-p '{"spec":{"approved":true}}'
        echo "approved InstallPlan $plan of $CSV"; exit 0;;
    esac
  done < /tmp/plans
  echo "attempt $attempt: no InstallPlan of $CSV in $NAMESPACE yet"
  sleep "${INTERVAL:-10}"
done
echo "no InstallPlan of $CSV appeared in $NAMESPACE" >&2
exit 1
"""


def sync_wave(phase):
    """The Argo CD sync wave of a render phase: its base in names.PHASES (10, 20, ...), the OLM objects before them."""
    if phase == "olm":
        return OLM_WAVE
    if phase == "verification":
        return VERIFICATION_WAVE
    return names.PHASE_BASE[phase]


def needs_skip_dry_run(manifest):
    return manifest.get("apiVersion", "").rpartition("/")[0] in OPERATOR_API_GROUPS


def annotated(manifest, phase):
    """A copy of ``manifest`` with its sync wave and, for an operator's custom resource, SkipDryRunOnMissingResource."""
    manifest = copy.deepcopy(manifest)
    annotations = manifest.setdefault("metadata", {}).setdefault("annotations", {})
    annotations[SYNC_WAVE] = str(sync_wave(phase))
    if needs_skip_dry_run(manifest):
        annotations[SYNC_OPTIONS] = SKIP_DRY_RUN
    return manifest


def _pins(olm_entries):
    """(package, namespace, approval, startingCSV, first number of the operator's block) of each rendered
    Subscription."""
    for entry in olm_entries or []:
        manifest = entry["manifest"]
        if manifest["kind"] == "Subscription":
            spec = manifest["spec"]
            block = entry.get("order", 0) - entry.get("order", 0) % names.OLM_BLOCK
            yield (spec["name"], manifest["metadata"]["namespace"], spec.get("installPlanApproval"),
                   spec.get("startingCSV"), block)


def approval_errors(olm_entries, operators=None):
    """Each Manual Subscription needs its pin: without startingCSV nothing says which InstallPlan to approve."""
    roles = {entry.get("package"): entry.get("role") for entry in operators or catalogue.OPERATORS}
    errors = []
    for package, _namespace, approval, csv, _block in _pins(olm_entries):
        if approval == "Manual" and not csv:
            role = roles.get(package) or package
            errors.append("%s_starting_csv: Manual approval in the GitOps tree needs the CSV to approve; set it (e.g. "
                          "%s.v<version>) or set %s_install_plan_approval=Automatic" % (role, package, role))
    return errors


def approver_objects(olm_entries, image):
    """ServiceAccount, Role (get/list/patch on installplans of its own namespace only), RoleBinding and Job per Manual
    Subscription pinned by startingCSV, in its namespace (the catalog's installplan-approver approves every plan of the
    namespace: redhat-cop/gitops-catalog installplan-approver/base; this one approves only the pin)."""
    return [manifest for _order, manifest in _numbered_approver_objects(olm_entries, image)]


def _numbered_approver_objects(olm_entries, image):
    """[(file number, manifest)] of approver_objects: in the operator's block from names.OLM_APPROVER_POSITION on."""
    numbered = []
    labels = {names.MANAGED_BY_LABEL: names.MANAGED_BY_VALUE}
    for _package, namespace, approval, csv, block in _pins(olm_entries):
        if approval != "Manual" or not csv:
            continue
        meta = {"name": APPROVER_NAME, "namespace": namespace, "labels": dict(labels)}
        objects = [
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(meta)},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": dict(meta),
             "rules": [{"apiGroups": ["operators.coreos.com"], "resources": ["installplans"],
                        "verbs": ["get", "list", "patch"]}]},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": dict(meta),
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": APPROVER_NAME},
             "subjects": [{"kind": "ServiceAccount", "name": APPROVER_NAME, "namespace": namespace}]},
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": dict(meta),
             "spec": {"backoffLimit": 3, "template": {"spec": {
                 "serviceAccountName": APPROVER_NAME, "restartPolicy": "Never",
                 "containers": [{"name": "approve", "image": image, "command": ["/bin/sh", "-c", APPROVER_SCRIPT],
                                 "env": [{"name": "NAMESPACE", "value": namespace},
                                         {"name": "CSV", "value": csv}]}]}}}},
        ]
        numbered.extend((block + names.OLM_APPROVER_POSITION + index, manifest)
                        for index, manifest in enumerate(objects))
    return numbered


def verification_job(workload):
    """A Job from the rail pod template (render/workload.py) that asks every rail's resource and network and lists the
    RDMA devices the pod got: it completes only once the resources are allocatable and the networks attach."""
    pod = copy.deepcopy((workload or {}).get("manifest") or {})
    if not pod:
        return None
    spec = pod["spec"]
    container = spec["containers"][0]
    container.update({"name": "verify", "image": DEFAULT_APPROVER_IMAGE,
                      "command": ["/bin/sh", "-c", "ls -l /dev/infiniband && test -n \"$(ls /dev/infiniband)\""]})
    container.pop("env", None)
    meta = pod["metadata"]
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": VERIFICATION_NAME, "namespace": meta["namespace"],
                         "labels": {names.MANAGED_BY_LABEL: names.MANAGED_BY_VALUE}},
            "spec": {"backoffLimit": 6, "template": {"metadata": {"annotations": dict(meta.get("annotations") or {})},
                                                     "spec": spec}}}


def node_group_owners(variables):
    """{object key: node group} of the objects only one group renders in a GROUP_PHASES phase (empty without groups)."""
    if not groups.given(variables or {}):
        return {}
    from ansible_collections.gpudirect.openshift.plugins.module_utils.render import model as input_model
    from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_objects
    models, errors, _warnings = groups.build(variables, require_facts=True)
    if errors:
        return {}
    owners = {}
    for model in models:
        for phase, manifest in render_objects(model, input_model.Errors()):
            if phase in GROUP_PHASES:
                owners.setdefault(names.object_key(manifest), set()).add(model["node_group"])
    return {key: sorted(found)[0] for key, found in owners.items() if len(found) == 1}


def gitops_tree(olm_entries, manifests, workload=None, cluster="cluster", owners=None,
                approver_image=DEFAULT_APPROVER_IMAGE):
    """[{"path", "manifest"}] of the whole tree, in a stable order: every rendered object annotated, in the base of its
    layer (or its node group's overlay), the approver beside the OLM objects, the verification Job, a kustomization.yaml
    per directory, the Argo CD health checks and an example Application. ``olm_entries`` and ``manifests`` are what
    olm.olm_manifests and plan.render_all return; ``owners`` is node_group_owners(variables)."""
    owners = owners or {}
    directories = {}  # directory -> [file names]
    files = []

    def add(directory, name, manifest):
        directories.setdefault(directory, []).append(name)
        files.append({"path": "%s/%s" % (directory, name), "manifest": manifest})

    layer_of = {phase: layer for layer, phases in LAYERS for phase in phases}
    for entry in olm_entries or []:
        add("bases/operators", entry["file"], annotated(entry["manifest"], "olm"))
    for order, manifest in _numbered_approver_objects(olm_entries, approver_image):
        add("bases/operators", names.numbered_file_name(order, manifest), annotated(manifest, "olm"))
    group_dirs = []
    for entry in manifests:
        manifest = annotated(entry["manifest"], entry["phase"])
        group = owners.get(names.object_key(entry["manifest"]))
        if group is not None:
            directory = "overlays/%s/node-groups/%s" % (cluster, names.kebab(group))
            if directory not in group_dirs:
                group_dirs.append(directory)
        else:
            directory = "bases/%s" % layer_of[entry["phase"]]
        add(directory, entry["file"], manifest)
    job = verification_job(workload)
    if job:
        add("bases/verification", names.numbered_file_name(names.verification_order(), job),
            annotated(job, "verification"))
    bases = ["bases/%s" % layer for layer, _phases in LAYERS if "bases/%s" % layer in directories]
    tree = []
    for directory in bases + group_dirs:
        tree.append({"path": directory + "/kustomization.yaml",
                     "manifest": dict(KUSTOMIZATION, resources=list(directories[directory]))})
    overlay = "overlays/%s" % cluster
    tree.append({"path": overlay + "/kustomization.yaml", "manifest": dict(
        KUSTOMIZATION, resources=["../../%s" % base for base in bases] + [d[len(overlay) + 1:] for d in group_dirs])})
    for name, manifest in argocd_health.argocd_files(cluster):
        tree.append({"path": "argocd/%s" % name, "manifest": manifest})
    return files + tree
