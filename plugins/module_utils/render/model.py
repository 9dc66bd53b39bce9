# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Input model: defaults, normalisation and validation of the gpudirect_rdma_* variables.

Every check runs and every error is reported, each naming the variable the user sets
(``gpudirect_rdma_ipam_range: 192.168.2.0/33 is not a valid CIDR``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import json
import re

try:
    import yaml
    HAS_YAML = True
except ImportError:  # pragma: no cover - ansible-core requires PyYAML; the model then reads JSON only
    HAS_YAML = False

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import nics
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import releases
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.rdma import MATRIX

MACHINECONFIG_ITEMS = ("irdma_blacklist", "persistent_names", "crio_memlock")
# crio_memlock is opt-in: it lifts the locked-memory limit of every container of a pool (issue 20 point 7).
DEFAULT_MACHINECONFIGS = ["irdma_blacklist"]
# The pool that gets the CRI-O memlock drop-in: a custom pool of the RDMA nodes only (deploy/machineconfigpool-gpudirect-rdma.yml).
DEFAULT_MEMLOCK_POOL = "gpudirect-rdma"
IMAGE_COMPONENTS = ("rdma_shared_device_plugin", "sriov_device_plugin", "ipoib_cni")
# OpenShift's default cluster and service networks; a secondary range inside them breaks routing.
DEFAULT_CLUSTER_NETWORK_CIDRS = ["10.128.0.0/14", "172.30.0.0/16"]

# Largest MTU per fabric: Ethernet jumbo frames; IPoIB datagram mode is bound by the 4 KiB IB MTU
# minus the 4-byte IPoIB header, connected mode by the IPoIB-CM limit.
MTU_LIMITS = {
    "roce": (576, 9216),
    ("infiniband", "datagram"): (576, 4092),
    ("infiniband", "connected"): (576, 65520),
}
MAX_MELLANOX_VFS = 128


class Field(object):
    """One variable: its type, default (a value or a callable of the partial model) and choices."""

    def __init__(self, kind, default=None, choices=None):
        self.kind = kind
        self.default = default
        self.choices = choices


def _release_doca(values, key):
    """The DOCA driver image of the Network Operator release in use (render/releases.py)."""
    return releases.network_operator_images(values.get("network_operator_version"))["doca_driver"][key]


def _per_config(attribute):
    def default(values):
        entry = MATRIX.get((values.get("method"), values.get("fabric")))
        return getattr(entry, attribute) if entry else None
    return default


FIELDS = {
    "method": Field("str", None, names.METHODS),
    "fabric": Field("str", None, names.FABRICS),
    # NIC selection
    "nic_selection": Field("str", "manual", ("manual", "auto")),
    "nic_interfaces": Field("list", []),
    "nic_pci_addresses": Field("list", []),
    "nic_device_ids": Field("list", []),
    "nic_vendor": Field("str", names.MELLANOX_VENDOR_ID),
    "nic_facts": Field("dictlist", []),
    "gpu_nic_affinity": Field("dictlist", []),
    # shared_device only: the other fabric's ports, served by the same NicClusterPolicy (SECOND_FABRIC_KEYS)
    "second_fabric": Field("dict", {}),
    # resources and networks
    "resource_name": Field("str", _per_config("default_resource")),
    "resource_names": Field("list", []),
    "resource_prefix": Field("str", _per_config("resource_prefix")),
    "network_name": Field("str", _per_config("default_network")),
    "network_names": Field("list", []),
    "network_namespaces": Field("list", ["default"]),
    # IPAM (whereabouts)
    "ipam_range": Field("str"),
    "ipam_ranges": Field("list", []),
    "ipam_range_start": Field("str"),
    "ipam_range_end": Field("str"),
    "ipam_exclude": Field("list", []),
    "ipam_gateway": Field("str"),
    "cluster_network_cidrs": Field("list", DEFAULT_CLUSTER_NETWORK_CIDRS),
    # link settings
    "mtu": Field("int"),
    "macvlan_mode": Field("str", "bridge", ("bridge", "private", "vepa", "passthru")),
    "macvlan_master": Field("str"),
    "ipoib_master": Field("str"),
    "ipoib_mode": Field("str", "datagram", ("datagram", "connected")),
    "vlan": Field("int"),
    # device plugins and VFs
    "rdma_hca_max": Field("int", 63),
    "num_vfs": Field("int"),
    "sriov_policy_name": Field("str"),
    "sriov_policy_priority": Field("int", 90),
    "node_selector": Field("dict", {"feature.node.kubernetes.io/pci-15b3.present": "true"}),
    "sriov_pool_config": Field("bool", False),
    "sriov_pool_max_unavailable": Field("intorstr", 1),
    "sriov_pool_rdma_mode": Field("str", None, ("shared", "exclusive")),
    # operators
    "nfd_namespace": Field("str", "openshift-nfd"),
    "nfd_instance_name": Field("str", "nfd-instance"),
    "nfd_operand_image": Field("str"),
    "sriov_operator_namespace": Field("str", "openshift-sriov-network-operator"),
    "sriov_disable_plugins": Field("list", []),
    "nic_driver": Field("str", "doca", ("doca", "inbox")),
    "network_operator_version": Field("str", ""),
    "doca_driver_repository": Field("str", lambda values: _release_doca(values, "repository")),
    "doca_driver_image": Field("str", lambda values: _release_doca(values, "image")),
    "doca_driver_version": Field("str", lambda values: _release_doca(values, "version")),
    "image_overrides": Field("dict", {}),
    "image_pull_secrets": Field("list", []),
    "gpu_rdma_mode": Field("str", "dmabuf", ("dmabuf", "peermem")),
    "gpu_use_host_mofed": Field("bool", False),
    "gpu_kernel_module_type": Field("str", lambda values: "auto" if values.get("gpu_rdma_mode") == "peermem" else "open",
                                    ("auto", "open", "proprietary")),
    "gpu_operator_version": Field("str", ""),
    "driver_upgrade_max_parallel": Field("int"),
    "gpu_gdrcopy": Field("bool", False),
    "gpu_cluster_policy_name": Field("str", "gpu-cluster-policy"),
    "gpu_driver_repository": Field("str"),
    "gpu_driver_image": Field("str"),
    "gpu_driver_version": Field("str"),
    # MachineConfigs (reboot the pool: opt-in)
    "apply_machineconfigs": Field("bool", False),
    "machineconfigs": Field("list", lambda values: list(DEFAULT_MACHINECONFIGS) if values.get("apply_machineconfigs") else []),
    "udev_rules": Field("dictlist", []),
    "udev_rules_from_facts": Field("bool", False),
    "machineconfig_pool": Field("str", "worker"),
    "machineconfig_role": Field("str", lambda values: values.get("machineconfig_pool")),
    "machineconfig_name": Field("str", lambda values: "99-%s-gpudirect-rdma" % values.get("machineconfig_role")),
    "machineconfig_allow_control_plane": Field("bool", False),
    "memlock_pool": Field("str", DEFAULT_MEMLOCK_POOL),
    "ignition_version": Field("str", "3.2.0"),
    # node groups (render/groups.py): each item the keys of groups.GROUP_KEYS on top of the shared variables
    "node_groups": Field("dictlist", []),
}

# The documentation half of the schema, for every field of FIELDS: (section of docs/input-model.md, default as
# shown to users, configurations it applies to or None, meaning). hack/gen_argument_specs.py generates the role
# argument specs, and from them the AWX surveys, and the tables of docs/input-model.md from FIELDS and DOCS.
DOC_SECTIONS = ("Configuration",
                "NIC selection",
                "Resources and networks",
                "IPAM (whereabouts)",
                "Link settings",
                "Device plugins and VFs",
                "Operators",
                "MachineConfigs (reboot: opt-in)",
                "Node groups")
DOCS = {
    "method": ("Configuration", "required", None, "`shared_device`, `host_device` or `sriov_legacy` (see [method-chooser.md](method-chooser.md))"),
    "fabric": ("Configuration", "required", None, "`roce` or `infiniband`"),
    "nic_selection": ("NIC selection", "`manual`", None, "`manual`: use the lists below. `auto`: derive ports from `gpudirect_rdma_nic_facts`"),
    "nic_interfaces": (
        "NIC selection", "`[]`", None,
        "PF netdev names (`ens8f0np0`, `ibs2f0`). Shared device: `ifNames`; SR-IOV: `nicSelector.pfNames`; host device: only with NIC facts, which "
        "turn the names into `pciAddresses` (the SR-IOV device plugin knows PF names only for VFs)"),
    "nic_pci_addresses": (
        "NIC selection", "`[]`", None,
        "PF PCI addresses (`0000:a0:00.0`); host device (`pciAddresses`) and SR-IOV (`nicSelector.rootDevices`) only"),
    "nic_device_ids": (
        "NIC selection", "`[]`", None,
        "PCI device IDs (`101b`, `1021`, `a2dc`); `deviceIDs`/`devices`, or SR-IOV `nicSelector.deviceID` (one)"),
    "nic_vendor": ("NIC selection", "`15b3`", None, "Only NVIDIA/Mellanox is accepted"),
    "nic_facts": ("NIC selection", "`[]`", None, "Collected port facts (below). With `manual` they are used to cross-check the lists"),
    "gpu_nic_affinity": ("NIC selection", "`[]`", None, "GPU-to-NIC relations; with `auto`, only the nearest NIC of each GPU is chosen"),
    "second_fabric": (
        "NIC selection", "`{}`", None,
        "Shared device only: the other fabric's ports, served by the same NicClusterPolicy (keys `nic_interfaces` or `nic_device_ids` with "
        "`master`, `ipam_range` required; `resource_name`, `network_name` default to that fabric's)"),
    "resource_name": (
        "Resources and networks", "per configuration (below)", None,
        "Device plugin resource, without prefix; `[A-Za-z0-9_]`, begins and ends alphanumeric, at most 63"),
    "resource_prefix": (
        "Resources and networks", "`rdma` (shared), `nvidia.com` (host device)", None,
        "SR-IOV resources are always `openshift.io/` (setting it there is an error)"),
    "network_name": ("Resources and networks", "per configuration", None, "Network CR name (DNS-1123 label)"),
    "network_namespaces": (
        "Resources and networks", "`[default]`", None,
        "Namespaces that get the NetworkAttachmentDefinition. With more than one, one network per namespace named `<network>-<namespace>`"),
    "resource_names": ("Resources and networks", "`[]`", None, "One resource per selected port (\"rails\"), in port order; duplicates are an error"),
    "network_names": ("Resources and networks", "`<network_name>-1..n`", None, "One network per rail, same length as `resource_names`"),
    "ipam_range": (
        "IPAM (whereabouts)", "required (or `_ranges`)", None,
        "CIDR; host bits are allowed (whereabouts starts there), IPv4 or IPv6. With several rails it is split into equal aligned subnets, one per "
        "rail in rail order (`/22` for three rails: three `/24`), so no two rails hand out the same address"),
    "ipam_ranges": (
        "IPAM (whereabouts)", "`[]`", None,
        "Several rails only, instead of `gpudirect_rdma_ipam_range`: one CIDR per rail, in rail order, none overlapping another or the cluster "
        "networks. With several rails `_range_start`, `_range_end` and `_gateway` are refused; each rail keeps the excludes inside its own range."),
    "ipam_range_start": ("IPAM (whereabouts)", "unset", None, "Inside the range, start not after end"),
    "ipam_range_end": ("IPAM (whereabouts)", "unset", None, "Inside the range, start not after end"),
    "ipam_exclude": ("IPAM (whereabouts)", "`[]`", None, "CIDRs inside the range, not overlapping each other"),
    "ipam_gateway": ("IPAM (whereabouts)", "unset", None, "Inside the range"),
    "cluster_network_cidrs": (
        "IPAM (whereabouts)", "`[10.128.0.0/14, 172.30.0.0/16]`", None,
        "The range must not overlap these (set them to your cluster and service networks)"),
    "mtu": (
        "Link settings", "unset", "shared/roce, sriov",
        "RoCE 576-9216; IPoIB datagram 576-4092, connected 576-65520. Rendered in MacvlanNetwork and SriovNetworkNodePolicy; refused for "
        "host_device and shared/infiniband, whose HostDeviceNetwork and IPoIBNetwork have no MTU field"),
    "macvlan_mode": ("Link settings", "`bridge`", "shared/roce", "`bridge`, `private`, `vepa`, `passthru`"),
    "macvlan_master": ("Link settings", "first interface", "shared/roce", "Master netdev of the macvlan network"),
    "ipoib_master": ("Link settings", "first interface", "shared/infiniband", "Parent netdev of the IPoIB network"),
    "ipoib_mode": (
        "Link settings", "`datagram`", "sriov/infiniband",
        "The IPoIB mode your nodes run; only bounds `gpudirect_rdma_mtu` (the collection never sets the mode)"),
    "vlan": ("Link settings", "`0`", "sriov/roce", "SriovNetwork VLAN, 0-4094"),
    "rdma_hca_max": ("Device plugins and VFs", "`63`", "shared", "Pods per shared HCA, at least 1"),
    "num_vfs": (
        "Device plugins and VFs", "required", "sriov",
        "VFs per PF, 1-128, and at most `total_vfs` on a non-Mellanox PF; an error with other methods"),
    "sriov_policy_name": ("Device plugins and VFs", "`<resource>-policy`", "sriov", "SriovNetworkNodePolicy name"),
    "sriov_policy_priority": ("Device plugins and VFs", "`90`", "sriov", "0-99"),
    "node_selector": ("Device plugins and VFs", "`{feature.node.kubernetes.io/pci-15b3.present: \"true\"}`", "sriov", "Policy node selector, non-empty"),
    "sriov_pool_config": ("Device plugins and VFs", "`false`", "sriov", "Render a SriovNetworkPoolConfig (implied by the two below)"),
    "sriov_pool_max_unavailable": ("Device plugins and VFs", "`1`", "sriov", "Integer or percentage"),
    "sriov_pool_rdma_mode": ("Device plugins and VFs", "unset", "sriov", "`shared` or `exclusive` (reboots the pool)"),
    "nic_driver": ("Operators", "`doca`", None, "`doca`: the Network Operator's DOCA-OFED container (`ofedDriver`). `inbox`: no driver container"),
    "network_operator_version": (
        "Operators", "empty (the newest release, 26.4)", None,
        "Network Operator version whose component images the NicClusterPolicy names (docs/support.md). The nvidia_network_operator role sets it "
        "from the installed CSV; set it for `render.yml`"),
    "doca_driver_repository": (
        "Operators", "the Network Operator release's (`nvcr.io/nvidia/mellanox`)", None,
        "Set them to pin another DOCA driver; `_version` takes a tag or a digest (`sha256:<64 hex digits>`, pinned with `@`)"),
    "doca_driver_image": (
        "Operators", "the Network Operator release's (`doca-driver`)", None,
        "Set them to pin another DOCA driver; `_version` takes a tag or a digest (`sha256:<64 hex digits>`, pinned with `@`)"),
    "doca_driver_version": (
        "Operators", "the Network Operator release's (`doca3.4.1-26.04-1.1.0.0-1` for 26.4)", None,
        "Set them to pin another DOCA driver; `_version` takes a tag or a digest (`sha256:<64 hex digits>`, pinned with `@`)"),
    "image_pull_secrets": (
        "Operators", "`[]`", None,
        "Secret names (in the Network Operator's namespace) put as `imagePullSecrets` on every NicClusterPolicy component: a mirror registry that "
        "needs credentials (docs/upgrades.md)"),
    "image_overrides": (
        "Operators", "`{}`", None,
        "`{rdma_shared_device_plugin | sriov_device_plugin | ipoib_cni: {repository, image, version}}` on top of the Network Operator release's "
        "images; `version` may be a digest (`sha256:...`)"),
    "gpu_rdma_mode": (
        "Operators", "`dmabuf`", None,
        "`dmabuf`: `driver.rdma.enabled: false`, open kernel modules. `peermem`: `driver.rdma.enabled: true` (nvidia-peermem)"),
    "gpu_use_host_mofed": ("Operators", "`false`", None, "`driver.rdma.useHostMofed`; only with `peermem` and `nic_driver: inbox`"),
    "gpu_kernel_module_type": ("Operators", "`open` (dmabuf), `auto` (peermem)", None, "`proprietary` is rejected with dmabuf"),
    "gpu_operator_version": (
        "Operators", "empty (v25.3 and later)", None,
        "GPU Operator version the ClusterPolicy is rendered for; before 25.3 `driver.useOpenKernelModules` replaces `kernelModuleType`. The "
        "nvidia_gpu_operator role sets it from the installed CSV; set it for `render.yml`"),
    "driver_upgrade_max_parallel": (
        "Operators", "unset (GPU driver: 1 node, at most 25% unavailable; DOCA driver: 1 node)", None,
        "Nodes whose GPU or NIC driver reloads at the same time when an operator upgrade rolls the drivers (`maxParallelUpgrades` and the GPU "
        "`maxUnavailable`)"),
    "gpu_gdrcopy": ("Operators", "`false`", None, "`gdrcopy.enabled`"),
    "gpu_cluster_policy_name": ("Operators", "`gpu-cluster-policy`", None, "Name of the ClusterPolicy"),
    "gpu_driver_repository": (
        "Operators", "unset", None,
        "Pin the GPU driver image (needed on some OLM installs); `_version` takes a tag or a digest (`sha256:...`)"),
    "gpu_driver_image": (
        "Operators", "unset", None,
        "Pin the GPU driver image (needed on some OLM installs); `_version` takes a tag or a digest (`sha256:...`)"),
    "gpu_driver_version": (
        "Operators", "unset", None,
        "Pin the GPU driver image (needed on some OLM installs); `_version` takes a tag or a digest (`sha256:...`)"),
    "nfd_namespace": (
        "Operators", "`openshift-nfd`", None,
        "Namespace of the NodeFeatureDiscovery instance; the NFD operator's too unless `nfd_namespace` is set"),
    "nfd_instance_name": ("Operators", "`nfd-instance`", None, "Name of the NodeFeatureDiscovery instance"),
    "nfd_operand_image": ("Operators", "unset", None, "Operand image: read it from the NFD CSV `alm-examples`; unset lets the operator choose"),
    "sriov_operator_namespace": (
        "Operators", "`openshift-sriov-network-operator`", None,
        "Namespace of the SR-IOV objects (SriovOperatorConfig, policies, networks); the SR-IOV Network Operator's too unless "
        "`sriov_network_operator_namespace` is set"),
    "sriov_disable_plugins": ("Operators", "`[]`", None, "`[mellanox]` for BlueField-3 in DPU mode"),
    "apply_machineconfigs": ("MachineConfigs (reboot: opt-in)", "`false`", None, "The opt-in. Without it any requested MachineConfig is an error"),
    "machineconfigs": (
        "MachineConfigs (reboot: opt-in)", "`[irdma_blacklist]` when opted in", None,
        "Items: `irdma_blacklist` (kernel argument `module_blacklist=irdma`), `persistent_names` (udev rules), `crio_memlock` (CRI-O "
        "`memlock=-1:-1`, for the nodes of `gpudirect_rdma_memlock_pool` only)"),
    "udev_rules": ("MachineConfigs (reboot: opt-in)", "`[]`", None, "Extra `{address, name, link_layer or type}` entries for `persistent_names`"),
    "udev_rules_from_facts": (
        "MachineConfigs (reboot: opt-in)", "`false`", None,
        "Also derive `persistent_names` rules from `nic_facts` (reported by pods on the nodes). Without it, facts that would add rules are an "
        "error: review the rendered MachineConfig first"),
    "machineconfig_pool": ("MachineConfigs (reboot: opt-in)", "`worker`", None, "Pool to wait for; also the SriovNetworkPoolConfig name"),
    "machineconfig_allow_control_plane": (
        "MachineConfigs (reboot: opt-in)", "`false`", None,
        "Allow MachineConfigs for the `master` (or `arbiter`) pool; refused otherwise, since they reboot and affect the control plane (for compact "
        "clusters whose GPU nodes are control-plane nodes)"),
    "machineconfig_role": (
        "MachineConfigs (reboot: opt-in)", "the pool name", None,
        "`machineconfiguration.openshift.io/role` label and `node-role.kubernetes.io/<role>` selectors"),
    "machineconfig_name": ("MachineConfigs (reboot: opt-in)", "`99-<role>-gpudirect-rdma`", None, "Name of the MachineConfig"),
    "memlock_pool": (
        "MachineConfigs (reboot: opt-in)", "`gpudirect-rdma`", None,
        "Custom MachineConfigPool (and role) that gets `crio_memlock` in its own MachineConfig `99-<pool>-gpudirect-rdma-memlock`: only the RDMA "
        "nodes, labelled `node-role.kubernetes.io/<pool>`, lift the locked-memory limit of their containers. The administrator labels the nodes "
        "and creates the pool (`deploy/machineconfigpool-gpudirect-rdma.yml`); preflight refuses, before any write, a pool that does not exist "
        "or selects no node. The pool name of `gpudirect_rdma_machineconfig_role` (e.g. `worker`) puts memlock into the main MachineConfig of "
        "that whole pool"),
    "ignition_version": ("MachineConfigs (reboot: opt-in)", "`3.2.0`", None, "Must be 3.x"),
    "node_groups": (
        "Node groups", "`[]` (one implicit group: the variables above)", None,
        "Several sets of nodes, each with its own configuration (docs/node-groups.md). Each item: `name` (DNS-1123 label, at most 20), "
        "`node_selector` (required; no node in two groups) and any of `method`, `fabric`, the NIC lists, resource and network names, "
        "IPAM, link, device-plugin and VF keys, `machineconfig_pool`, `_role`, `_name` (without the `gpudirect_rdma_` prefix); the other "
        "variables are shared. Names a group does not set get `_<group>` (resources) or `-<group>` (networks, policies) appended"),
}

# Options that only mean something for some configurations: (predicate on method/fabric, where it applies).
SCOPED_FIELDS = {
    "macvlan_mode": (lambda m, f: m == "shared_device" and f == "roce", "shared_device over roce (MacvlanNetwork)"),
    "macvlan_master": (lambda m, f: m == "shared_device" and f == "roce", "shared_device over roce (MacvlanNetwork)"),
    "ipoib_master": (lambda m, f: m == "shared_device" and f == "infiniband", "shared_device over infiniband (IPoIBNetwork)"),
    # HostDeviceNetwork and IPoIBNetwork have no MTU field (network-operator api/v1alpha1 CRDs): the MTU goes only into
    # MacvlanNetwork and SriovNetworkNodePolicy. The IPoIB mode is the kernel's; it only bounds the SR-IOV policy MTU.
    "mtu": (lambda m, f: m == "sriov_legacy" or (m == "shared_device" and f == "roce"),
            "shared_device over roce (MacvlanNetwork) and sriov_legacy (SriovNetworkNodePolicy)"),
    "ipoib_mode": (lambda m, f: m == "sriov_legacy" and f == "infiniband",
                   "sriov_legacy over infiniband, where it bounds gpudirect_rdma_mtu; the collection never sets the IPoIB mode"),
    "rdma_hca_max": (lambda m, f: m == "shared_device", "shared_device (rdmaSharedDevicePlugin)"),
    "num_vfs": (lambda m, f: m == "sriov_legacy", "sriov_legacy (SriovNetworkNodePolicy); host_device and shared_device use the PF itself"),
    "vlan": (lambda m, f: m == "sriov_legacy" and f == "roce", "sriov_legacy over roce (SriovNetwork)"),
    "sriov_policy_name": (lambda m, f: m == "sriov_legacy", "sriov_legacy"),
    "sriov_policy_priority": (lambda m, f: m == "sriov_legacy", "sriov_legacy"),
    "sriov_pool_config": (lambda m, f: m == "sriov_legacy", "sriov_legacy (SriovNetworkPoolConfig)"),
    "sriov_pool_max_unavailable": (lambda m, f: m == "sriov_legacy", "sriov_legacy (SriovNetworkPoolConfig)"),
    "sriov_pool_rdma_mode": (lambda m, f: m == "sriov_legacy", "sriov_legacy (SriovNetworkPoolConfig)"),
    "resource_prefix": (lambda m, f: m != "sriov_legacy", "shared_device and host_device; SR-IOV resources always use openshift.io/"),
    # The chapter's shared-device policy lists rdma_shared_device_eth and rdma_shared_device_ib side by side.
    "second_fabric": (lambda m, f: m == "shared_device", "shared_device"),
}

# gpudirect_rdma_second_fabric keys: the ports of the other fabric and what their network is called and addressed with.
# Everything else (driver, rdmaHcaMax, resource prefix, namespaces) is shared with the first fabric.
SECOND_FABRIC_KEYS = ("nic_interfaces", "nic_device_ids", "ipam_range", "resource_name", "network_name", "master")

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0", "")
_PERCENT = re.compile(r"^(100|[1-9]?[0-9])%\Z")


class Errors(object):
    """Collects messages as '<variable>: <problem>' so that all of them can be returned at once."""

    def __init__(self):
        self.messages = []

    def add(self, field, message):
        text = _cut_long_values("%s: %s" % (names.variable(field), message))
        if text not in self.messages:
            self.messages.append(text)


# A value echoed in a message is cut to this many characters: a 100 000-character answer stays readable.
MESSAGE_VALUE_LIMIT = 80


def _cut_long_values(text):
    """Every run of more than MESSAGE_VALUE_LIMIT characters without a space (a value, not prose) cut short."""
    return re.sub(r"\S{%d,}" % (MESSAGE_VALUE_LIMIT + 1),
                  lambda m: "%s...(%d characters)" % (m.group(0)[:MESSAGE_VALUE_LIMIT], len(m.group(0))), text)


def _split_text_list(value):
    # AWX survey text fields and -e key=value give strings; accept comma or newline separated lists.
    return [item.strip() for item in re.split(r"[,\n]", value) if item.strip()]


def _parse_text(field, text, errors):
    """AWX survey textareas give structured answers as JSON or YAML text."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    if HAS_YAML:
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError:
            pass
    errors.add(field, "could not read %r as JSON or YAML" % (text,))
    return None


def _coerce(field, spec, value, errors):
    """Convert one provided value to the field's type; None (and an error) when impossible."""
    kind = spec.kind
    if value is None:
        return None
    if kind == "str":
        if isinstance(value, bool) or isinstance(value, (list, dict)):
            errors.add(field, "must be a string, got %r" % (value,))
            return None
        return str(value).strip()
    if kind == "int":
        if isinstance(value, bool):
            errors.add(field, "must be an integer, got %r" % (value,))
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, str) and re.match(r"^\s*-?\d+\s*\Z", value):
            return int(value)
        errors.add(field, "must be an integer, got %r" % (value,))
        return None
    if kind == "intorstr":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
        if isinstance(value, str) and _PERCENT.match(value.strip()):
            return value.strip()
        errors.add(field, "must be an integer or a percentage like '10%%', got %r" % (value,))
        return None
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        errors.add(field, "must be a boolean, got %r" % (value,))
        return None
    if kind == "list":
        if isinstance(value, str):
            return _split_text_list(value)
        if isinstance(value, (list, tuple)):
            bad = [item for item in value if isinstance(item, (list, dict)) or item is None]
            if bad:
                errors.add(field, "must be a list of strings, got %r" % (bad[0],))
                return None
            return [str(item).strip() if not isinstance(item, int) or isinstance(item, bool) else item for item in value]
        errors.add(field, "must be a list, got %r" % (value,))
        return None
    if kind in ("dictlist", "dict") and isinstance(value, str):
        value = _parse_text(field, value, errors)
        if value is None:
            return None
    if kind == "dictlist":
        if not isinstance(value, (list, tuple)) or not all(isinstance(item, dict) for item in value):
            errors.add(field, "must be a list of mappings")
            return None
        return [dict(item) for item in value]
    if kind == "dict":
        if not isinstance(value, dict):
            errors.add(field, "must be a mapping, got %r" % (value,))
            return None
        return dict(value)
    raise ValueError("unknown field kind %s" % kind)  # programming error


def normalise(variables):
    """Strip the prefix, coerce types and fill defaults. Returns (values, provided, errors)."""
    errors = Errors()
    raw = {}
    for key, value in (variables or {}).items():
        if not isinstance(key, str) or not key.startswith(names.VARIABLE_PREFIX):
            errors.messages.append("%s: not a %s* variable" % (key, names.VARIABLE_PREFIX))
            continue
        field = key[len(names.VARIABLE_PREFIX):]
        if field not in FIELDS:
            close = [name for name in FIELDS if name.split("_")[0] == field.split("_")[0]]
            hint = " (known: %s)" % ", ".join(names.variable(name) for name in sorted(close)) if close else ""
            errors.add(field, "unknown variable%s" % hint)
            continue
        raw[field] = value
    values = {}
    provided = set()
    for field, spec in FIELDS.items():
        # A blank answer (AWX sends null or "" for an optional survey question left empty) means unset.
        if field in raw and raw[field] is not None and not (isinstance(raw[field], str) and not raw[field].strip() and spec.kind != "list"):
            coerced = _coerce(field, spec, raw[field], errors)
            if coerced is not None:
                if spec.kind == "str" and spec.choices:
                    coerced = coerced.lower()
                values[field] = coerced
                # A value equal to the fixed default is what an AWX survey sends for an untouched question;
                # it must not trip the "only applies to ..." checks.
                if callable(spec.default) or coerced != spec.default:
                    provided.add(field)
    # Defaults that depend on other values are computed after every provided value is known.
    for field, spec in FIELDS.items():
        if field not in values:
            default = spec.default
            values[field] = default(values) if callable(default) else _copy(default)
    return values, provided, errors


def _copy(value):
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value


def _check_choices(values, errors):
    for field, spec in FIELDS.items():
        value = values.get(field)
        if spec.choices and value is not None and value not in spec.choices:
            errors.add(field, "%r is not one of %s" % (value, ", ".join(spec.choices)))
    for field in ("method", "fabric"):
        if values.get(field) is None:
            errors.add(field, "required, one of %s" % ", ".join(FIELDS[field].choices))


def _check_scoped(values, provided, errors):
    method, fabric = values["method"], values["fabric"]
    if (method, fabric) not in MATRIX:
        return
    for field, (applies, where) in SCOPED_FIELDS.items():
        if field in provided and values[field] is not False and not applies(method, fabric):
            if field in ("macvlan_mode", "macvlan_master") and fabric == "infiniband":
                errors.add(field, "macvlan options do not apply to infiniband (IPoIB has no macvlan); only used by %s" % where)
            elif field == "mtu":
                errors.add(field, "%s over %s renders %s objects, which have no MTU field; leave it unset (only used by %s)"
                           % (method, fabric, MATRIX[(method, fabric)].network_kind, where))
            elif field == "second_fabric":
                errors.add(field, "%s configures one fabric; only shared_device serves RoCE and InfiniBand ports from one "
                                  "NicClusterPolicy. Leave it unset, or use method shared_device" % method)
            elif field in ("ipoib_master", "ipoib_mode") and fabric == "roce":
                errors.add(field, "IPoIB options do not apply to roce; only used by %s" % where)
            else:
                errors.add(field, "only used by %s, not by %s over %s" % (where, method, fabric))


def _parse_network(field, text, errors):
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        errors.add(field, "%s is not a valid CIDR" % text)
        return None


def _parse_address(field, text, errors):
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        errors.add(field, "%s is not a valid IP address" % text)
        return None


def _check_range(field, text, values, errors):
    """One whereabouts range: a CIDR with room for pods, clear of the cluster and service networks. The network, or
    None when it is not a CIDR at all."""
    if "/" not in text:
        errors.add(field, "%s is not a valid CIDR (prefix length missing)" % text)
        return None
    network = _parse_network(field, text, errors)
    if network is None:
        return None
    if network.num_addresses < 4:
        errors.add(field, "%s leaves no room for pod addresses" % text)
    for cidr in values["cluster_network_cidrs"]:
        other = _parse_network("cluster_network_cidrs", cidr, errors)
        if other is not None and other.version == network.version and network.overlaps(other):
            errors.add(field, "%s overlaps the cluster or service network %s" % (text, cidr))
    return network


def _check_ipam(values, errors):
    if values["ipam_ranges"] and not values.get("ipam_range"):
        return  # one range per rail, checked with the rails (_assign_rail_ranges)
    if not values.get("ipam_range"):
        errors.add("ipam_range", "required: the whereabouts CIDR for the secondary network (for example 192.168.2.0/24)")
        return
    text = values["ipam_range"]
    network = _check_range("ipam_range", text, values, errors)
    if network is None:
        return
    bounds = {}
    for field in ("ipam_range_start", "ipam_range_end", "ipam_gateway"):
        if values.get(field):
            address = _parse_address(field, values[field], errors)
            if address is None:
                continue
            if address.version != network.version or address not in network:
                errors.add(field, "%s is outside gpudirect_rdma_ipam_range %s" % (address, network))
            bounds[field] = address
    start, end = bounds.get("ipam_range_start"), bounds.get("ipam_range_end")
    if start is not None and end is not None and start.version == end.version and start > end:
        errors.add("ipam_range_start", "%s is after gpudirect_rdma_ipam_range_end %s" % (start, end))
    excludes = []
    for cidr in values["ipam_exclude"]:
        if "/" not in str(cidr):
            errors.add("ipam_exclude", "%s is not a valid CIDR (prefix length missing)" % cidr)
            continue
        excluded = _parse_network("ipam_exclude", str(cidr), errors)
        if excluded is None:
            continue
        if excluded.version != network.version or not excluded.subnet_of(network):
            errors.add("ipam_exclude", "%s is outside gpudirect_rdma_ipam_range %s" % (cidr, network))
            continue
        for previous in excludes:
            if previous.overlaps(excluded):
                errors.add("ipam_exclude", "%s overlaps %s" % (excluded, previous))
        excludes.append(excluded)
    usable = network.num_addresses - sum(excluded.num_addresses for excluded in excludes)
    if excludes and usable <= 2:
        errors.add("ipam_exclude", "excludes every usable address of %s" % network)


def _split_range(network, count):
    """The first ``count`` of the equal, aligned subnets that ``network`` splits into (a power of two of them)."""
    extra_bits = max(0, (count - 1).bit_length())
    if network.prefixlen + extra_bits > network.max_prefixlen:
        return None
    return list(network.subnets(prefixlen_diff=extra_bits))[:count]


def _assign_rail_ranges(values, errors):
    """One whereabouts range per rail, so that two rails never hand out the same address: given in
    gpudirect_rdma_ipam_ranges (rail order), else gpudirect_rdma_ipam_range split into equal subnets."""
    groups = (values.get("selection") or {}).get("groups") or []
    if not groups:
        return
    given = values["ipam_ranges"]
    if len(groups) == 1:
        if given:
            errors.add("ipam_ranges", "one range per rail, but there is one rail: use gpudirect_rdma_ipam_range")
            return
        groups[0]["ipam_range"] = values["ipam_range"]
        return
    for field in ("ipam_range_start", "ipam_range_end", "ipam_gateway"):
        if values.get(field):
            errors.add(field, "bounds one range, but the %d rails get one range each: leave it unset, and use "
                              "gpudirect_rdma_ipam_exclude for addresses to keep out" % len(groups))
    if given:
        if values.get("ipam_range"):
            errors.add("ipam_ranges", "given together with gpudirect_rdma_ipam_range: give one of them (the rails' ranges, "
                                      "or one range to split between the rails)")
            return
        if len(given) != len(groups):
            errors.add("ipam_ranges", "has %d ranges for %d rails (%s): give one per rail, in rail order"
                       % (len(given), len(groups), ", ".join(g["network_name"] for g in groups)))
            return
        ranges = []
        for text in given:
            network = _check_range("ipam_ranges", str(text), values, errors)
            if network is None:
                continue
            for previous in ranges:
                if previous.overlaps(network):
                    errors.add("ipam_ranges", "%s overlaps %s: two rails would hand out the same addresses" % (network, previous))
            ranges.append(network)
        if len(ranges) != len(groups):
            return
    else:
        whole = ipaddress.ip_network(values["ipam_range"], strict=False)
        ranges = _split_range(whole, len(groups))
        if ranges is None or ranges[0].num_addresses < 4:
            errors.add("ipam_range", "%s is too small to give each of the %d rails a range of its own: give a larger range, "
                                     "or gpudirect_rdma_ipam_ranges" % (values["ipam_range"], len(groups)))
            return
    for group, network in zip(groups, ranges):
        group["ipam_range"] = str(network)
        group["ipam_exclude"] = [str(cidr) for cidr in values["ipam_exclude"]
                                 if ipaddress.ip_network(str(cidr), strict=False).subnet_of(network)]


def _check_mtu(values, errors):
    mtu = values.get("mtu")
    if mtu is None or (values["method"], values["fabric"]) not in MATRIX:
        return
    if not SCOPED_FIELDS["mtu"][0](values["method"], values["fabric"]):
        return  # refused by _check_scoped with one message
    key = "roce" if values["fabric"] == "roce" else ("infiniband", values["ipoib_mode"])
    low, high = MTU_LIMITS.get(key, (576, 9216))
    if not low <= mtu <= high:
        mode = "" if values["fabric"] == "roce" else " (IPoIB %s mode)" % values["ipoib_mode"]
        errors.add("mtu", "%d is out of range for %s%s: %d-%d" % (mtu, values["fabric"], mode, low, high))


def _check_names(values, errors):
    for field in ("nfd_namespace", "sriov_operator_namespace"):
        if not names.is_dns1123_label(values[field]):
            errors.add(field, "%r is not a valid namespace name (DNS-1123 label)" % values[field])
    namespaces = values["network_namespaces"]
    if not namespaces:
        errors.add("network_namespaces", "needs at least one namespace")
    for namespace in namespaces:
        if not names.is_dns1123_label(namespace):
            errors.add("network_namespaces", "%r is not a valid namespace name (DNS-1123 label)" % namespace)
    if len(set(namespaces)) != len(namespaces):
        errors.add("network_namespaces", "lists a namespace twice")
    for field in ("nfd_instance_name", "gpu_cluster_policy_name", "machineconfig_name", "machineconfig_pool", "sriov_policy_name"):
        if values.get(field) is not None and not names.is_dns1123_subdomain(values[field]):
            errors.add(field, "%r is not a valid object name (DNS-1123 subdomain)" % values[field])
    if values.get("memlock_pool") is not None and not (names.is_dns1123_label(values["memlock_pool"]) and names.is_label_value(values["memlock_pool"])):
        errors.add("memlock_pool", "%r is not a valid MachineConfigPool and role name (DNS-1123 label)" % values["memlock_pool"])
    if values.get("machineconfig_role") is not None and not names.is_label_value(values["machineconfig_role"]):
        errors.add("machineconfig_role", "%r is not a valid label value" % values["machineconfig_role"])
    resources = values["resource_names"] or ([values["resource_name"]] if values.get("resource_name") else [])
    field = "resource_names" if values["resource_names"] else "resource_name"
    for resource in resources:
        if not names.is_resource_name(resource):
            errors.add(field, "%r is not a valid device plugin resource name: letters, digits and '_', "
                              "starting and ending with a letter or digit, at most 63 characters" % resource)
    duplicates = sorted(set(r for r in resources if resources.count(r) > 1))
    if duplicates:
        errors.add(field, "duplicate resource names: %s" % ", ".join(duplicates))
    networks = values["network_names"] or ([values["network_name"]] if values.get("network_name") else [])
    field = "network_names" if values["network_names"] else "network_name"
    for network in networks:
        if not names.is_dns1123_label(network):
            errors.add(field, "%r is not a valid network name (DNS-1123 label)" % network)
        elif len(namespaces) > 1 and not names.is_dns1123_label("%s-%s" % (network, max(namespaces, key=len))):
            errors.add(field, "%r is too long to be suffixed with each namespace name" % network)
    duplicates = sorted(set(n for n in networks if networks.count(n) > 1))
    if duplicates:
        errors.add(field, "duplicate network names: %s" % ", ".join(duplicates))
    if values["resource_names"] and values["network_names"] and len(values["resource_names"]) != len(values["network_names"]):
        errors.add("network_names", "has %d entries but gpudirect_rdma_resource_names has %d"
                   % (len(values["network_names"]), len(values["resource_names"])))
    if values["network_names"] and not values["resource_names"]:
        errors.add("network_names", "needs gpudirect_rdma_resource_names (one network per resource)")
    prefix = values.get("resource_prefix")
    if prefix is not None and not names.is_resource_prefix(prefix):
        errors.add("resource_prefix", "%r is not a valid resource prefix (DNS-1123 subdomain)" % prefix)


def _check_numbers(values, provided, errors):
    method = values["method"]
    if values["rdma_hca_max"] is not None and values["rdma_hca_max"] < 1:
        errors.add("rdma_hca_max", "must be at least 1 (pods per shared HCA), got %d" % values["rdma_hca_max"])
    num_vfs = values.get("num_vfs")
    if method == "sriov_legacy":
        if num_vfs is None:
            errors.add("num_vfs", "required for sriov_legacy (VFs per PF, 1-%d)" % MAX_MELLANOX_VFS)
        elif num_vfs == 0:
            errors.add("num_vfs", "0 creates no VFs: sriov_legacy needs 1-%d" % MAX_MELLANOX_VFS)
        elif not 1 <= num_vfs <= MAX_MELLANOX_VFS:
            errors.add("num_vfs", "%d is out of range 1-%d" % (num_vfs, MAX_MELLANOX_VFS))
    if not 0 <= values["sriov_policy_priority"] <= 99:
        errors.add("sriov_policy_priority", "%d is out of range 0-99" % values["sriov_policy_priority"])
    vlan = values.get("vlan")
    if vlan is not None and not 0 <= vlan <= 4094:
        errors.add("vlan", "%d is out of range 0-4094" % vlan)
    unavailable = values.get("sriov_pool_max_unavailable")
    if isinstance(unavailable, int) and unavailable < 1:
        errors.add("sriov_pool_max_unavailable", "must be at least 1, got %d" % unavailable)


def _check_node_selector(values, errors):
    selector = values["node_selector"]
    if not selector:
        errors.add("node_selector", "must select the RDMA nodes (an empty selector matches every node)")
    for key, value in selector.items():
        if not names.is_label_key(key):
            errors.add("node_selector", "%r is not a valid label key" % key)
        if not names.is_label_value(value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)):
            errors.add("node_selector", "%r is not a valid label value for %s" % (value, key))


def _check_gpu(values, provided, errors):
    mode, driver = values["gpu_rdma_mode"], values["nic_driver"]
    if values["gpu_use_host_mofed"]:
        if driver == "doca":
            errors.add("gpu_use_host_mofed",
                       "must be false when the Network Operator provides the DOCA-OFED driver (gpudirect_rdma_nic_driver: doca)")
        if mode == "dmabuf":
            errors.add("gpu_use_host_mofed", "only applies to gpudirect_rdma_gpu_rdma_mode: peermem")
    elif mode == "peermem" and driver == "inbox":
        errors.add("gpu_rdma_mode", "peermem needs MLNX/DOCA-OFED: use gpudirect_rdma_nic_driver: doca, or dmabuf with the inbox driver")
    if values.get("driver_upgrade_max_parallel") is not None and values["driver_upgrade_max_parallel"] < 1:
        errors.add("driver_upgrade_max_parallel", "must be 1 or more (nodes whose driver reloads at the same time)")
    for field, operator, example in (("network_operator_version", "Network Operator", "25.4.0"),
                                     ("gpu_operator_version", "GPU Operator", "24.9.2")):
        if values.get(field) and not re.match(r"^v?\d+\.\d+(\.\d+)?\Z", values[field]):
            errors.add(field, "%r is not a %s version (X.Y or X.Y.Z, e.g. %s)" % (values[field], operator, example))
    if mode == "dmabuf" and values["gpu_kernel_module_type"] == "proprietary":
        errors.add("gpu_kernel_module_type", "dmabuf needs the open GPU kernel modules (open or auto), not proprietary")
    for field in ("gpu_driver_repository", "gpu_driver_image", "gpu_driver_version"):
        if field in provided and not values[field]:
            errors.add(field, "must not be empty")


_REPOSITORY = re.compile(r"^[a-zA-Z0-9.\-/:]+\Z")
_IMAGE = re.compile(r"^[a-zA-Z0-9\-_.]+\Z")
# An image tag, or a digest (names.IMAGE_DIGEST), which the operators pin with '@'. The DOCA driver takes only these
# two: the Network Operator appends the node pool's OS and architecture to any version not starting with 'sha256'
# (pkg/state/state_ofed.go getMofedDriverImageName), so 'tag@sha256:...' would name an image that does not exist.
_VERSION = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}|sha256:[a-f0-9]{64})\Z")
_DRIVER_VERSION_HINT = "image tag or digest (sha256:<64 hex digits>; not tag@sha256:, the operator appends the node's OS to a tag)"
# The other images also take 'tag@sha256:...' (the tag kept for reading): the Network Operator joins a non-digest
# version with ':' (pkg/render/render.go imagePath), giving image:tag@sha256:...; the GPU Operator adds no OS suffix to
# a driver version that contains 'sha256:' (controllers/object_controls.go resolveDriverTag, v24.9 to v25.3).
_PINNED_VERSION = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}(@sha256:[a-f0-9]{64})?|sha256:[a-f0-9]{64})\Z")


def _check_images(values, provided, errors):
    if values["nic_driver"] == "doca":
        if not _REPOSITORY.match(values["doca_driver_repository"] or ""):
            errors.add("doca_driver_repository", "%r is not a valid image repository" % values["doca_driver_repository"])
        if not _IMAGE.match(values["doca_driver_image"] or ""):
            errors.add("doca_driver_image", "%r is not a valid image name" % values["doca_driver_image"])
        if not _VERSION.match(values["doca_driver_version"] or ""):
            errors.add("doca_driver_version", "%r is not a valid %s" % (values["doca_driver_version"], _DRIVER_VERSION_HINT))
    else:
        for field in ("doca_driver_repository", "doca_driver_image", "doca_driver_version"):
            if field in provided:
                errors.add(field, "unused with gpudirect_rdma_nic_driver: inbox (no driver container)")
    for field, pattern, what in (("gpu_driver_repository", _REPOSITORY, "image repository"),
                                 ("gpu_driver_image", _IMAGE, "image name"),
                                 ("gpu_driver_version", _PINNED_VERSION, "image tag, tag@sha256:<64 hex digits> or sha256:<64 hex digits>")):
        if values.get(field) and not pattern.match(values[field]):
            errors.add(field, "%r is not a valid %s" % (values[field], what))
    for secret in values["image_pull_secrets"]:
        if not isinstance(secret, str) or not re.match(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\Z", secret):
            errors.add("image_pull_secrets", "%r is not a Secret name (lowercase letters, digits, '-' and '.')" % (secret,))
    for component, override in values["image_overrides"].items():
        if component not in IMAGE_COMPONENTS:
            errors.add("image_overrides", "unknown component %r (known: %s)" % (component, ", ".join(IMAGE_COMPONENTS)))
            continue
        if not isinstance(override, dict) or set(override) - {"repository", "image", "version"}:
            errors.add("image_overrides", "%s must be a mapping with repository, image and version" % component)
            continue
        checks = (("repository", _REPOSITORY), ("image", _IMAGE), ("version", _PINNED_VERSION))
        for key, pattern in checks:
            if key in override and not pattern.match(str(override[key])):
                errors.add("image_overrides", "%s.%s %r is not valid" % (component, key, override[key]))
    if values.get("nfd_operand_image") is not None and not names.is_image_reference(values["nfd_operand_image"]):
        errors.add("nfd_operand_image", "%r is not a valid image reference (%s)" % (values["nfd_operand_image"], names.IMAGE_REFERENCE_HINT))


# MachineConfigPools of control-plane nodes (machine-config-operator: master, and arbiter on two-node clusters).
CONTROL_PLANE_POOLS = ("master", "control-plane", "arbiter")


def _check_machineconfigs(values, provided, errors):
    wanted = values["machineconfigs"]
    for item in wanted:
        if item not in MACHINECONFIG_ITEMS:
            errors.add("machineconfigs", "unknown item %r (known: %s)" % (item, ", ".join(MACHINECONFIG_ITEMS)))
    if not values["apply_machineconfigs"]:
        if wanted:
            errors.add("machineconfigs", "%s reboot every node of the %s pool: set gpudirect_rdma_apply_machineconfigs: true to opt in"
                       % (", ".join(wanted), values["machineconfig_pool"]))
        if values["udev_rules"]:
            errors.add("udev_rules", "persistent names are a MachineConfig (pool reboot): set gpudirect_rdma_apply_machineconfigs: true "
                                     "and list persistent_names in gpudirect_rdma_machineconfigs")
    elif not wanted:
        errors.add("machineconfigs", "gpudirect_rdma_apply_machineconfigs is true but nothing is listed (%s)" % ", ".join(MACHINECONFIG_ITEMS))
    if values["apply_machineconfigs"] and wanted and not values["machineconfig_allow_control_plane"]:
        fields = ("machineconfig_pool", "machineconfig_role") + (("memlock_pool",) if "crio_memlock" in wanted else ())
        for field in fields:
            if values[field] in CONTROL_PLANE_POOLS:
                errors.add(field, "%r is the control-plane pool: its MachineConfigs reboot the control-plane nodes and apply to "
                                  "every control-plane container; use the pool of your GPU nodes, or set "
                                  "gpudirect_rdma_machineconfig_allow_control_plane: true (compact clusters)" % values[field])
                break
    if values["udev_rules"] and "persistent_names" not in wanted and values["apply_machineconfigs"]:
        errors.add("udev_rules", "given but persistent_names is not listed in gpudirect_rdma_machineconfigs")
    if not re.match(r"^3\.[0-9]+\.[0-9]+\Z", values["ignition_version"] or ""):
        errors.add("ignition_version", "%r is not an Ignition 3.x version (MachineConfigs on OpenShift 4.6+ use 3.x)" % values["ignition_version"])


def _check_operator_settings(values, errors):
    for plugin in values["sriov_disable_plugins"]:
        if plugin not in ("mellanox", "intel"):
            errors.add("sriov_disable_plugins", "%r is not a SR-IOV config daemon plugin (mellanox, intel)" % plugin)
    if values["nic_vendor"] is not None and names.normalise_hex_id(values["nic_vendor"]) != names.MELLANOX_VENDOR_ID:
        errors.add("nic_vendor", "%r: only NVIDIA/Mellanox NICs (15b3) do GPUDirect RDMA here" % values["nic_vendor"])


class _NestedErrors(object):
    """Errors of the second fabric's ports, named as keys of gpudirect_rdma_second_fabric."""

    def __init__(self, errors, field):
        self.errors, self.field, self.messages = errors, field, errors.messages

    def add(self, field, message):
        key = {"macvlan_master": "master", "ipoib_master": "master"}.get(field, field)
        self.errors.add("%s.%s" % (self.field, key), message)


def _second_fabric(values, errors, warnings, require_facts):
    """The model of the other fabric's ports (gpudirect_rdma_second_fabric): the first fabric's values with the
    second's ports, names and range. Its groups join the NicClusterPolicy and the networks (rdma.compose_models)."""
    given = values["second_fabric"]
    nested = _NestedErrors(errors, "second_fabric")
    unknown = sorted(str(key) for key in given if key not in SECOND_FABRIC_KEYS)
    if unknown:
        errors.add("second_fabric", "unknown key %s (known: %s)" % (", ".join(unknown), ", ".join(SECOND_FABRIC_KEYS)))
        return None
    fabric = "infiniband" if values["fabric"] == "roce" else "roce"
    config = MATRIX[("shared_device", fabric)]
    sub = dict(values)
    sub.update({"fabric": fabric, "second_fabric": {}, "nic_selection": "manual", "nic_interfaces": [], "nic_device_ids": [], "nic_pci_addresses": [],
                "gpu_nic_affinity": [],
                "resource_names": [], "network_names": [], "ipam_ranges": [], "ipam_exclude": [],
                "ipam_range_start": None, "ipam_range_end": None, "ipam_gateway": None, "mtu": None,
                "macvlan_master": None, "ipoib_master": None, "macvlan_mode": FIELDS["macvlan_mode"].default})
    for key, field in (("nic_interfaces", "list"), ("nic_device_ids", "list"), ("ipam_range", "str"),
                       ("resource_name", "str"), ("network_name", "str"), ("master", "str")):
        if given.get(key) is None:
            continue
        value = _coerce("second_fabric.%s" % key, Field(field), given[key], errors)
        if value is not None:
            sub["macvlan_master" if key == "master" and fabric == "roce" else "ipoib_master" if key == "master" else key] = value
    sub["resource_name"] = sub["resource_name"] if given.get("resource_name") else config.default_resource
    sub["network_name"] = sub["network_name"] if given.get("network_name") else config.default_network
    if not given.get("ipam_range"):
        nested.add("ipam_range", "required: a whereabouts CIDR of its own for the %s network (for example 192.168.3.0/24)" % fabric)
    if not (given.get("nic_interfaces") or given.get("nic_device_ids")):
        nested.add("nic_interfaces", "required: the %s ports (interface names, or nic_device_ids with master)" % fabric)
    before = len(errors.messages)
    _check_names(sub, nested)
    if given.get("ipam_range"):
        _check_range("second_fabric.ipam_range", str(sub["ipam_range"]), values, errors)
    if len(errors.messages) > before or not (given.get("ipam_range") and (given.get("nic_interfaces") or given.get("nic_device_ids"))):
        return None
    sub["selection"] = nics.resolve(sub, {"macvlan_master", "ipoib_master"}, nested, warnings, require_facts=require_facts)
    if len(errors.messages) > before:
        return None
    _assign_rail_ranges(sub, nested)
    _check_against_first_fabric(values, sub, errors)
    return sub


def _check_against_first_fabric(values, sub, errors):
    """The two fabrics' ports, resources, networks and address ranges must differ: one pod resource or network name
    for two fabrics would make the device plugin or the network operator serve only one of them."""
    first = (values.get("selection") or {}).get("groups") or []
    second = sub["selection"]["groups"]
    for key, field, what in (("interfaces", "nic_interfaces", "port"), ("resource_name", "resource_name", "resource"),
                             ("network_name", "network_name", "network")):
        taken = set()
        for group in first:
            taken |= set(group[key]) if isinstance(group[key], list) else {group[key]}
        for group in second:
            mine = set(group[key]) if isinstance(group[key], list) else {group[key]}
            for item in sorted(mine & taken):
                errors.add("second_fabric.%s" % field, "%s is also a %s of the %s fabric: give the %s fabric its own"
                           % (item, what, values["fabric"], sub["fabric"]))
    ranges = [ipaddress.ip_network(g["ipam_range"], strict=False) for g in first if g.get("ipam_range")]
    for group in second:
        if not group.get("ipam_range"):
            continue
        mine = ipaddress.ip_network(group["ipam_range"], strict=False)
        for other in ranges:
            if other.version == mine.version and other.overlaps(mine):
                errors.add("second_fabric.ipam_range", "%s overlaps %s of the %s fabric: the two networks would hand out the "
                                                       "same addresses" % (mine, other, values["fabric"]))


def build(variables, require_facts=True):
    """Normalise and validate. Returns (model, errors, warnings); model is None when errors exist.

    ``require_facts=False`` lets a preflight accept ``nic_selection: auto`` before facts exist.
    """
    values, provided, errors = normalise(variables)
    warnings = []
    _check_choices(values, errors)
    _check_scoped(values, provided, errors)
    # Checks that do not need a valid method/fabric run regardless, so every error shows at once.
    _check_numbers(values, provided, errors)
    _check_mtu(values, errors)
    _check_ipam(values, errors)
    _check_names(values, errors)
    _check_node_selector(values, errors)
    _check_gpu(values, provided, errors)
    _check_images(values, provided, errors)
    _check_machineconfigs(values, provided, errors)
    _check_operator_settings(values, errors)
    if (values["method"], values["fabric"]) in MATRIX:
        values["selection"] = nics.resolve(values, provided, errors, warnings, require_facts=require_facts)
        if not errors.messages:
            _assign_rail_ranges(values, errors)
        if values["second_fabric"] and values["method"] == "shared_device" and not errors.messages:
            values["second_fabric_model"] = _second_fabric(values, errors, warnings, require_facts)
    else:
        nics.normalise_facts(values["nic_facts"], errors)
    if errors.messages:
        return None, errors.messages, warnings
    values["provided"] = sorted(provided)
    return values, [], warnings
