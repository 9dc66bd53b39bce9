# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The method x fabric matrix as data, and the one composition of the method-specific objects.

Each of the six configurations is a row of MATRIX; compose() reads the row and builds the
NicClusterPolicy device-plugin part, the SR-IOV objects and the network CRs from it.
"""


import json

from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import releases


class Configuration:
    """What one (method, fabric) pair needs."""

    def __init__(self, number, method, fabric, device_plugin, secondary_networks, vf_policy, network_kind,
                 resource_prefix, default_resource, default_network, in_chapter):
        self.number = number
        self.method = method
        self.fabric = fabric
        self.device_plugin = device_plugin  # NicClusterPolicy key, or None when the SR-IOV operator provides it
        # NicClusterPolicy.secondaryNetwork keys (OpenShift ships the rest)
        self.secondary_networks = secondary_networks
        self.vf_policy = vf_policy  # SriovNetworkNodePolicy creates VFs (drain + reboot)
        self.network_kind = network_kind
        self.resource_prefix = resource_prefix
        self.default_resource = default_resource
        self.default_network = default_network
        self.in_chapter = in_chapter

    @property
    def plugin_link_type(self):
        """linkTypes value of the device plugin selectors."""
        return "ether" if self.fabric == "roce" else "infiniband"

    @property
    def sriov_link_type(self):
        return "eth" if self.fabric == "roce" else "ib"

    @property
    def label(self):
        return "%s/%s" % (self.method, self.fabric)


# Multus, macvlan/host-device CNI and whereabouts ship with OpenShift, so only the IPoIB CNI is
# ever deployed through NicClusterPolicy.secondaryNetwork.
MATRIX = {(c.method, c.fabric): c for c in (
    Configuration(1, "shared_device", "roce", "rdmaSharedDevicePlugin", (), False, "MacvlanNetwork",
                  "rdma", "rdma_shared_device_eth", "rdmashared-net", True),
    Configuration(2, "shared_device", "infiniband", "rdmaSharedDevicePlugin", ("ipoib",), False, "IPoIBNetwork",
                  "rdma", "rdma_shared_device_ib", "rdmashared-ib-net", True),
    Configuration(3, "host_device", "roce", "sriovDevicePlugin", (), False, "HostDeviceNetwork",
                  "nvidia.com", "hostdev", "hostdev-net", True),
    Configuration(4, "host_device", "infiniband", "sriovDevicePlugin", (), False, "HostDeviceNetwork",
                  "nvidia.com", "hostdev_ib", "hostdev-ib-net", False),
    Configuration(5, "sriov_legacy", "roce", None, (), True, "SriovNetwork",
                  None, "sriovlegacy", "sriov-network", True),
    Configuration(6, "sriov_legacy", "infiniband", None, (), True, "SriovIBNetwork",
                  None, "sriovlegacy_ib", "sriov-ib-network", False),
)}

_PLUGIN_IMAGE = {"rdmaSharedDevicePlugin": "rdma_shared_device_plugin", "sriovDevicePlugin": "sriov_device_plugin"}
_SECONDARY_IMAGE = {"ipoib": "ipoib_cni"}


def configuration(model):
    return MATRIX[(model["method"], model["fabric"])]


def fabric_models(model):
    """The model of each fabric the configuration serves: the first, and gpudirect_rdma_second_fabric's when given
    (shared_device only: one NicClusterPolicy lists both fabrics' resources, as the chapter's shared-device policy
    does)."""
    return [model] + ([model["second_fabric_model"]] if model.get("second_fabric_model") else [])


def fabric_groups(model):
    """[(configuration, group)] over every fabric's NIC groups, in rail order."""
    return [(configuration(m), group) for m in fabric_models(model) for group in m["selection"]["groups"]]


def image(model, component):
    """repository/image/version of a component: the Network Operator release's, with the user's overrides on top."""
    merged = releases.network_operator_images(model.get("network_operator_version"))[component]
    merged.update(model["image_overrides"].get(component) or {})
    section = {"image": merged["image"], "repository": merged["repository"], "version": str(merged["version"])}
    return with_pull_secrets(model, section)


def with_pull_secrets(model, section):
    """Every NicClusterPolicy component takes imagePullSecrets (mellanox.com_nicclusterpolicies.yaml, v25.1 to v26.4):
    a mirror registry that needs credentials gets them on each one."""
    if model.get("image_pull_secrets"):
        section["imagePullSecrets"] = list(model["image_pull_secrets"])
    return section


def resource_names(model):
    """Fully qualified pod resources, e.g. rdma/rdma_shared_device_eth or openshift.io/sriovlegacy."""
    prefix = model.get("resource_prefix") or names.SRIOV_RESOURCE_PREFIX
    if configuration(model).vf_policy:
        prefix = names.SRIOV_RESOURCE_PREFIX
    return ["%s/%s" % (prefix, group["resource_name"]) for _config, group in fabric_groups(model)]


def ipam_config(model, group=None):
    """whereabouts IPAM JSON, as the network CRs take it (a string); each rail has its own range
    (input_ipam.assign_rail_ranges), so two rails never hand out the same address."""
    group = group or {}
    ipam = {"type": "whereabouts", "range": group.get("ipam_range") or model["ipam_range"]}
    if model.get("ipam_range_start"):
        ipam["range_start"] = model["ipam_range_start"]
    if model.get("ipam_range_end"):
        ipam["range_end"] = model["ipam_range_end"]
    excludes = group["ipam_exclude"] if "ipam_exclude" in group else model["ipam_exclude"]
    if excludes:
        ipam["exclude"] = list(excludes)
    if model.get("ipam_gateway"):
        ipam["gateway"] = model["ipam_gateway"]
    return json.dumps(ipam)


# Device-plugin configs ----------------------------------------------------------------------

def _shared_selectors(model, config, group):
    if group["interfaces"]:
        return {"ifNames": list(group["interfaces"])}
    # Selection by device ID: restrict to the fabric's link type, or a VPI card's other port is shared too.
    return {"vendors": [names.MELLANOX_VENDOR_ID], "deviceIDs": list(group["device_ids"]),
            "linkTypes": [config.plugin_link_type]}


def _hostdev_selectors(model, config, group):
    # PFs by PCI address or vendor/device: pfNames and rootDevices match VFs only (nics._host_device_pci_addresses),
    # and interface names were turned into PCI addresses there. The chapter's selector is vendors + isRdma.
    selectors = {"vendors": [names.MELLANOX_VENDOR_ID]}
    if group["device_ids"]:
        selectors["devices"] = list(group["device_ids"])
    if group["pci_addresses"]:
        selectors["pciAddresses"] = list(group["pci_addresses"])
    # Without linkTypes the selector takes every RDMA-capable Mellanox PF, the other fabric's included.
    selectors["linkTypes"] = [config.plugin_link_type]
    selectors["isRdma"] = True
    return selectors


def device_plugin_section(model):
    """NicClusterPolicy.spec.<device plugin> for the method, or (None, None)."""
    config = configuration(model)
    groups = model["selection"]["groups"]
    if config.device_plugin == "rdmaSharedDevicePlugin":
        plugin_config = {"configList": [
            {"resourceName": group["resource_name"], "resourcePrefix": model["resource_prefix"],
             "rdmaHcaMax": model["rdma_hca_max"], "selectors": _shared_selectors(model, group_config, group)}
            for group_config, group in fabric_groups(model)]}
    elif config.device_plugin == "sriovDevicePlugin":
        plugin_config = {"resourceList": [
            {"resourcePrefix": model["resource_prefix"], "resourceName": group["resource_name"],
             "selectors": _hostdev_selectors(model, config, group)}
            for group in groups]}
    else:
        return None, None
    section = image(model, _PLUGIN_IMAGE[config.device_plugin])
    section["config"] = json.dumps(plugin_config)
    return config.device_plugin, section


def secondary_network_section(model):
    keys = sorted({key for m in fabric_models(model) for key in configuration(m).secondary_networks})
    if not keys:
        return None
    return {key: image(model, _SECONDARY_IMAGE[key]) for key in keys}


# SR-IOV objects -----------------------------------------------------------------------------

def _policy_name(model, group, count):
    if model.get("sriov_policy_name") and count == 1:
        return model["sriov_policy_name"]
    return "%s-policy" % names.kebab(group["resource_name"])


def sriov_node_policies(model):
    config = configuration(model)
    if not config.vf_policy:
        return []
    groups = model["selection"]["groups"]
    policies = []
    for group in groups:
        selector = {"vendor": names.MELLANOX_VENDOR_ID}
        if len(group["device_ids"]) == 1:
            selector["deviceID"] = group["device_ids"][0]
        if group["interfaces"]:
            selector["pfNames"] = list(group["interfaces"])
        if group["pci_addresses"]:
            selector["rootDevices"] = list(group["pci_addresses"])
        spec = {
            "resourceName": group["resource_name"],
            "nodeSelector": {k: names.label_text(v) for k, v in model["node_selector"].items()},
            "priority": model["sriov_policy_priority"],
            "numVfs": model["num_vfs"],
            "nicSelector": selector,
            "deviceType": "netdevice",  # RDMA needs the kernel netdevice VF, never vfio-pci
            "isRdma": True,
            "linkType": config.sriov_link_type,
        }
        if model.get("mtu") is not None:
            spec["mtu"] = model["mtu"]
        policies.append({
            "apiVersion": names.API_SRIOV,
            "kind": "SriovNetworkNodePolicy",
            "metadata": {"name": _policy_name(model, group, len(groups)),
                         "namespace": model["sriov_operator_namespace"]},
            "spec": spec,
        })
    return policies


def sriov_pool_config(model):
    config = configuration(model)
    wanted = model["sriov_pool_config"] or model.get("sriov_pool_rdma_mode") is not None or \
        "sriov_pool_max_unavailable" in model.get("provided", ())
    if not config.vf_policy or not wanted:
        return None
    spec = {
        "maxUnavailable": model["sriov_pool_max_unavailable"],
        "nodeSelector": {"matchLabels": {"node-role.kubernetes.io/%s" % model["machineconfig_role"]: ""}},
    }
    if model.get("sriov_pool_rdma_mode"):
        spec["rdmaMode"] = model["sriov_pool_rdma_mode"]
    return {
        "apiVersion": names.API_SRIOV,
        "kind": "SriovNetworkPoolConfig",
        "metadata": {"name": model["machineconfig_pool"], "namespace": model["sriov_operator_namespace"]},
        "spec": spec,
    }


# Network CRs --------------------------------------------------------------------------------

def _macvlan(model, group, namespace):
    spec = {"networkNamespace": namespace, "master": group["master"], "mode": model["macvlan_mode"],
            "ipam": ipam_config(model, group)}
    if model.get("mtu") is not None:
        spec["mtu"] = model["mtu"]
    return spec


def _ipoib(model, group, namespace):
    return {"networkNamespace": namespace, "master": group["master"], "ipam": ipam_config(model, group)}


def _hostdev(model, group, namespace):
    return {"networkNamespace": namespace, "resourceName": group["resource_name"], "ipam": ipam_config(model, group)}


# With the RDMA subsystem in exclusive mode (SriovNetworkPoolConfig rdmaMode) a pod sees only the RDMA devices moved
# into its network namespace. Neither sriov-cni nor ib-sriov-cni moves the VF's RDMA device as the SR-IOV operator
# renders them (sriov-network-operator api/v1/helper.go RenderNetAttDef adds no RDMA step), so the rdma CNI
# (k8snetworkplumbingwg/rdma-cni) is chained after them, as the operator's metaPlugins field allows.
RDMA_META_PLUGIN = '{"type": "rdma"}'


def _sriov_meta_plugins(model, spec):
    if model.get("sriov_pool_rdma_mode") == "exclusive":
        spec["metaPlugins"] = RDMA_META_PLUGIN
    return spec


def _sriov(model, group, namespace):
    spec = {"networkNamespace": namespace, "resourceName": group["resource_name"], "ipam": ipam_config(model, group)}
    spec["vlan"] = model["vlan"] if model.get("vlan") is not None else 0
    return _sriov_meta_plugins(model, spec)


def _sriov_ib(model, group, namespace):
    # linkState auto: the VF follows the physical port (the chapter's choice; the upstream example uses enable).
    spec = {"networkNamespace": namespace, "resourceName": group["resource_name"], "ipam": ipam_config(model, group),
            "linkState": "auto"}
    return _sriov_meta_plugins(model, spec)


NETWORK_BUILDERS = {
    "MacvlanNetwork": (names.API_MELLANOX, False, _macvlan),
    "IPoIBNetwork": (names.API_MELLANOX, False, _ipoib),
    "HostDeviceNetwork": (names.API_MELLANOX, False, _hostdev),
    "SriovNetwork": (names.API_SRIOV, True, _sriov),
    "SriovIBNetwork": (names.API_SRIOV, True, _sriov_ib),
}


def network_name(group, namespace, namespaces):
    return group["network_name"] if len(namespaces) == 1 else "%s-%s" % (group["network_name"], namespace)


def networks(model):
    namespaces = model["network_namespaces"]
    objects = []
    for fabric_model in fabric_models(model):
        kind = configuration(fabric_model).network_kind
        api_version, namespaced, build = NETWORK_BUILDERS[kind]
        for group in fabric_model["selection"]["groups"]:
            for namespace in namespaces:
                metadata = {"name": network_name(group, namespace, namespaces)}
                if namespaced:
                    # the operator renders the NAD in networkNamespace
                    metadata["namespace"] = model["sriov_operator_namespace"]
                objects.append({"apiVersion": api_version, "kind": kind, "metadata": metadata,
                                "spec": build(fabric_model, group, namespace)})
    return objects
