# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""API identities, phases, naming rules and name checks shared by the renderers."""


import re

from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary

VARIABLE_PREFIX = "gpudirect_rdma_"

METHODS = ("shared_device", "host_device", "sriov_legacy")
FABRICS = ("roce", "infiniband")

API_NFD = "nfd.openshift.io/v1"
API_SRIOV = "sriovnetwork.openshift.io/v1"
API_MELLANOX = "mellanox.com/v1alpha1"
API_NVIDIA = "nvidia.com/v1"
API_MCO = "machineconfiguration.openshift.io/v1"

NIC_CLUSTER_POLICY_NAME = "nic-cluster-policy"  # the Network Operator reconciles only this name
SRIOV_OPERATOR_CONFIG_NAME = "default"  # the SR-IOV operator reconciles only this name
MELLANOX_VENDOR_ID = vocabulary.MELLANOX_VENDOR_ID
SRIOV_RESOURCE_PREFIX = "openshift.io"  # fixed by the SR-IOV Network Operator on OpenShift
MCO_ROLE_LABEL = "machineconfiguration.openshift.io/role"
# Both operators take a digest in an image's `version` and join it with '@' instead of ':' (network-operator
# pkg/render/render.go imagePath, gpu-operator api/nvidia/v1 imagePath): "sha256:<64 hex digits>".
IMAGE_DIGEST = re.compile(r"^sha256:[a-f0-9]{64}\Z")
# A whole image reference: name[:tag][@sha256:<64 hex>] (distribution/reference grammar, lowercase-insensitive here). A
# reference with both keeps the tag for reading; CRI-O pulls it by the digest (cri-o/cri-o#3060).
IMAGE_REFERENCE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]*(:[0-9]+)?(/[A-Za-z0-9][A-Za-z0-9._\-]*)*"
                             r"(:[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127})?(@sha256:[a-f0-9]{64})?\Z")
IMAGE_REFERENCE_HINT = "name[:tag][@sha256:<64 hex digits>], e.g. registry.example.com/ns/image:1.0@sha256:..."


def is_image_reference(value):
    return isinstance(value, str) and bool(IMAGE_REFERENCE.match(value))


def is_pinned_image(reference):
    """True when an image reference carries a digest (name@sha256:... or name:tag@sha256:...)."""
    return isinstance(reference, str) and bool(re.search(r"@sha256:[a-f0-9]{64}\Z", reference))


def image_reference(repository, image, version):
    """repository/image:tag, or repository/image@sha256:... when the version is a digest (as the operators join
    them)."""
    separator = "@" if IMAGE_DIGEST.match(str(version)) else ":"
    return "%s/%s%s%s" % (str(repository).rstrip("/"), image, separator, version)


# Apply order. Host preparation first (one pool reboot before drivers load), then operator
# instances, the NIC driver before the GPU driver (peermem waits for it), SR-IOV pool settings
# before the policies that create VFs, and the network CRs last because they need the resources.
PHASES = (
    ("machineconfig", 10),
    ("nfd", 20),
    ("sriov_operator", 30),
    ("nic_cluster_policy", 40),
    ("gpu_cluster_policy", 50),
    ("sriov_pool", 60),
    ("sriov_policy", 70),
    ("network", 80),
)
PHASE_BASE = dict(PHASES)
# The sync wave of the OLM objects, which come before every phase (the operators must exist first), and of the
# verification Job after the last phase (render/gitops.py annotates both).
OLM_WAVE = 0
VERIFICATION_WAVE = max(base for _phase, base in PHASES) + 10

# File numbers, gapped as NVIDIA/gpu-operator numbers its manifests (assets/state-*/0100_..., 0200_...), so that a new
# object or operator takes a free number and no other file is renamed: four digits, the object's sync wave x 100 plus
# its position. The objects of a phase are <base>00, <base>01 ... (1000 the first MachineConfig, 8000 the first
# network); the OLM objects (wave 0) take a block of OLM_BLOCK numbers per operator in install order (0010 Namespace,
# 0011 OperatorGroup, 0012 Subscription of the first, 0020 ... of the second; GitOps adds an InstallPlan approver at
# 0015-0018 of its block), room for 99 operators; the verification Job is 9000.
PHASE_SLOTS = 100
OLM_BLOCK = 10
# Within an operator's block: its Namespace, OperatorGroup, Subscription, then the GitOps InstallPlan approver.
OLM_POSITIONS = {"Namespace": 0, "OperatorGroup": 1, "Subscription": 2}
OLM_APPROVER_POSITION = 5


def phase_order(phase, position):
    """The number of the ``position``-th object (from 0) of a render phase: PHASE_BASE x PHASE_SLOTS + position."""
    return PHASE_BASE[phase] * PHASE_SLOTS + position


def olm_order(operator_index, position):
    """The number of an OLM object of the ``operator_index``-th operator (from 0, install order) at ``position`` of its
    block (OLM_POSITIONS, OLM_APPROVER_POSITION ...)."""
    return (operator_index + 1) * OLM_BLOCK + position


def verification_order(position=0):
    return VERIFICATION_WAVE * PHASE_SLOTS + position


MANAGED_BY_LABEL = vocabulary.MANAGED_BY_LABEL
MANAGED_BY_VALUE = vocabulary.MANAGED_BY_VALUE

# Kinds that carry the method-specific state and are safe to delete on a method switch, in the
# order they must go: networks first (they reference resources), then the VF policies, then the
# device-plugin singleton (deleted and re-created, as the chapter does on a switch).
NETWORK_KINDS = ("MacvlanNetwork", "IPoIBNetwork", "HostDeviceNetwork", "SriovNetwork", "SriovIBNetwork")
SRIOV_POLICY_KINDS = ("SriovNetworkNodePolicy", "SriovNetworkPoolConfig")
KIND_API = {"MacvlanNetwork": API_MELLANOX, "IPoIBNetwork": API_MELLANOX, "HostDeviceNetwork": API_MELLANOX,
            "SriovNetwork": API_SRIOV, "SriovIBNetwork": API_SRIOV, "SriovNetworkNodePolicy": API_SRIOV,
            "SriovNetworkPoolConfig": API_SRIOV}


# Kinds the collection reads by name only (GET), never by list or watch, so that its role needs neither: a list of
# MachineConfigs returns the controller's MachineConfigs too, which carry the cluster's pull secret (the template
# controller renders it into the MachineConfigs it generates: openshift/machine-config-operator docs/PullSecret.md).
# The names to read come from the render model (render/plan.py owned_machineconfig_names).
READ_BY_NAME_KINDS = ((API_MCO, "MachineConfig"),)


# OpenShift runs Multus with namespaceIsolation on (openshift/cluster-network-operator
# bindata/network/multus/multus.yaml, the daemon config's globalNamespaces): a pod may attach a
# NetworkAttachmentDefinition of its own namespace or of these namespaces, any other is refused
# (k8snetworkplumbingwg/multus-cni pkg/k8sclient/k8sclient.go, GetNetworkDelegates).
MULTUS_GLOBAL_NAMESPACES = ("default", "openshift-multus", "openshift-sriov-network-operator")


def attachable_networks(networks, namespace):
    """The plan summary's ``networks`` a pod in ``namespace`` may attach, each with ``annotation`` set to how the pod's
    k8s.v1.cni.cncf.io/networks annotation names it: those of the pod's namespace by name; when it has none, those of
    Multus' global namespaces as <namespace>/<name> (the collection's own namespaces, e.g. verify's gpudirect-verify,
    hold no network of their own)."""
    own = [dict(n, annotation=n.get("annotation") or n.get("name")) for n in networks or []
           if n.get("namespace") == namespace]
    if own:
        return own
    return [dict(n, annotation="%s/%s" % (n["namespace"], n.get("annotation") or n.get("name")))
            for n in networks or [] if n.get("namespace") in MULTUS_GLOBAL_NAMESPACES]


def managed_kinds(which):
    """'<apiVersion>/<Kind>' of the kinds the collection prunes, in apply order (prune and teardown go in reverse):
    ``networks`` the network CRs, ``sriov`` the SR-IOV pool config and node policies, ``rdma`` both."""
    groups = {"networks": list(NETWORK_KINDS), "sriov": list(reversed(SRIOV_POLICY_KINDS)),
              "rdma": list(reversed(SRIOV_POLICY_KINDS)) + list(NETWORK_KINDS)}
    if which not in groups:
        raise ValueError("managed_kinds: %r is not rdma, sriov or networks" % (which,))
    kinds = groups[which]
    return ["%s/%s" % (KIND_API[kind], kind) for kind in kinds]


_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
# Device plugin resource names: SR-IOV operator allows [A-Za-z0-9_]; the kubelet wants the part
# after the prefix to begin and end alphanumeric (qualified name), at most 63 characters.
_RESOURCE_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_]*[A-Za-z0-9])?\Z")
_RESOURCE_PREFIX = _DNS1123_SUBDOMAIN
# Linux allows almost any byte in an interface name; we accept the names real NICs get, because they end up in
# text that runs as root on nodes (udev rules, CNI config) and may come from facts pods (untrusted input).
_IFNAME = re.compile(r"^[A-Za-z0-9_.-]{1,15}\Z")
_RDMA_DEVICE = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")
# Characters that would end or escape a quoted value in udev rules, TOML, JSON or shell on a node.
_NODE_TEXT_FORBIDDEN = re.compile(r"[\"'\\,\x00-\x1f\x7f]")
_LABEL_KEY_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")


def variable(field):
    """The Ansible variable name users set for a model field."""
    return VARIABLE_PREFIX + field


def is_dns1123_label(value):
    return isinstance(value, str) and len(value) <= 63 and bool(_DNS1123_LABEL.match(value))


def is_dns1123_subdomain(value):
    return isinstance(value, str) and len(value) <= 253 and bool(_DNS1123_SUBDOMAIN.match(value))


def is_resource_name(value):
    return isinstance(value, str) and len(value) <= 63 and bool(_RESOURCE_NAME.match(value))


def is_resource_prefix(value):
    return isinstance(value, str) and len(value) <= 253 and bool(_RESOURCE_PREFIX.match(value))


def is_ifname(value):
    return isinstance(value, str) and value not in (".", "..") and bool(_IFNAME.match(value))


def is_rdma_device(value):
    return isinstance(value, str) and bool(_RDMA_DEVICE.match(value))


def node_text(value, what):
    """``value`` for text that a node reads as configuration; ValueError when it holds a quote, backslash, comma or
    control character (a renderer's last line of defence: inputs are checked against stricter patterns first)."""
    if not isinstance(value, str) or _NODE_TEXT_FORBIDDEN.search(value):
        raise ValueError("%s %r must not contain quotes, backslashes, commas or control characters" % (what, value))
    return value


normalise_pci_address = vocabulary.normalise_pci_address
normalise_hex_id = vocabulary.user_hex_id


def is_label_key(key):
    if not isinstance(key, str) or not key:
        return False
    prefix, _sep, name = key.rpartition("/")
    if prefix and not is_dns1123_subdomain(prefix):
        return False
    return len(name) <= 63 and bool(_LABEL_KEY_NAME.match(name))


def is_label_value(value):
    return isinstance(value, str) and len(value) <= 63 and bool(_LABEL_VALUE.match(value))


def object_key(manifest):
    """Identity of an object: (group, kind, namespace, name); the API version is not part of it."""
    group = manifest.get("apiVersion", "").rpartition("/")[0]
    meta = manifest.get("metadata") or {}
    return (group, manifest.get("kind"), meta.get("namespace") or "", meta.get("name"))


def numbered_file_name(order, manifest):
    """<order, four digits>-<kind>-<name>.yaml: sorting the names sorts the objects in apply order."""
    return "%04d-%s-%s.yaml" % (order, manifest["kind"].lower(), manifest["metadata"]["name"])


def file_name(entry):
    """numbered_file_name of one rendered entry ({"order", "manifest"})."""
    return numbered_file_name(entry["order"], entry["manifest"])


def kebab(value):
    """A resource name turned into a DNS-1123 label fragment (rdma_shared_device_eth -> rdma-shared-device-eth)."""
    text = re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")
    return text[:63].rstrip("-")


def label_text(value):
    """A label value as the API wants it: YAML booleans become "true"/"false"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
