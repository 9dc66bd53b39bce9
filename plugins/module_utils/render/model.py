# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Input model: defaults, normalisation and validation of the gpudirect_rdma_* variables.

Every check runs and every error is reported, each naming the variable the user sets
(``gpudirect_rdma_ipam_range: 192.168.2.0/33 is not a valid CIDR``).
"""


import ipaddress
import json
import re

try:
    import yaml
    HAS_YAML = True
except ImportError:  # pragma: no cover - ansible-core requires PyYAML; the model then reads JSON only
    HAS_YAML = False

from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import nics
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.rdma import MATRIX
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.input_fields import FIELDS
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.input_ipam import (
    assign_rail_ranges, check_ipam, check_range)

MACHINECONFIG_ITEMS = ("irdma_blacklist", "persistent_names", "crio_memlock")
IMAGE_COMPONENTS = ("rdma_shared_device_plugin", "sriov_device_plugin", "ipoib_cni")

# Largest MTU per fabric: Ethernet jumbo frames; IPoIB datagram mode is bound by the 4 KiB IB MTU
# minus the 4-byte IPoIB header, connected mode by the IPoIB-CM limit.
MTU_LIMITS = {
    "roce": (576, 9216),
    ("infiniband", "datagram"): (576, 4092),
    ("infiniband", "connected"): (576, 65520),
}
MAX_MELLANOX_VFS = 128

# Everything else (driver, rdmaHcaMax, resource prefix, namespaces) is shared with the first fabric.
SECOND_FABRIC_KEYS = ("nic_interfaces", "nic_device_ids", "ipam_range", "resource_name", "network_name", "master")

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0", "")
_PERCENT = re.compile(r"^(100|[1-9]?[0-9])%\Z")


class Errors:
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


def _coerce(field, kind, value, errors):
    """Convert one provided value to the type ``kind`` (a Field kind); None (and an error) when impossible."""
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
            return [str(item).strip() if not isinstance(item, int) or isinstance(item, bool) else item
                    for item in value]
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
        if field in raw and raw[field] is not None and not (isinstance(raw[field], str) and not raw[field].strip()
                                                            and spec.kind != "list"):
            coerced = _coerce(field, spec.kind, raw[field], errors)
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
    for field, spec in FIELDS.items():
        where = spec.scope_text
        if spec.scope and field in provided and values[field] is not False and not spec.scope(method, fabric):
            if field in ("macvlan_mode", "macvlan_master") and fabric == "infiniband":
                errors.add(field,
                           "macvlan options do not apply to infiniband (IPoIB has no macvlan); only used by %s" % where)
            elif field == "mtu":
                errors.add(field,
                           "%s over %s renders %s objects, which have no MTU field; leave it unset (only used by %s)"
                           % (method, fabric, MATRIX[(method, fabric)].network_kind, where))
            elif field == "second_fabric":
                errors.add(field, "%s configures one fabric; only shared_device serves RoCE and InfiniBand ports from "
                                  "one NicClusterPolicy. Leave it unset, or use method shared_device" % method)
            elif field in ("ipoib_master", "ipoib_mode") and fabric == "roce":
                errors.add(field, "IPoIB options do not apply to roce; only used by %s" % where)
            else:
                errors.add(field, "only used by %s, not by %s over %s" % (where, method, fabric))


def _check_mtu(values, errors):
    mtu = values.get("mtu")
    if mtu is None or (values["method"], values["fabric"]) not in MATRIX:
        return
    if not FIELDS["mtu"].scope(values["method"], values["fabric"]):
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
    for field in ("nfd_instance_name", "gpu_cluster_policy_name", "machineconfig_name", "machineconfig_pool",
                  "sriov_policy_name"):
        if values.get(field) is not None and not names.is_dns1123_subdomain(values[field]):
            errors.add(field, "%r is not a valid object name (DNS-1123 subdomain)" % values[field])
    if values.get("memlock_pool") is not None and not (names.is_dns1123_label(values["memlock_pool"])
                                                       and names.is_label_value(values["memlock_pool"])):
        errors.add("memlock_pool",
                   "%r is not a valid MachineConfigPool and role name (DNS-1123 label)" % values["memlock_pool"])
    if values.get("machineconfig_role") is not None and not names.is_label_value(values["machineconfig_role"]):
        errors.add("machineconfig_role", "%r is not a valid label value" % values["machineconfig_role"])
    resources = values["resource_names"] or ([values["resource_name"]] if values.get("resource_name") else [])
    field = "resource_names" if values["resource_names"] else "resource_name"
    for resource in resources:
        if not names.is_resource_name(resource):
            errors.add(field, "%r is not a valid device plugin resource name: letters, digits and '_', "
                              "starting and ending with a letter or digit, at most 63 characters" % resource)
    duplicates = sorted({r for r in resources if resources.count(r) > 1})
    if duplicates:
        errors.add(field, "duplicate resource names: %s" % ", ".join(duplicates))
    networks = values["network_names"] or ([values["network_name"]] if values.get("network_name") else [])
    field = "network_names" if values["network_names"] else "network_name"
    for network in networks:
        if not names.is_dns1123_label(network):
            errors.add(field, "%r is not a valid network name (DNS-1123 label)" % network)
        elif len(namespaces) > 1 and not names.is_dns1123_label("%s-%s" % (network, max(namespaces, key=len))):
            errors.add(field, "%r is too long to be suffixed with each namespace name" % network)
    duplicates = sorted({n for n in networks if networks.count(n) > 1})
    if duplicates:
        errors.add(field, "duplicate network names: %s" % ", ".join(duplicates))
    if values["resource_names"] and values["network_names"] and len(values["resource_names"]) != len(
            values["network_names"]):
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
        if not names.is_label_value(value if isinstance(value, str) else str(value).lower() if isinstance(value, bool)
                                    else str(value)):
            errors.add("node_selector", "%r is not a valid label value for %s" % (value, key))


def _check_gpu(values, provided, errors):
    mode, driver = values["gpu_rdma_mode"], values["nic_driver"]
    if values["gpu_use_host_mofed"]:
        if driver == "doca":
            errors.add("gpu_use_host_mofed",
                       "must be false when the Network Operator provides the DOCA-OFED driver "
                       "(gpudirect_rdma_nic_driver: doca)")
        if mode == "dmabuf":
            errors.add("gpu_use_host_mofed", "only applies to gpudirect_rdma_gpu_rdma_mode: peermem")
    elif mode == "peermem" and driver == "inbox":
        errors.add("gpu_rdma_mode",
                   "peermem needs MLNX/DOCA-OFED: use gpudirect_rdma_nic_driver: doca, or dmabuf with the inbox driver")
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
_DRIVER_VERSION_HINT = ("image tag or digest (sha256:<64 hex digits>; not tag@sha256:, the operator appends the node's "
                        "OS to a tag)")
# The other images also take 'tag@sha256:...' (the tag kept for reading): the Network Operator joins a non-digest
# version with ':' (pkg/render/render.go imagePath), giving image:tag@sha256:...; the GPU Operator adds no OS suffix to
# a driver version that contains 'sha256:' (controllers/object_controls.go resolveDriverTag, v24.9 to v25.3).
_PINNED_VERSION = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}(@sha256:[a-f0-9]{64})?|sha256:[a-f0-9]{64})\Z")


def _check_images(values, provided, errors):
    if values["nic_driver"] == "doca":
        if not _REPOSITORY.match(values["doca_driver_repository"] or ""):
            errors.add("doca_driver_repository",
                       "%r is not a valid image repository" % values["doca_driver_repository"])
        if not _IMAGE.match(values["doca_driver_image"] or ""):
            errors.add("doca_driver_image", "%r is not a valid image name" % values["doca_driver_image"])
        if not _VERSION.match(values["doca_driver_version"] or ""):
            errors.add("doca_driver_version",
                       "%r is not a valid %s" % (values["doca_driver_version"], _DRIVER_VERSION_HINT))
    else:
        for field in ("doca_driver_repository", "doca_driver_image", "doca_driver_version"):
            if field in provided:
                errors.add(field, "unused with gpudirect_rdma_nic_driver: inbox (no driver container)")
    for field, pattern, what in (("gpu_driver_repository", _REPOSITORY, "image repository"),
                                 ("gpu_driver_image", _IMAGE, "image name"),
                                 ("gpu_driver_version", _PINNED_VERSION,
                                  "image tag, tag@sha256:<64 hex digits> or sha256:<64 hex digits>")):
        if values.get(field) and not pattern.match(values[field]):
            errors.add(field, "%r is not a valid %s" % (values[field], what))
    for secret in values["image_pull_secrets"]:
        if not isinstance(secret, str) or not re.match(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\Z", secret):
            errors.add("image_pull_secrets",
                       "%r is not a Secret name (lowercase letters, digits, '-' and '.')" % (secret,))
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
        errors.add("nfd_operand_image",
                   "%r is not a valid image reference (%s)" % (values["nfd_operand_image"], names.IMAGE_REFERENCE_HINT))


# MachineConfigPools of control-plane nodes (machine-config-operator: master, and arbiter on two-node clusters).
CONTROL_PLANE_POOLS = ("master", "control-plane", "arbiter")


def _check_machineconfigs(values, provided, errors):
    wanted = values["machineconfigs"]
    for item in wanted:
        if item not in MACHINECONFIG_ITEMS:
            errors.add("machineconfigs", "unknown item %r (known: %s)" % (item, ", ".join(MACHINECONFIG_ITEMS)))
    if not values["apply_machineconfigs"]:
        if wanted:
            errors.add("machineconfigs",
                       "%s reboot every node of the %s pool: set gpudirect_rdma_apply_machineconfigs: true to opt in"
                       % (", ".join(wanted), values["machineconfig_pool"]))
        if values["udev_rules"]:
            errors.add("udev_rules", "persistent names are a MachineConfig (pool reboot): set "
                                     "gpudirect_rdma_apply_machineconfigs: true and list persistent_names in "
                                     "gpudirect_rdma_machineconfigs")
    elif not wanted:
        errors.add("machineconfigs",
                   "gpudirect_rdma_apply_machineconfigs is true but nothing is listed (%s)"
                   % ", ".join(MACHINECONFIG_ITEMS))
    if values["apply_machineconfigs"] and wanted and not values["machineconfig_allow_control_plane"]:
        fields = ("machineconfig_pool", "machineconfig_role") + (("memlock_pool",) if "crio_memlock" in wanted else ())
        for field in fields:
            if values[field] in CONTROL_PLANE_POOLS:
                errors.add(field, "%r is the control-plane pool: its MachineConfigs reboot the control-plane nodes and "
                                  "apply to every control-plane container; use the pool of your GPU nodes, or set "
                                  "gpudirect_rdma_machineconfig_allow_control_plane: true (compact clusters)"
                                  % values[field])
                break
    if values["udev_rules"] and "persistent_names" not in wanted and values["apply_machineconfigs"]:
        errors.add("udev_rules", "given but persistent_names is not listed in gpudirect_rdma_machineconfigs")
    if not re.match(r"^3\.[0-9]+\.[0-9]+\Z", values["ignition_version"] or ""):
        errors.add("ignition_version",
                   "%r is not an Ignition 3.x version (MachineConfigs on OpenShift 4.6+ use 3.x)"
                   % values["ignition_version"])


def _check_operator_settings(values, errors):
    for plugin in values["sriov_disable_plugins"]:
        if plugin not in ("mellanox", "intel"):
            errors.add("sriov_disable_plugins", "%r is not a SR-IOV config daemon plugin (mellanox, intel)" % plugin)
    if values["nic_vendor"] is not None and names.normalise_hex_id(values["nic_vendor"]) != names.MELLANOX_VENDOR_ID:
        errors.add("nic_vendor", "%r: only NVIDIA/Mellanox NICs (15b3) do GPUDirect RDMA here" % values["nic_vendor"])


class _NestedErrors:
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
    sub.update({"fabric": fabric, "second_fabric": {}, "nic_selection": "manual", "nic_interfaces": [],
                "nic_device_ids": [], "nic_pci_addresses": [], "gpu_nic_affinity": [],
                "resource_names": [], "network_names": [], "ipam_ranges": [], "ipam_exclude": [],
                "ipam_range_start": None, "ipam_range_end": None, "ipam_gateway": None, "mtu": None,
                "macvlan_master": None, "ipoib_master": None, "macvlan_mode": FIELDS["macvlan_mode"].default})
    for key, kind in (("nic_interfaces", "list"), ("nic_device_ids", "list"), ("ipam_range", "str"),
                      ("resource_name", "str"), ("network_name", "str"), ("master", "str")):
        if given.get(key) is None:
            continue
        value = _coerce("second_fabric.%s" % key, kind, given[key], errors)
        if value is not None:
            sub["macvlan_master" if key == "master" and fabric == "roce" else "ipoib_master" if key == "master"
                else key] = value
    sub["resource_name"] = sub["resource_name"] if given.get("resource_name") else config.default_resource
    sub["network_name"] = sub["network_name"] if given.get("network_name") else config.default_network
    if not given.get("ipam_range"):
        nested.add("ipam_range",
                   "required: a whereabouts CIDR of its own for the %s network (for example 192.168.3.0/24)" % fabric)
    if not (given.get("nic_interfaces") or given.get("nic_device_ids")):
        nested.add("nic_interfaces", "required: the %s ports (interface names, or nic_device_ids with master)" % fabric)
    before = len(errors.messages)
    _check_names(sub, nested)
    if given.get("ipam_range"):
        check_range("second_fabric.ipam_range", str(sub["ipam_range"]), values, errors)
    if len(errors.messages) > before or not (given.get("ipam_range")
                                             and (given.get("nic_interfaces") or given.get("nic_device_ids"))):
        return None
    sub["selection"] = nics.resolve(sub, {"macvlan_master", "ipoib_master"}, nested, warnings,
                                    require_facts=require_facts)
    if len(errors.messages) > before:
        return None
    assign_rail_ranges(sub, nested)
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
                errors.add("second_fabric.ipam_range", "%s overlaps %s of the %s fabric: the two networks would hand "
                                                       "out the same addresses" % (mine, other, values["fabric"]))


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
    check_ipam(values, errors)
    _check_names(values, errors)
    _check_node_selector(values, errors)
    _check_gpu(values, provided, errors)
    _check_images(values, provided, errors)
    _check_machineconfigs(values, provided, errors)
    _check_operator_settings(values, errors)
    if (values["method"], values["fabric"]) in MATRIX:
        values["selection"] = nics.resolve(values, provided, errors, warnings, require_facts=require_facts)
        if not errors.messages:
            assign_rail_ranges(values, errors)
        if values["second_fabric"] and values["method"] == "shared_device" and not errors.messages:
            values["second_fabric_model"] = _second_fabric(values, errors, warnings, require_facts)
    else:
        nics.normalise_facts(values["nic_facts"], errors)
    if errors.messages:
        return None, errors.messages, warnings
    values["provided"] = sorted(provided)
    return values, [], warnings
