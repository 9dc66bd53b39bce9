# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's shared vocabulary, standard library only: labels, vendor IDs, PCIe relations, normalisers and
how an object is named in messages. Renderers, the cluster layer and the modules import these; the hardware readers,
which run alone in a pod, keep their own copies, which tests/unit/test_one_definition.py holds equal to these."""


import re

# What the collection created carries this label; teardown and pruning touch nothing else.
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "gpudirect.openshift"
MANAGED_BY_SELECTOR = "%s=%s" % (MANAGED_BY_LABEL, MANAGED_BY_VALUE)

NVIDIA_GPU_VENDOR_ID = "10de"
MELLANOX_VENDOR_ID = "15b3"
# Node Feature Discovery's PCI vendor label (node-feature-discovery source/pci).
NFD_VENDOR_LABEL = "feature.node.kubernetes.io/pci-%s.present"

# The NFD labels the GPU Operator selects GPU nodes by (gpu-operator controllers/state_manager.go, gpuNodeLabels): the
# vendor label, or the class_vendor forms for display (0300) and 3D (0302) controllers that NFD writes when its
# deviceLabelFields include "class" (NVIDIA/gpu-operator#78, #114).
NFD_GPU_NODE_LABELS = tuple(NFD_VENDOR_LABEL % form for form in (
    NVIDIA_GPU_VENDOR_ID, "0302_" + NVIDIA_GPU_VENDOR_ID, "0300_" + NVIDIA_GPU_VENDOR_ID))
# Labels the GPU Operator puts only on nodes it found a GPU on: nvidia.com/gpu.present (commonGPULabelKey) and the
# operand deploy labels such as nvidia.com/gpu.deploy.device-plugin (controllers/state_manager.go, gpuStateLabels).
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
GPU_OPERATOR_NODE_LABELS = (GPU_PRESENT_LABEL, "nvidia.com/gpu.deploy.device-plugin")
# Device plugin resources of MIG slices under the mixed strategy (k8s-device-plugin: nvidia.com/mig-<profile>).
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"

# `nvidia-smi topo -m` PCIe relations, nearest first.
TOPOLOGY_RELATIONS = ("PIX", "PXB", "PHB", "NODE", "SYS")
TOPOLOGY_RANK = {name: rank for rank, name in enumerate(TOPOLOGY_RELATIONS, 1)}

_PCI_ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\Z")
_HEX4 = re.compile(r"^[0-9a-f]{4}\Z")


def nfd_vendor_label(vendor_id):
    """The NFD label of nodes with a PCI device of that vendor."""
    return NFD_VENDOR_LABEL % vendor_id


def normalise_pci_address(value):
    """'0d:00.0' or '0000:0D:00.0' -> '0000:0d:00.0'; None when malformed."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if text.count(":") == 1:
        text = "0000:" + text
    return text if _PCI_ADDRESS.match(text) else None


def hex_id(value):
    """A 16-bit PCI ID as four lower-case hex digits: '0x101B', '101b' and the number 0x101b (4123) all give '101b';
    None when malformed. For IDs typed by a user, see user_hex_id."""
    if isinstance(value, int) and not isinstance(value, bool):
        return "%04x" % value if 0 <= value <= 0xFFFF else None
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if text.startswith("0x"):
        text = text[2:]
    return text if _HEX4.match(text) else None


def user_hex_id(value):
    """hex_id of an ID from the variables, where YAML reads an unquoted ``1021`` as the decimal number 1021: such an
    integer stands for the digits the user typed ('1021'), not for its value."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = "%04d" % value if 0 <= value < 10000 else str(value)
    return hex_id(value)


def object_ref(obj):
    """"Kind namespace/name" (or "Kind name" for a cluster-scoped object) for messages and diff headers."""
    meta = obj.get("metadata") or {}
    name = meta.get("name") or (meta.get("generateName") or "") + "*"
    if meta.get("namespace"):
        return "%s %s/%s" % (obj.get("kind", "?"), meta["namespace"], name)
    return "%s %s" % (obj.get("kind", "?"), name)
