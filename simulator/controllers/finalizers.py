"""Finalizers the operators put on their custom resources, and take off only while they run.

A CR deleted after its operator is gone keeps its finalizer, and its namespace stays Terminating: the collection's
teardown must delete these CRs and wait for them while the operators still run. Sources:
- sriov-network-operator v1.6.0 api/v1/helper.go (NETATTDEFFINALIZERNAME, POOLCONFIGFINALIZERNAME,
  OPERATORCONFIGFINALIZERNAME), added and removed by controllers/generic_network_controller.go,
  sriovnetworkpoolconfig_controller.go and sriovoperatorconfig_controller.go;
- openshift/cluster-nfd-operator internal/controllers/nodefeaturediscovery_reconciler.go (finalizerLabel).
"""

from ._base import OperatorController

SRIOV = "sriovnetwork.openshift.io"
# (group, plural) -> (package, finalizer)
FINALIZERS = {
    (SRIOV, "sriovnetworks"): ("sriov-network-operator", "netattdef.finalizers.sriovnetwork.openshift.io"),
    (SRIOV, "sriovibnetworks"): ("sriov-network-operator", "netattdef.finalizers.sriovnetwork.openshift.io"),
    (SRIOV, "sriovnetworkpoolconfigs"): ("sriov-network-operator", "poolconfig.finalizers.sriovnetwork.openshift.io"),
    (SRIOV, "sriovoperatorconfigs"): ("sriov-network-operator", "operatorconfig.finalizers.sriovnetwork.openshift.io"),
    ("nfd.openshift.io", "nodefeaturediscoveries"): ("nfd", "nfd-finalizer"),
}


class FinalizerController(OperatorController):
    """For one package: add its finalizer to live CRs, remove it from deleted ones, while the package's CSV runs."""

    def __init__(self, rt, package):
        super().__init__(rt)
        self.package = package
        self.kinds = dict((key, fin) for key, (pkg, fin) in FINALIZERS.items() if pkg == package)
        self.watched = tuple(self.kinds)

    def resync(self, delay=None):
        self.rt.enqueue((type(self).__name__, self.package), self._reconcile_if_running, delay)

    def reconcile(self, operator_namespace):
        for (group, plural), finalizer in self.kinds.items():
            if self.rt.rtype(group, plural) is None:
                continue
            for obj in self.rt.list(group, plural):
                meta = obj["metadata"]
                present = finalizer in (meta.get("finalizers") or [])
                deleting = bool(meta.get("deletionTimestamp"))
                if present == (not deleting):
                    continue

                def edit(current, finalizer=finalizer):
                    fins = [f for f in (current["metadata"].get("finalizers") or []) if f != finalizer]
                    if not current["metadata"].get("deletionTimestamp"):
                        fins.append(finalizer)
                    current["metadata"]["finalizers"] = fins

                self.rt.mutate(group, plural, meta.get("namespace"), meta["name"], edit)


def finalizer_controllers(rt):
    return [FinalizerController(rt, package) for package in sorted(set(pkg for pkg, _f in FINALIZERS.values()))]
