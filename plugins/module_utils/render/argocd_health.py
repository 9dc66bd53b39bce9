# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Argo CD health checks (Lua) for the kinds whose readiness Argo CD does not know, written from the readiness rules
of the collection's waits (render/waits.py), rule for rule, and shipped in the GitOps tree (render/gitops.py).

Argo CD runs a check with the live object as ``obj`` and reads the returned table's ``status`` (Healthy, Progressing,
Degraded ...) and ``message`` (argoproj/argo-cd docs/operator-manual/health.md, "Custom Health Checks"); the key in
argocd-cm is ``resource.customizations.health.<group>_<kind>``. Argo CD evaluates them with gopher-lua (Lua 5.1).

How each check corresponds to the wait (a wait evaluates success first, then its failure condition, then reports
progress; cluster/conditions.py): Healthy is the wait's condition, Degraded its failure condition with its failure
message, Progressing everything else with its progress text. Where a wait reads several objects (the ClusterPolicy
and SR-IOV node state waits list them), the check is the same rule on the one object Argo CD shows. Parts of a wait
that need the rendered plan (which MachineConfigs a pool's rendered config must contain, which policies a node
state must carry) cannot be known by a check on one live object and are left out; the tests
(tests/unit/plugins/module_utils/render/test_argocd_health.py) run both on the same real status fixtures.
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils import names

# Helpers every check starts with (Lua 5.1: no goto, no integer division).
_PRELUDE = """local hs = {status = "Progressing", message = ""}
local function condition(conditions, kind)
  if conditions == nil then return nil end
  for _, c in ipairs(conditions) do
    if c.type == kind then return c end
  end
  return nil
end
local function is_true(c) return c ~= nil and c.status == "True" end
local function nonempty(s) return s ~= nil and s ~= "" end
"""

# waits.nic_cluster_policy_wait: ready when state is ready; failed when state is ignore (with status.reason) or a
# component is error, or notReady with a message (NCP_FAILING_STATES); progress names the components not ready.
NIC_CLUSTER_POLICY = _PRELUDE + """local status = obj.status or {}
if status.state == "ready" then
  hs.status = "Healthy"; hs.message = "ready"; return hs
end
if status.state == "ignore" then
  hs.status = "Degraded"
  hs.message = "ignored by the Network Operator: " .. (status.reason or "no reason given")
  return hs
end
local failing, blocking = {}, {}
for _, s in ipairs(status.appliedStates or {}) do
  if s.state == "error" or (s.state == "notReady" and nonempty(s.message)) then
    table.insert(failing, s.name .. ": " .. (s.message or "no message"))
  elseif s.state ~= "ready" and s.state ~= "ignore" then
    table.insert(blocking, s.name .. ": " .. tostring(s.state))
  end
end
if #failing > 0 then
  hs.status = "Degraded"; hs.message = table.concat(failing, "; "); return hs
end
hs.message = (#blocking > 0) and table.concat(blocking, ", ") or ("state " .. tostring(status.state or "not reported"))
return hs
"""

# waits.cluster_policy_wait on the collection's one ClusterPolicy: ready when state is ready; failed when the
# operator ignores it or an Error condition has reason ReconcileFailed (Error with OperandNotReady is progress).
CLUSTER_POLICY = _PRELUDE + """local status = obj.status or {}
if status.state == "ready" then
  hs.status = "Healthy"; hs.message = "ready"; return hs
end
if status.state == "ignored" then
  hs.status = "Degraded"
  hs.message = "ignored by the GPU Operator, which drives another ClusterPolicy (it reconciles only one)"
  return hs
end
local err = condition(status.conditions, "Error")
if is_true(err) and err.reason == "ReconcileFailed" then
  hs.status = "Degraded"; hs.message = err.message or "ReconcileFailed"; return hs
end
hs.message = status.state or "no status yet"
return hs
"""

# waits.sriov_node_states_settled_wait and sriov_interfaces_reported_wait on one node state: healthy when syncStatus
# is Succeeded, both drain annotations Idle and the daemon reported its interfaces; failed on SRIOV_FAILING (Failed,
# or InProgress with lastSyncError: on OpenShift a failed apply stays InProgress with the error).
SRIOV_NODE_STATE = _PRELUDE + """local status = obj.status or {}
local annotations = (obj.metadata or {}).annotations or {}
local desired = annotations["sriovnetwork.openshift.io/desired-state"] or "Idle"
local current = annotations["sriovnetwork.openshift.io/current-state"] or "Idle"
local interfaces = status.interfaces or {}
if status.syncStatus == "Succeeded" and desired == "Idle" and current == "Idle" and #interfaces > 0 then
  hs.status = "Healthy"; hs.message = "Succeeded"; return hs
end
if status.syncStatus == "Failed" or (status.syncStatus == "InProgress" and nonempty(status.lastSyncError)) then
  hs.status = "Degraded"
  local text = nonempty(status.lastSyncError) and status.lastSyncError or "no error text"
  hs.message = tostring((obj.metadata or {}).name) .. ": " .. tostring(status.syncStatus) .. ": " .. text
  return hs
end
hs.message = (status.syncStatus or "not reported") .. ", drain " .. desired .. "/" .. current .. ", " .. \
#interfaces .. " interfaces"
return hs
"""

# waits.machineconfig_pool_wait without the rendered-config sources (they need the plan): healthy when the pool
# observed its generation, runs its target rendered config, is Updated and every machine is updated; failed on
# MCP_FAILING (Degraded, NodeDegraded or RenderDegraded True, or paused) with MCP_FAILURE_MESSAGE's order of texts.
MACHINE_CONFIG_POOL = _PRELUDE + """local status = obj.status or {}
local spec = obj.spec or {}
local meta = obj.metadata or {}
local conditions = status.conditions
local updated = condition(conditions, "Updated")
if status.observedGeneration == meta.generation and (status.configuration or {}).name ~= nil
   and (status.configuration or {}).name == (spec.configuration or {}).name and is_true(updated)
   and status.updatedMachineCount == status.machineCount then
  hs.status = "Healthy"; hs.message = tostring(status.updatedMachineCount) .. "/" .. \
tostring(status.machineCount) .. " nodes updated"
  return hs
end
local degraded = condition(conditions, "Degraded")
local node = condition(conditions, "NodeDegraded")
local render = condition(conditions, "RenderDegraded")
if is_true(degraded) or is_true(node) or is_true(render) or spec.paused == true then
  hs.status = "Degraded"
  -- A table with nil holes stops ipairs, so each condition is looked at by name.
  local texts = {}
  local function add(c, field)
    if is_true(c) and nonempty(c[field]) then table.insert(texts, c[field]) end
  end
  add(node, "message"); add(render, "message"); add(degraded, "message")
  add(node, "reason"); add(degraded, "reason")
  if spec.paused == true then
    table.insert(texts, "the pool is paused (spec.paused: true), so the Machine Config Operator does not roll out "
      .. ((spec.configuration or {}).name or "the new rendered config") .. "; set spec.paused to false")
  end
  hs.message = texts[1] or "Degraded without a message"
  return hs
end
hs.message = tostring(status.updatedMachineCount or 0) .. "/" .. tostring(status.machineCount or 0) .. " nodes updated"
return hs
"""

# waits.network_cr_wait on one network: ready when status.state is ready, failed when it is error (status.reason).
NETWORK = _PRELUDE + """local status = obj.status or {}
if status.state == "ready" then
  hs.status = "Healthy"; hs.message = "ready"; return hs
end
if status.state == "error" then
  hs.status = "Degraded"; hs.message = status.reason or "no reason given"; return hs
end
hs.message = "state " .. tostring(status.state or "not reported")
return hs
"""

# (API group, kind, check): the kinds of the tree, and those it makes the operators create, whose readiness Argo CD
# does not know. SriovNetwork, SriovIBNetwork, SriovNetworkNodePolicy and MachineConfig carry no status to judge.
CHECKS = (
    (names.API_MELLANOX.rpartition("/")[0], "NicClusterPolicy", NIC_CLUSTER_POLICY),
    (names.API_NVIDIA.rpartition("/")[0], "ClusterPolicy", CLUSTER_POLICY),
    (names.API_SRIOV.rpartition("/")[0], "SriovNetworkNodeState", SRIOV_NODE_STATE),
    (names.API_MCO.rpartition("/")[0], "MachineConfigPool", MACHINE_CONFIG_POOL),
) + tuple((names.API_MELLANOX.rpartition("/")[0], kind, NETWORK)
          for kind in ("MacvlanNetwork", "IPoIBNetwork", "HostDeviceNetwork"))


def config_key(group, kind):
    return "resource.customizations.health.%s_%s" % (group, kind)


def argocd_cm_patch():
    """A strategic-merge patch of argocd-cm (upstream Argo CD) with every check."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "argocd-cm"},
            "data": {config_key(group, kind): check for group, kind, check in CHECKS}}


def openshift_gitops_patch():
    """The same checks for OpenShift GitOps, whose operator owns argocd-cm and writes it from the ArgoCD resource's
    spec.resourceHealthChecks (argoproj-labs/argocd-operator api/v1beta1 argocd_types.go ResourceHealthCheck)."""
    return {"apiVersion": "argoproj.io/v1beta1", "kind": "ArgoCD",
            "metadata": {"name": "openshift-gitops", "namespace": "openshift-gitops"},
            "spec": {"resourceHealthChecks": [{"group": group, "kind": kind, "check": check}
                                              for group, kind, check in CHECKS]}}


def application(cluster):
    """An example Application for one cluster's overlay; repoURL and the revision are the user's."""
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "gpudirect-rdma-%s" % cluster, "namespace": "openshift-gitops"},
            "spec": {"project": "default",
                     "source": {"repoURL": "https://git.example.com/your/repo.git", "targetRevision": "main",
                                "path": "overlays/%s" % cluster},
                     "destination": {"server": "https://kubernetes.default.svc"},
                     # An operator's CRDs appear only once its CSV installed: a sync retries until they exist.
                     "syncPolicy": {"automated": {"prune": False, "selfHeal": True},
                                    "retry": {"limit": 5,
                                              "backoff": {"duration": "5s", "factor": 2, "maxDuration": "3m"}}}}}


def application_set():
    """An example ApplicationSet: one Application per overlays/<cluster> directory, each sent to the Argo CD cluster
    secret of the same name."""
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
            "metadata": {"name": "gpudirect-rdma", "namespace": "openshift-gitops"},
            "spec": {"generators": [{"git": {"repoURL": "https://git.example.com/your/repo.git", "revision": "main",
                                             "directories": [{"path": "overlays/*"}]}}],
                     "template": {"metadata": {"name": "gpudirect-rdma-{{path.basename}}"},
                                  "spec": {"project": "default",
                                           "source": {"repoURL": "https://git.example.com/your/repo.git",
                                                      "targetRevision": "main", "path": "{{path}}"},
                                           "destination": {"name": "{{path.basename}}"},
                                           "syncPolicy": {"automated": {"prune": False, "selfHeal": True},
                                                          "retry": {"limit": 5,
                                                                    "backoff": {"duration": "5s", "factor": 2,
                                                                                "maxDuration": "3m"}}}}}}}


def argocd_files(cluster):
    """[(file name, manifest)] of the argocd/ directory of the tree (not part of any kustomization: applied once to Argo
    CD)."""
    return [("argocd-cm-health-patch.yaml", argocd_cm_patch()),
            ("openshift-gitops-argocd-health-patch.yaml", openshift_gitops_patch()),
            ("application-%s.yaml" % cluster, application(cluster)),
            ("applicationset.yaml", application_set())]
