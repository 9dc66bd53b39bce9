"""Secondary-network CRs -> NetworkAttachmentDefinitions, one table entry per kind (both operators).

MacvlanNetwork, IPoIBNetwork, HostDeviceNetwork (NVIDIA Network Operator, cluster-scoped, status.state) and
SriovNetwork, SriovIBNetwork (SR-IOV operator, in the operator namespace) each render a NAD of the same name
in spec.networkNamespace, with the CNI config the operator would write and, for device-backed networks, the
`k8s.v1.cni.cncf.io/resourceName` annotation that makes Multus request the device. Both operators watch the NADs
they render, so one that is deleted while its network exists is rendered again.
"""

import json

from ._base import OperatorController, log

NAD = ("k8s.cni.cncf.io", "network-attachment-definitions")
RESOURCE_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"
# The network operator remembers where it rendered a MacvlanNetwork/IPoIBNetwork's NAD in an annotation, and writes it
# by replacing the CR's whole annotation map in an Update (Mellanox/network-operator v25.1.0 and v26.4.1,
# pkg/state/state_macvlan_network.go and state_ipoib_network.go, updateNetAttDefNamespace); HostDeviceNetwork keeps no
# such annotation (pkg/state/state_hostdevice_network.go). So last-applied-configuration does not survive on those two.
LAST_NAMESPACE_ANNOTATION = {
    ("mellanox.com", "macvlannetworks"): "operator.macvlannetwork.mellanox.com/last-network-namespace",
    ("mellanox.com", "ipoibnetworks"): "operator.ipoibnetwork.mellanox.com/last-network-namespace",
}
# The operator's client sets no field manager, so the apiserver names it after its user agent up to the first "/": the
# binary is /manager (network-operator Dockerfile), client-go's default agent starts with it (k8s.io/client-go
# rest/config.go DefaultKubernetesUserAgent; k8s.io/apiserver endpoints/handlers managerOrUserAgent).
OPERATOR_FIELD_MANAGER = "manager"


def _macvlan(spec):
    conf = {"type": "macvlan", "master": spec.get("master", ""), "mode": spec.get("mode") or "bridge"}
    if spec.get("mtu"):
        conf["mtu"] = spec["mtu"]
    return conf


def _ipoib(spec):
    return {"type": "ipoib", "master": spec.get("master", "")}


def _host_device(spec):
    return {"type": "host-device"}


def _sriov(spec):
    conf = {"type": "sriov", "vlan": spec.get("vlan", 0), "vlanQoS": spec.get("vlanQoS", 0), "logLevel": spec.get("logLevel", "info")}
    for key, cni_key in (("spoofChk", "spoofchk"), ("trust", "trust"), ("linkState", "link_state")):
        if spec.get(key):
            conf[cni_key] = spec[key]
    return conf


def _ib_sriov(spec):
    conf = {"type": "ib-sriov", "link_state": spec.get("linkState") or "auto"}
    return conf


# (group, plural) -> (package, config builder, resource prefix or None, reports status.state)
NETWORK_KINDS = {
    ("mellanox.com", "macvlannetworks"): ("nvidia-network-operator", _macvlan, None, True),
    ("mellanox.com", "ipoibnetworks"): ("nvidia-network-operator", _ipoib, None, True),
    ("mellanox.com", "hostdevicenetworks"): ("nvidia-network-operator", _host_device, "nvidia.com", True),
    ("sriovnetwork.openshift.io", "sriovnetworks"): ("sriov-network-operator", _sriov, "openshift.io", False),
    ("sriovnetwork.openshift.io", "sriovibnetworks"): ("sriov-network-operator", _ib_sriov, "openshift.io", False),
}


def render_nad(kind_key, cr):
    """(NetworkAttachmentDefinition dict, error message or None)."""
    _package, builder, prefix, _status = NETWORK_KINDS[kind_key]
    spec = cr.get("spec") or {}
    name = cr["metadata"]["name"]
    target_ns = spec.get("networkNamespace") or cr["metadata"].get("namespace") or "default"
    config = {"cniVersion": "0.3.1" if kind_key[0] == "mellanox.com" else "1.0.0", "name": name}
    config.update(builder(spec))
    ipam = spec.get("ipam")
    if ipam:
        try:
            config["ipam"] = json.loads(ipam) if isinstance(ipam, str) else ipam
        except ValueError as exc:
            return None, "failed to parse ipam: %s" % exc
    else:
        config["ipam"] = {}
    if kind_key[0] == "sriovnetwork.openshift.io" and spec.get("capabilities"):
        try:
            config["capabilities"] = json.loads(spec["capabilities"])
        except ValueError as exc:
            return None, "failed to parse capabilities: %s" % exc
    if kind_key[0] == "sriovnetwork.openshift.io" and spec.get("metaPlugins"):
        try:  # metaPlugins is a comma-separated sequence of JSON objects
            extra = json.loads("[%s]" % spec["metaPlugins"])
        except ValueError as exc:
            return None, "failed to parse metaPlugins: %s" % exc
        config = {"cniVersion": config["cniVersion"], "name": name, "plugins": [config] + extra}
    annotations = {}
    if prefix:
        resource = spec.get("resourceName")
        if not resource:
            return None, "spec.resourceName is required"
        annotations[RESOURCE_ANNOTATION] = "%s/%s" % (prefix, resource)
    nad = {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": {"name": name, "namespace": target_ns, "annotations": annotations,
                     "labels": {"app.kubernetes.io/managed-by": "simulated-" + NETWORK_KINDS[kind_key][0]}},
        "spec": {"config": json.dumps(config, sort_keys=True)},
    }
    return nad, None


class NetworkController(OperatorController):
    """One controller for all network kinds; reacts only while the owning package runs."""

    watched = tuple(NETWORK_KINDS)

    def __init__(self, rt):
        super().__init__(rt)
        self.rendered = {}  # (group, plural, ns, name) -> (nad namespace, nad name)

    def on_event(self, etype, rtype, obj):
        key = (rtype.group, rtype.plural)
        if key in NETWORK_KINDS:
            meta = obj["metadata"]
            ident = key + (meta.get("namespace"), meta["name"])
            if etype == "DELETED":
                self.rt.enqueue(("net-del",) + ident, lambda: self._remove(ident))
            else:
                self.rt.enqueue(("net",) + ident, lambda: self.sync(key, meta.get("namespace"), meta["name"]))
        elif key == NAD:
            if etype == "DELETED":
                target = (obj["metadata"].get("namespace"), obj["metadata"]["name"])
                for ident, rendered in list(self.rendered.items()):
                    if rendered == target:
                        self.rt.enqueue(("net",) + ident, lambda i=ident: self.sync(i[:2], i[2], i[3]))
        elif key == ("operators.coreos.com", "clusterserviceversions") or key == ("", "namespaces"):
            for kind_key in NETWORK_KINDS:
                for cr in self.rt.list(*kind_key):
                    m = cr["metadata"]
                    self.rt.enqueue(("net", kind_key, m.get("namespace"), m["name"]),
                                    lambda k=kind_key, ns=m.get("namespace"), n=m["name"]: self.sync(k, ns, n))

    def _remove(self, ident):
        target = self.rendered.pop(ident, None)
        if target is not None:
            self.rt.delete(NAD[0], NAD[1], target[0], target[1])

    def sync(self, kind_key, namespace, name):
        package, _builder, _prefix, has_state = NETWORK_KINDS[kind_key]
        if self.rt.installed_namespace(package) is None:
            return
        cr = self.rt.get(kind_key[0], kind_key[1], namespace, name)
        if cr is None or cr["metadata"].get("deletionTimestamp"):
            return
        nad, error = render_nad(kind_key, cr)
        if error is None and self.rt.get("", "namespaces", None, nad["metadata"]["namespace"]) is None:
            error = "failed to create NetworkAttachmentDefinition: namespaces \"%s\" not found" % nad["metadata"]["namespace"]
        if error is None:
            ident = kind_key + (namespace, name)
            old_target = self.rendered.get(ident)
            target = (nad["metadata"]["namespace"], nad["metadata"]["name"])
            if old_target and old_target != target:
                self.rt.delete(NAD[0], NAD[1], old_target[0], old_target[1])
            existing = self.rt.get(NAD[0], NAD[1], target[0], target[1])
            if existing is None:
                self.rt.create(NAD[0], NAD[1], nad)
            elif existing.get("spec") != nad["spec"] or (existing["metadata"].get("annotations") or {}) != nad["metadata"]["annotations"]:
                def edit(obj):
                    obj["spec"] = nad["spec"]
                    obj["metadata"]["annotations"] = nad["metadata"]["annotations"]
                self.rt.mutate(NAD[0], NAD[1], target[0], target[1], edit)
            self.rendered[ident] = target
            self._remember_namespace(kind_key, cr, target[0])
        else:
            log.debug("%s/%s: %s", kind_key[1], name, error)
        if has_state:
            status = {"state": "error", "reason": error} if error else {"state": "ready"}
            if (cr.get("status") or {}) != status:
                self.rt.set_status(kind_key[0], kind_key[1], namespace, name, status)

    def _remember_namespace(self, kind_key, cr, nad_namespace):
        """Replace the CR's annotations with the operator's own when its annotation is missing or stale (upstream
        rewrites only then, so a converged CR is not updated again)."""
        key = LAST_NAMESPACE_ANNOTATION.get(kind_key)
        if key is None or (cr["metadata"].get("annotations") or {}).get(key) == nad_namespace:
            return

        def edit(obj):
            obj["metadata"]["annotations"] = {key: nad_namespace}

        self.rt.update_as(kind_key[0], kind_key[1], cr["metadata"].get("namespace"), cr["metadata"]["name"], edit,
                          OPERATOR_FIELD_MANAGER)
