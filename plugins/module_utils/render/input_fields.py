# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The input model's one table: every gpudirect_rdma_* variable defined once, with its type, default, choices, the
text of docs/input-model.md and, for variables that mean something only for some configurations, where it applies.

render/model.py normalises and validates with it; hack/gen_argument_specs.py writes the role argument specs (and from
them the AWX surveys) and the tables of docs/input-model.md from it, rows in table order within each section.
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import releases
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.rdma import MATRIX

# crio_memlock is opt-in: it lifts the locked-memory limit of every container of a pool (issue 20 point 7).
DEFAULT_MACHINECONFIGS = ["irdma_blacklist"]
# The pool that gets the CRI-O memlock drop-in: a custom pool of the RDMA nodes only
# (deploy/machineconfigpool-gpudirect-rdma.yml).
DEFAULT_MEMLOCK_POOL = "gpudirect-rdma"
# OpenShift's default cluster and service networks; a secondary range inside them breaks routing.
DEFAULT_CLUSTER_NETWORK_CIDRS = ["10.128.0.0/14", "172.30.0.0/16"]

# The sections of docs/input-model.md, in page order; every field names one.
DOC_SECTIONS = ("Configuration",
                "NIC selection",
                "Resources and networks",
                "IPAM (whereabouts)",
                "Link settings",
                "Device plugins and VFs",
                "Operators",
                "MachineConfigs (reboot: opt-in)",
                "Node groups")


class Field:
    """One variable.

    ``kind``, ``default`` (a value, or a callable of the values known so far: fields are defaulted in table order)
    and ``choices`` drive normalisation; ``section``, ``shown_default``, ``configurations`` (the "Applies to"
    column, or None) and ``meaning`` are its row of docs/input-model.md; ``scope`` (a predicate on method and
    fabric, or None for every configuration) with ``scope_text`` says where it means something: set elsewhere, it
    is an error that quotes ``scope_text``.
    """

    def __init__(self, kind, default=None, choices=None, *, section, shown_default, meaning, configurations=None,
                 scope=None, scope_text=None):
        self.kind = kind
        self.default = default
        self.choices = choices
        self.section = section
        self.shown_default = shown_default
        self.meaning = meaning
        self.configurations = configurations
        self.scope = scope
        self.scope_text = scope_text


def _release_doca(values, key):
    """The DOCA driver image of the Network Operator release in use (render/releases.py)."""
    return releases.network_operator_images(values.get("network_operator_version"))["doca_driver"][key]


def _per_config(attribute):
    def default(values):
        entry = MATRIX.get((values.get("method"), values.get("fabric")))
        return getattr(entry, attribute) if entry else None
    return default


FIELDS = {
    "method": Field(
        "str", None, names.METHODS,
        section="Configuration", shown_default="required",
        meaning="`shared_device`, `host_device` or `sriov_legacy` (see [method-chooser.md](method-chooser.md))"),
    "fabric": Field(
        "str", None, names.FABRICS,
        section="Configuration", shown_default="required",
        meaning="`roce` or `infiniband`"),
    "nic_selection": Field(
        "str", "manual", ("manual", "auto"),
        section="NIC selection", shown_default="`manual`",
        meaning="`manual`: use the lists below. `auto`: derive ports from `gpudirect_rdma_nic_facts`"),
    "nic_interfaces": Field(
        "list", [],
        section="NIC selection", shown_default="`[]`",
        meaning=("PF netdev names (`ens8f0np0`, `ibs2f0`). Shared device: `ifNames`; SR-IOV: "
                 "`nicSelector.pfNames`; host device: only with NIC facts, which turn the names into "
                 "`pciAddresses` (the SR-IOV device plugin knows PF names only for VFs)")),
    "nic_pci_addresses": Field(
        "list", [],
        section="NIC selection", shown_default="`[]`",
        meaning=("PF PCI addresses (`0000:a0:00.0`); host device (`pciAddresses`) and SR-IOV "
                 "(`nicSelector.rootDevices`) only")),
    "nic_device_ids": Field(
        "list", [],
        section="NIC selection", shown_default="`[]`",
        meaning=("PCI device IDs (`101b`, `1021`, `a2dc`); `deviceIDs`/`devices`, or SR-IOV `nicSelector.deviceID` "
                 "(one)")),
    "nic_vendor": Field(
        "str", names.MELLANOX_VENDOR_ID,
        section="NIC selection", shown_default="`15b3`",
        meaning="Only NVIDIA/Mellanox is accepted"),
    "nic_facts": Field(
        "dictlist", [],
        section="NIC selection", shown_default="`[]`",
        meaning="Collected port facts (below). With `manual` they are used to cross-check the lists"),
    "gpu_nic_affinity": Field(
        "dictlist", [],
        section="NIC selection", shown_default="`[]`",
        meaning="GPU-to-NIC relations; with `auto`, only the nearest NIC of each GPU is chosen"),
    # shared_device only: the other fabric's ports, served by the same NicClusterPolicy (SECOND_FABRIC_KEYS).
    # The chapter's shared-device policy lists rdma_shared_device_eth and rdma_shared_device_ib side by side.
    "second_fabric": Field(
        "dict", {},
        section="NIC selection", shown_default="`{}`",
        meaning=("Shared device only: the other fabric's ports, served by the same NicClusterPolicy (keys "
                 "`nic_interfaces` or `nic_device_ids` with `master`, `ipam_range` required; `resource_name`, "
                 "`network_name` default to that fabric's)"),
        scope=lambda m, f: m == "shared_device",
        scope_text="shared_device"),
    "resource_name": Field(
        "str", _per_config("default_resource"),
        section="Resources and networks", shown_default="per configuration (below)",
        meaning="Device plugin resource, without prefix; `[A-Za-z0-9_]`, begins and ends alphanumeric, at most 63"),
    "resource_prefix": Field(
        "str", _per_config("resource_prefix"),
        section="Resources and networks", shown_default="`rdma` (shared), `nvidia.com` (host device)",
        meaning="SR-IOV resources are always `openshift.io/` (setting it there is an error)",
        scope=lambda m, f: m != "sriov_legacy",
        scope_text="shared_device and host_device; SR-IOV resources always use openshift.io/"),
    "network_name": Field(
        "str", _per_config("default_network"),
        section="Resources and networks", shown_default="per configuration",
        meaning="Network CR name (DNS-1123 label)"),
    "network_namespaces": Field(
        "list", ["default"],
        section="Resources and networks", shown_default="`[default]`",
        meaning=("Namespaces that get the NetworkAttachmentDefinition. With more than one, one network per "
                 "namespace named `<network>-<namespace>`")),
    "resource_names": Field(
        "list", [],
        section="Resources and networks", shown_default="`[]`",
        meaning="One resource per selected port (\"rails\"), in port order; duplicates are an error"),
    "network_names": Field(
        "list", [],
        section="Resources and networks", shown_default="`<network_name>-1..n`",
        meaning="One network per rail, same length as `resource_names`"),
    "ipam_range": Field(
        "str",
        section="IPAM (whereabouts)", shown_default="required (or `_ranges`)",
        meaning=("CIDR; host bits are allowed (whereabouts starts there), IPv4 or IPv6. With several rails it is "
                 "split into equal aligned subnets, one per rail in rail order (`/22` for three rails: three "
                 "`/24`), so no two rails hand out the same address")),
    "ipam_ranges": Field(
        "list", [],
        section="IPAM (whereabouts)", shown_default="`[]`",
        meaning=("Several rails only, instead of `gpudirect_rdma_ipam_range`: one CIDR per rail, in rail order, "
                 "none overlapping another or the cluster networks. With several rails `_range_start`, "
                 "`_range_end` and `_gateway` are refused; each rail keeps the excludes inside its own range.")),
    "ipam_range_start": Field(
        "str",
        section="IPAM (whereabouts)", shown_default="unset",
        meaning="Inside the range, start not after end"),
    "ipam_range_end": Field(
        "str",
        section="IPAM (whereabouts)", shown_default="unset",
        meaning="Inside the range, start not after end"),
    "ipam_exclude": Field(
        "list", [],
        section="IPAM (whereabouts)", shown_default="`[]`",
        meaning="CIDRs inside the range, not overlapping each other"),
    "ipam_gateway": Field(
        "str",
        section="IPAM (whereabouts)", shown_default="unset",
        meaning="Inside the range"),
    "cluster_network_cidrs": Field(
        "list", DEFAULT_CLUSTER_NETWORK_CIDRS,
        section="IPAM (whereabouts)", shown_default="`[10.128.0.0/14, 172.30.0.0/16]`",
        meaning="The range must not overlap these (set them to your cluster and service networks)"),
    # HostDeviceNetwork and IPoIBNetwork have no MTU field (network-operator api/v1alpha1 CRDs): the MTU goes only into
    # MacvlanNetwork and SriovNetworkNodePolicy. The IPoIB mode is the kernel's; it only bounds the SR-IOV policy MTU.
    "mtu": Field(
        "int",
        section="Link settings", shown_default="unset", configurations="shared/roce, sriov",
        meaning=("RoCE 576-9216; IPoIB datagram 576-4092, connected 576-65520. Rendered in MacvlanNetwork and "
                 "SriovNetworkNodePolicy; refused for host_device and shared/infiniband, whose HostDeviceNetwork "
                 "and IPoIBNetwork have no MTU field"),
        scope=lambda m, f: m == "sriov_legacy" or (m == "shared_device" and f == "roce"),
        scope_text="shared_device over roce (MacvlanNetwork) and sriov_legacy (SriovNetworkNodePolicy)"),
    "macvlan_mode": Field(
        "str", "bridge", ("bridge", "private", "vepa", "passthru"),
        section="Link settings", shown_default="`bridge`", configurations="shared/roce",
        meaning="`bridge`, `private`, `vepa`, `passthru`",
        scope=lambda m, f: m == "shared_device" and f == "roce",
        scope_text="shared_device over roce (MacvlanNetwork)"),
    "macvlan_master": Field(
        "str",
        section="Link settings", shown_default="first interface", configurations="shared/roce",
        meaning="Master netdev of the macvlan network",
        scope=lambda m, f: m == "shared_device" and f == "roce",
        scope_text="shared_device over roce (MacvlanNetwork)"),
    "ipoib_master": Field(
        "str",
        section="Link settings", shown_default="first interface", configurations="shared/infiniband",
        meaning="Parent netdev of the IPoIB network",
        scope=lambda m, f: m == "shared_device" and f == "infiniband",
        scope_text="shared_device over infiniband (IPoIBNetwork)"),
    "ipoib_mode": Field(
        "str", "datagram", ("datagram", "connected"),
        section="Link settings", shown_default="`datagram`", configurations="sriov/infiniband",
        meaning=("The IPoIB mode your nodes run; only bounds `gpudirect_rdma_mtu` (the collection never sets the "
                 "mode)"),
        scope=lambda m, f: m == "sriov_legacy" and f == "infiniband",
        scope_text=("sriov_legacy over infiniband, where it bounds gpudirect_rdma_mtu; the collection never sets "
                    "the IPoIB mode")),
    "vlan": Field(
        "int",
        section="Link settings", shown_default="`0`", configurations="sriov/roce",
        meaning="SriovNetwork VLAN, 0-4094",
        scope=lambda m, f: m == "sriov_legacy" and f == "roce",
        scope_text="sriov_legacy over roce (SriovNetwork)"),
    "rdma_hca_max": Field(
        "int", 63,
        section="Device plugins and VFs", shown_default="`63`", configurations="shared",
        meaning="Pods per shared HCA, at least 1",
        scope=lambda m, f: m == "shared_device",
        scope_text="shared_device (rdmaSharedDevicePlugin)"),
    "num_vfs": Field(
        "int",
        section="Device plugins and VFs", shown_default="required", configurations="sriov",
        meaning="VFs per PF, 1-128, and at most `total_vfs` on a non-Mellanox PF; an error with other methods",
        scope=lambda m, f: m == "sriov_legacy",
        scope_text="sriov_legacy (SriovNetworkNodePolicy); host_device and shared_device use the PF itself"),
    "sriov_policy_name": Field(
        "str",
        section="Device plugins and VFs", shown_default="`<resource>-policy`", configurations="sriov",
        meaning="SriovNetworkNodePolicy name",
        scope=lambda m, f: m == "sriov_legacy",
        scope_text="sriov_legacy"),
    "sriov_policy_priority": Field(
        "int", 90,
        section="Device plugins and VFs", shown_default="`90`", configurations="sriov",
        meaning="0-99",
        scope=lambda m, f: m == "sriov_legacy",
        scope_text="sriov_legacy"),
    "node_selector": Field(
        "dict", {"feature.node.kubernetes.io/pci-15b3.present": "true"},
        section="Device plugins and VFs", configurations="sriov",
        shown_default="`{feature.node.kubernetes.io/pci-15b3.present: \"true\"}`",
        meaning="Policy node selector, non-empty"),
    "sriov_pool_config": Field(
        "bool", False,
        section="Device plugins and VFs", shown_default="`false`", configurations="sriov",
        meaning="Render a SriovNetworkPoolConfig (implied by the two below)",
        scope=lambda m, f: m == "sriov_legacy",
        scope_text="sriov_legacy (SriovNetworkPoolConfig)"),
    "sriov_pool_max_unavailable": Field(
        "intorstr", 1,
        section="Device plugins and VFs", shown_default="`1`", configurations="sriov",
        meaning="Integer or percentage",
        scope=lambda m, f: m == "sriov_legacy",
        scope_text="sriov_legacy (SriovNetworkPoolConfig)"),
    "sriov_pool_rdma_mode": Field(
        "str", None, ("shared", "exclusive"),
        section="Device plugins and VFs", shown_default="unset", configurations="sriov",
        meaning="`shared` or `exclusive` (reboots the pool)",
        scope=lambda m, f: m == "sriov_legacy",
        scope_text="sriov_legacy (SriovNetworkPoolConfig)"),
    "nic_driver": Field(
        "str", "doca", ("doca", "inbox"),
        section="Operators", shown_default="`doca`",
        meaning="`doca`: the Network Operator's DOCA-OFED container (`ofedDriver`). `inbox`: no driver container"),
    "network_operator_version": Field(
        "str", "",
        section="Operators", shown_default="empty (the newest release, 26.4)",
        meaning=("Network Operator version whose component images the NicClusterPolicy names (docs/support.md). "
                 "The nvidia_network_operator role sets it from the installed CSV; set it for `render.yml`")),
    "doca_driver_repository": Field(
        "str", lambda values: _release_doca(values, "repository"),
        section="Operators", shown_default="the Network Operator release's (`nvcr.io/nvidia/mellanox`)",
        meaning=("Set them to pin another DOCA driver; `_version` takes a tag or a digest (`sha256:<64 hex "
                 "digits>`, pinned with `@`)")),
    "doca_driver_image": Field(
        "str", lambda values: _release_doca(values, "image"),
        section="Operators", shown_default="the Network Operator release's (`doca-driver`)",
        meaning=("Set them to pin another DOCA driver; `_version` takes a tag or a digest (`sha256:<64 hex "
                 "digits>`, pinned with `@`)")),
    "doca_driver_version": Field(
        "str", lambda values: _release_doca(values, "version"),
        section="Operators", shown_default="the Network Operator release's (`doca3.4.1-26.04-1.1.0.0-1` for 26.4)",
        meaning=("Set them to pin another DOCA driver; `_version` takes a tag or a digest (`sha256:<64 hex "
                 "digits>`, pinned with `@`)")),
    "image_pull_secrets": Field(
        "list", [],
        section="Operators", shown_default="`[]`",
        meaning=("Secret names (in the Network Operator's namespace) put as `imagePullSecrets` on every "
                 "NicClusterPolicy component: a mirror registry that needs credentials (docs/upgrades.md)")),
    "image_overrides": Field(
        "dict", {},
        section="Operators", shown_default="`{}`",
        meaning=("`{rdma_shared_device_plugin | sriov_device_plugin | ipoib_cni: {repository, image, version}}` on "
                 "top of the Network Operator release's images; `version` may be a digest (`sha256:...`)")),
    "gpu_rdma_mode": Field(
        "str", "dmabuf", ("dmabuf", "peermem"),
        section="Operators", shown_default="`dmabuf`",
        meaning=("`dmabuf`: `driver.rdma.enabled: false`, open kernel modules. `peermem`: `driver.rdma.enabled: "
                 "true` (nvidia-peermem)")),
    "gpu_use_host_mofed": Field(
        "bool", False,
        section="Operators", shown_default="`false`",
        meaning="`driver.rdma.useHostMofed`; only with `peermem` and `nic_driver: inbox`"),
    "gpu_kernel_module_type": Field(
        "str", lambda values: "auto" if values.get("gpu_rdma_mode") == "peermem" else "open",
        ("auto", "open", "proprietary"),
        section="Operators", shown_default="`open` (dmabuf), `auto` (peermem)",
        meaning="`proprietary` is rejected with dmabuf"),
    "gpu_operator_version": Field(
        "str", "",
        section="Operators", shown_default="empty (v25.3 and later)",
        meaning=("GPU Operator version the ClusterPolicy is rendered for; before 25.3 "
                 "`driver.useOpenKernelModules` replaces `kernelModuleType`. The nvidia_gpu_operator role sets it "
                 "from the installed CSV; set it for `render.yml`")),
    "driver_upgrade_max_parallel": Field(
        "int",
        section="Operators", shown_default="unset (GPU driver: 1 node, at most 25% unavailable; DOCA driver: 1 node)",
        meaning=("Nodes whose GPU or NIC driver reloads at the same time when an operator upgrade rolls the "
                 "drivers (`maxParallelUpgrades` and the GPU `maxUnavailable`)")),
    "gpu_gdrcopy": Field(
        "bool", False,
        section="Operators", shown_default="`false`",
        meaning="`gdrcopy.enabled`"),
    "gpu_cluster_policy_name": Field(
        "str", "gpu-cluster-policy",
        section="Operators", shown_default="`gpu-cluster-policy`",
        meaning="Name of the ClusterPolicy"),
    "gpu_driver_repository": Field(
        "str",
        section="Operators", shown_default="unset",
        meaning=("Pin the GPU driver image (needed on some OLM installs); `_version` takes a tag or a digest "
                 "(`sha256:...`)")),
    "gpu_driver_image": Field(
        "str",
        section="Operators", shown_default="unset",
        meaning=("Pin the GPU driver image (needed on some OLM installs); `_version` takes a tag or a digest "
                 "(`sha256:...`)")),
    "gpu_driver_version": Field(
        "str",
        section="Operators", shown_default="unset",
        meaning=("Pin the GPU driver image (needed on some OLM installs); `_version` takes a tag or a digest "
                 "(`sha256:...`)")),
    "nfd_namespace": Field(
        "str", "openshift-nfd",
        section="Operators", shown_default="`openshift-nfd`",
        meaning=("Namespace of the NodeFeatureDiscovery instance; the NFD operator's too unless `nfd_namespace` is "
                 "set")),
    "nfd_instance_name": Field(
        "str", "nfd-instance",
        section="Operators", shown_default="`nfd-instance`",
        meaning="Name of the NodeFeatureDiscovery instance"),
    "nfd_operand_image": Field(
        "str",
        section="Operators", shown_default="unset",
        meaning="Operand image: read it from the NFD CSV `alm-examples`; unset lets the operator choose"),
    "sriov_operator_namespace": Field(
        "str", "openshift-sriov-network-operator",
        section="Operators", shown_default="`openshift-sriov-network-operator`",
        meaning=("Namespace of the SR-IOV objects (SriovOperatorConfig, policies, networks); the SR-IOV Network "
                 "Operator's too unless `sriov_network_operator_namespace` is set")),
    "sriov_disable_plugins": Field(
        "list", [],
        section="Operators", shown_default="`[]`",
        meaning="`[mellanox]` for BlueField-3 in DPU mode"),
    "apply_machineconfigs": Field(
        "bool", False,
        section="MachineConfigs (reboot: opt-in)", shown_default="`false`",
        meaning="The opt-in. Without it any requested MachineConfig is an error"),
    "machineconfigs": Field(
        "list", lambda values: list(DEFAULT_MACHINECONFIGS) if values.get("apply_machineconfigs") else [],
        section="MachineConfigs (reboot: opt-in)", shown_default="`[irdma_blacklist]` when opted in",
        meaning=("Items: `irdma_blacklist` (kernel argument `module_blacklist=irdma`), `persistent_names` (udev "
                 "rules), `crio_memlock` (CRI-O `memlock=-1:-1`, for the nodes of `gpudirect_rdma_memlock_pool` "
                 "only)")),
    "udev_rules": Field(
        "dictlist", [],
        section="MachineConfigs (reboot: opt-in)", shown_default="`[]`",
        meaning="Extra `{address, name, link_layer or type}` entries for `persistent_names`"),
    "udev_rules_from_facts": Field(
        "bool", False,
        section="MachineConfigs (reboot: opt-in)", shown_default="`false`",
        meaning=("Also derive `persistent_names` rules from `nic_facts` (reported by pods on the nodes). Without "
                 "it, facts that would add rules are an error: review the rendered MachineConfig first")),
    "machineconfig_pool": Field(
        "str", "worker",
        section="MachineConfigs (reboot: opt-in)", shown_default="`worker`",
        meaning="Pool to wait for; also the SriovNetworkPoolConfig name"),
    "machineconfig_allow_control_plane": Field(
        "bool", False,
        section="MachineConfigs (reboot: opt-in)", shown_default="`false`",
        meaning=("Allow MachineConfigs for the `master` (or `arbiter`) pool; refused otherwise, since they reboot "
                 "and affect the control plane (for compact clusters whose GPU nodes are control-plane nodes)")),
    "machineconfig_role": Field(
        "str", lambda values: values.get("machineconfig_pool"),
        section="MachineConfigs (reboot: opt-in)", shown_default="the pool name",
        meaning="`machineconfiguration.openshift.io/role` label and `node-role.kubernetes.io/<role>` selectors"),
    "machineconfig_name": Field(
        "str", lambda values: "99-%s-gpudirect-rdma" % values.get("machineconfig_role"),
        section="MachineConfigs (reboot: opt-in)", shown_default="`99-<role>-gpudirect-rdma`",
        meaning="Name of the MachineConfig"),
    "memlock_pool": Field(
        "str", DEFAULT_MEMLOCK_POOL,
        section="MachineConfigs (reboot: opt-in)", shown_default="`gpudirect-rdma`",
        meaning=("Custom MachineConfigPool (and role) that gets `crio_memlock` in its own MachineConfig "
                 "`99-<pool>-gpudirect-rdma-memlock`: only the RDMA nodes, labelled "
                 "`node-role.kubernetes.io/<pool>`, lift the locked-memory limit of their containers. The "
                 "administrator labels the nodes and creates the pool "
                 "(`deploy/machineconfigpool-gpudirect-rdma.yml`); preflight refuses, before any write, a pool "
                 "that does not exist or selects no node. The pool name of `gpudirect_rdma_machineconfig_role` "
                 "(e.g. `worker`) puts memlock into the main MachineConfig of that whole pool")),
    "ignition_version": Field(
        "str", "3.2.0",
        section="MachineConfigs (reboot: opt-in)", shown_default="`3.2.0`",
        meaning="Must be 3.x"),
    # node groups (render/groups.py): each item the keys of groups.GROUP_KEYS on top of the shared variables
    "node_groups": Field(
        "dictlist", [],
        section="Node groups", shown_default="`[]` (one implicit group: the variables above)",
        meaning=("Several sets of nodes, each with its own configuration (docs/node-groups.md). Each item: `name` "
                 "(DNS-1123 label, at most 20), `node_selector` (required; no node in two groups) and any of "
                 "`method`, `fabric`, the NIC lists, resource and network names, IPAM, link, device-plugin and VF "
                 "keys, `machineconfig_pool`, `_role`, `_name` (without the `gpudirect_rdma_` prefix); the other "
                 "variables are shared. Names a group does not set get `_<group>` (resources) or `-<group>` "
                 "(networks, policies) appended")),
}
