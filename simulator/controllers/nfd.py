"""Node Feature Discovery operator: a NodeFeatureDiscovery instance labels nodes from the hardware profile."""

import yaml

from . import operands
from ._base import OperatorController, Rollout, profile_node, set_condition, update_node

GROUP = "nfd.openshift.io"
PREFIX = "feature.node.kubernetes.io/"
# nfd-worker defaults when the configData does not say otherwise.
DEFAULT_CLASS_WHITELIST = ["03", "0b40", "12"]
DEFAULT_LABEL_FIELDS = ["class", "vendor"]
CPU_VENDORS = {"intel": "Intel", "amd": "AMD"}


def parse_worker_config(cr):
    """(deviceClassWhitelist, deviceLabelFields, error message or None) from spec.workerConfig.configData."""
    text = ((cr.get("spec") or {}).get("workerConfig") or {}).get("configData") or ""
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        return DEFAULT_CLASS_WHITELIST, DEFAULT_LABEL_FIELDS, "workerConfig.configData is not valid YAML: %s" % exc
    pci = ((data or {}).get("sources") or {}).get("pci") or {}
    whitelist = [str(c).lower() for c in pci.get("deviceClassWhitelist") or DEFAULT_CLASS_WHITELIST]
    fields = [str(f) for f in pci.get("deviceLabelFields") or DEFAULT_LABEL_FIELDS]
    return whitelist, fields, None


def feature_labels(node, profile, whitelist, fields):
    """The feature.node.kubernetes.io labels nfd-worker would publish for one profile node."""
    labels = {}
    for vendor, device, pci_class, total_vfs in node.all_pci_devices():
        if not any(pci_class.startswith(w) for w in whitelist):
            continue
        values = {"class": pci_class, "vendor": vendor, "device": device, "subsystem_vendor": vendor,
                  "subsystem_device": device}
        name = "_".join(values[f] for f in fields if f in values)
        labels[PREFIX + "pci-%s.present" % name] = "true"
        if total_vfs:
            labels[PREFIX + "pci-%s.sriov.capable" % name] = "true"
    kernel = node.kernel.split("-")[0].split(".")
    labels[PREFIX + "kernel-version.full"] = node.kernel
    for key, value in zip(("major", "minor", "revision"), kernel):
        labels[PREFIX + "kernel-version." + key] = value
    cluster = profile.cluster
    labels.update({
        PREFIX + "system-os_release.ID": "rhcos",
        PREFIX + "system-os_release.VERSION_ID": cluster.minor,
        PREFIX + "system-os_release.VERSION_ID.major": cluster.minor.split(".")[0],
        PREFIX + "system-os_release.VERSION_ID.minor": cluster.minor.split(".")[1],
        PREFIX + "system-os_release.OPENSHIFT_VERSION": cluster.minor,
        PREFIX + "system-os_release.RHEL_VERSION": cluster.rhel_version,
    })
    model = node.cpu_model.lower()
    for needle, vendor in CPU_VENDORS.items():
        if needle in model:
            labels[PREFIX + "cpu-model.vendor_id"] = vendor
    if node.numa_nodes > 1:
        labels[PREFIX + "memory-numa"] = "true"
    if any(n.total_vfs for n in node.nics):
        labels[PREFIX + "network-sriov.capable"] = "true"
    if any(p.rdma_device for n in node.nics for p in n.ports):
        labels[PREFIX + "rdma.capable"] = "true"
        labels[PREFIX + "rdma.available"] = "true"
    return labels


class NfdController(OperatorController):
    package = "nfd"
    watched = ((GROUP, "nodefeaturediscoveries"),)

    def __init__(self, rt):
        super().__init__(rt)
        self.rollout = Rollout()

    def reconcile(self, operator_namespace):
        crs = [cr for cr in self.rt.list(GROUP, "nodefeaturediscoveries") if not cr["metadata"].get("deletionTimestamp")]
        if not crs:
            return
        cr = crs[0]  # one instance per cluster, as the NFD operator expects
        meta = cr["metadata"]
        operands.ensure(self.rt, cr, operands.nfd_operands(cr, meta["namespace"]), None)
        whitelist, fields, error = parse_worker_config(cr)
        conditions = (cr.get("status") or {}).get("conditions")
        if error:
            conditions = set_condition(conditions, "Degraded", "True", "InvalidWorkerConfig", error)
            conditions = set_condition(conditions, "Available", "False", "InvalidWorkerConfig", error)
            self.rt.set_status(GROUP, "nodefeaturediscoveries", meta["namespace"], meta["name"], {"conditions": conditions})
            return
        ready, left = self.rollout.progress(meta["uid"], meta.get("generation"), self.rt.cfg("nfd_label_delay_seconds"))
        if not ready:
            conditions = set_condition(conditions, "Progressing", "True", "NFDWorkerStarting", "nfd-worker pods are starting")
            conditions = set_condition(conditions, "Available", "False", "NFDWorkerStarting", "nfd-worker pods are starting")
            self.rt.set_status(GROUP, "nodefeaturediscoveries", meta["namespace"], meta["name"], {"conditions": conditions})
            self.resync(left + 0.001)
            return
        for node in self.rt.list("", "nodes"):
            pnode = profile_node(self.rt, node["metadata"]["name"])
            if pnode is None:
                continue
            update_node(self.rt, pnode.name, set_labels=feature_labels(pnode, self.rt.profile, whitelist, fields),
                        remove_label_prefix=PREFIX)
        for ctype, status, reason, message in (
                ("Available", "True", "AllComponentsReady", "nfd-master, nfd-worker and nfd-gc are running"),
                ("Upgradeable", "True", "CanUpgrade", ""),
                ("Progressing", "False", "Reconciled", ""),
                ("Degraded", "False", "Reconciled", "")):
            conditions = set_condition(conditions, ctype, status, reason, message)
        self.rt.set_status(GROUP, "nodefeaturediscoveries", meta["namespace"], meta["name"], {"conditions": conditions})
