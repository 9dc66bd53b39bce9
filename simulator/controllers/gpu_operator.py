"""NVIDIA GPU Operator: ClusterPolicy -> GPU node labels (deploy + feature discovery) and nvidia.com/gpu capacity."""

from . import operands
from ._base import OperatorController, profile_node, set_condition, update_node

GROUP = "nvidia.com"
GPU_NODE_LABELS = ("feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/pci-0302_10de.present",
                   "feature.node.kubernetes.io/pci-0300_10de.present")
MOFED_WAIT = "network.nvidia.com/operator.mofed.wait"
STATE_LABEL = None  # the GPU Operator marks its operands by their ownerReference to the ClusterPolicy only
# GPU operator release -> (driver version, CUDA version) it deploys by default.
DRIVERS = {"24.9": ("550.127.08", "12.4"), "25.3": ("570.172.08", "12.8")}
# PCI device ID -> (family, compute capability)
GPU_ARCH = {"2330": ("hopper", "9.0"), "2335": ("hopper", "9.0"), "2331": ("hopper", "9.0"), "20b2": ("ampere", "8.0"),
            "20b5": ("ampere", "8.0"), "2235": ("ampere", "8.6"), "26b9": ("ada-lovelace", "8.9")}
# ClusterPolicy spec key -> component of nvidia.com/gpu.deploy.<component>
DEPLOY = (("driver", "driver"), ("toolkit", "container-toolkit"), ("devicePlugin", "device-plugin"),
          ("gfd", "gpu-feature-discovery"), ("dcgm", "dcgm"), ("dcgmExporter", "dcgm-exporter"),
          ("nodeStatusExporter", "node-status-exporter"), ("validator", "operator-validator"),
          ("migManager", "mig-manager"))


def _enabled(spec, key):
    section = spec.get(key)
    if section is None:
        return key in ("validator",)
    return section.get("enabled", True) if isinstance(section, dict) else bool(section)


def gfd_labels(pnode, driver, cuda, spec):
    gpu = pnode.gpus[0]
    family, compute = GPU_ARCH.get(gpu.device_id, ("unknown", "0.0"))
    dmaj, dmin, drev = (driver.split(".") + ["0", "0"])[:3]
    cmaj, cmin = cuda.split(".")
    labels = {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": gpu.model.replace(" ", "-"),
        "nvidia.com/gpu.count": str(len(pnode.gpus)),
        "nvidia.com/gpu.memory": str(gpu.memory_mib),
        "nvidia.com/gpu.family": family,
        "nvidia.com/gpu.compute.major": compute.split(".")[0],
        "nvidia.com/gpu.compute.minor": compute.split(".")[1],
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/gpu.machine": pnode.name.split(".")[0],
        "nvidia.com/cuda.driver.major": dmaj, "nvidia.com/cuda.driver.minor": dmin, "nvidia.com/cuda.driver.rev": drev,
        "nvidia.com/cuda.driver-version.major": dmaj, "nvidia.com/cuda.driver-version.minor": dmin,
        "nvidia.com/cuda.driver-version.revision": drev, "nvidia.com/cuda.driver-version.full": driver,
        "nvidia.com/cuda.runtime.major": cmaj, "nvidia.com/cuda.runtime.minor": cmin,
        "nvidia.com/cuda.runtime-version.major": cmaj, "nvidia.com/cuda.runtime-version.minor": cmin,
        "nvidia.com/cuda.runtime-version.full": cuda,
        "nvidia.com/mig.capable": "true" if family in ("hopper", "ampere") and compute != "8.6" else "false",
        "nvidia.com/mig.strategy": ((spec.get("mig") or {}).get("strategy") or "single"),
    }
    if _enabled(spec, "migManager"):
        labels["nvidia.com/mig.config"] = ((spec.get("migManager") or {}).get("config") or {}).get("default") or "all-disabled"
    return labels


class GpuOperatorController(OperatorController):
    package = "gpu-operator-certified"
    watched = ((GROUP, "clusterpolicies"), ("apps", "daemonsets"))
    watch_nodes = True

    def __init__(self, rt):
        super().__init__(rt)
        self.labelled = set()

    def _release(self, operator_namespace):
        version = None
        for csv in self.rt.list("operators.coreos.com", "clusterserviceversions", operator_namespace):
            if self.rt.catalog.package_of_csv(csv["metadata"]["name"]) == self.package:
                version = (csv.get("spec") or {}).get("version", "")
        return ".".join((version or "25.3").split(".")[:2])

    def _driver(self, operator_namespace):
        return DRIVERS.get(self._release(operator_namespace), DRIVERS["25.3"])

    def reconcile(self, operator_namespace):
        policies = sorted(self.rt.list(GROUP, "clusterpolicies"),
                          key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))  # getSingletonClusterPolicy
        policies = [p for p in policies if not p["metadata"].get("deletionTimestamp")]
        if not policies:
            return
        active = policies[0]
        # One ClusterPolicy drives the cluster. The others are "ignored" only in the operator's memory: it sets the state
        # on its copy and never writes it (gpu-operator controllers/clusterpolicy_controller.go, Reconcile, v26.7.0), so
        # they keep whatever status they had, usually none.
        self._reconcile_policy(active, operator_namespace)

    def _write(self, policy, state, reason, ready, message, operator_namespace):
        """internal/conditions/clusterpolicy.go updateConditions: Ready True with Error False (reason Ready), or Ready
        False (reason Error) with Error True carrying the reason and message."""
        conditions = (policy.get("status") or {}).get("conditions")
        if ready == "True":
            conditions = set_condition(conditions, "Ready", "True", reason, message)
            conditions = set_condition(conditions, "Error", "False", "Ready", "")
        else:
            conditions = set_condition(conditions, "Ready", "False", "Error", "")
            conditions = set_condition(conditions, "Error", "True", reason, message)
        status = {"state": state, "namespace": operator_namespace, "conditions": conditions}
        if status != (policy.get("status") or {}):
            self.rt.set_status(GROUP, "clusterpolicies", None, policy["metadata"]["name"], status)

    def _gpu_nodes(self):
        out = []
        for node in self.rt.list("", "nodes"):
            labels = node["metadata"].get("labels") or {}
            if any(labels.get(k) == "true" for k in GPU_NODE_LABELS):
                pnode = profile_node(self.rt, node["metadata"]["name"])
                if pnode is not None and pnode.gpus:
                    out.append((node, pnode))
        return out

    def _reconcile_policy(self, policy, operator_namespace):
        spec = policy.get("spec") or {}
        meta = policy["metadata"]
        nodes = self._gpu_nodes()
        if not nodes:
            self._write(policy, "ready", "NFDLabelsMissing", "True", "No NFD labels found", operator_namespace)
            return
        deploy = {"nvidia.com/gpu.deploy.%s" % comp: "true" for key, comp in DEPLOY if _enabled(spec, key)}
        for node, pnode in nodes:
            update_node(self.rt, pnode.name, set_labels=dict(deploy, **{"nvidia.com/gpu.present": "true"}))
        rdma = (spec.get("driver") or {}).get("rdma") or {}
        if rdma.get("enabled") and not rdma.get("useHostMofed"):
            waiting = [p.name for n, p in nodes if (n["metadata"].get("labels") or {}).get(MOFED_WAIT) != "false"]
            if waiting:
                self._write(policy, "notReady", "OperandNotReady", "False",
                            "nvidia-driver-daemonset on %s: init container mofed-validation waiting for the NVIDIA "
                            "network operator driver (driver.rdma.enabled=true)" % ", ".join(sorted(waiting)),
                            operator_namespace)
                return
        failure = self.rt.operator_faults().get("gpu_policy_reconcile_failure")
        if failure:
            # A state whose objects cannot be applied: notReady, Error=True reason ReconcileFailed.
            self._write(policy, "notReady", "ReconcileFailed", "False", "Failed to reconcile %s: %s" % (
                failure.get("state", "state-driver"), failure.get("message", "")), operator_namespace)
            return
        # The operands (assets/state-*; controllers/object_controls.go isDaemonSetReady via the state manager): the
        # policy is ready once every state's DaemonSets are.
        groups = operands.gpu_operands(policy, operator_namespace, [n for n, _p in nodes], self._release(operator_namespace), _enabled)
        current = operands.ensure(self.rt, policy, groups, STATE_LABEL)
        upgrade = (spec.get("driver") or {}).get("upgradePolicy") or {}
        workloads = getattr(self.rt, "workloads", None)
        for obj in current.get("state-driver", ()):
            # OnDelete driver DaemonSet: the operator's upgrade controller replaces outdated pods
            # (controllers/upgrade_controller.go), maxParallelUpgrades at a time.
            if workloads is not None:
                workloads.on_delete_upgrades[(obj["metadata"]["namespace"], obj["metadata"]["name"])] = \
                    int(upgrade.get("maxParallelUpgrades") or 1) if upgrade.get("autoUpgrade") else 0
        not_ready = [state for state, objs in current.items() if not operands.state_ready(objs)]
        if not_ready:
            self._write(policy, "notReady", "OperandNotReady", "False", "ClusterPolicy is not ready; states not ready: "
                        "[%s]" % " ".join(not_ready), operator_namespace)
            return
        driver, cuda = self._driver(operator_namespace)
        for node, pnode in nodes:
            update_node(self.rt, pnode.name, set_labels=gfd_labels(pnode, driver, cuda, spec),
                        set_resources={"nvidia.com/gpu": len(pnode.gpus)})
        self._write(policy, "ready", "Reconciled", "True",
                    "ClusterPolicy is ready as all resources have been successfully reconciled", operator_namespace)
