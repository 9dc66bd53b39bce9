"""Hardware profiles of the simulated cluster: which nodes exist and what GPUs and NICs they carry.

A profile is a YAML file (schema in docs/hardware-profiles.md) or the output of `synthetic()`.
`load_profile()` validates it and returns a `Profile`; every error names the file and the path
of the offending field (`nodes[1].nics[0].ports[0].link_layer: ...`), so a typo in a profile fails
loudly instead of producing a cluster that silently lacks a device.
"""

import os
import re
import uuid
from dataclasses import dataclass, field

import yaml
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import bandwidth_calibration

PROFILE_DIR = os.path.dirname(os.path.abspath(__file__))

# OpenShift minor -> (Kubernetes minor, RHEL minor of RHCOS, default kernel, CRI-O version).
OPENSHIFT_RELEASES = {
    "4.16": ("1.29", "9.4", "5.14.0-427.44.1.el9_4.x86_64", "1.29.10"),
    "4.17": ("1.30", "9.4", "5.14.0-427.50.1.el9_4.x86_64", "1.30.8"),
    "4.18": ("1.31", "9.4", "5.14.0-427.65.1.el9_4.x86_64", "1.31.6"),
    "4.19": ("1.32", "9.6", "5.14.0-570.28.1.el9_6.x86_64", "1.32.6"),
    "4.20": ("1.33", "9.6", "5.14.0-570.49.1.el9_6.x86_64", "1.33.5"),
    "4.21": ("1.34", "9.6", "5.14.0-570.60.1.el9_6.x86_64", "1.34.1"),
    "4.22": ("1.35", "10.0", "6.12.0-55.9.1.el10_0.x86_64", "1.35.0"),
}

ROLES = ("master", "control-plane", "worker", "infra")
LINK_LAYERS = ("Ethernet", "InfiniBand")
PORT_STATES = ("ACTIVE", "DOWN", "INIT", "ARMED", "POLLING")
SOURCE_STATES = ("READY", "CONNECTING", "TRANSIENT_FAILURE", "IDLE")

_HEX4 = re.compile(r"^[0-9a-f]{4}$")
_PCI = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_MAC = re.compile(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$")
_GUID = re.compile(r"^([0-9a-f]{4}:){3}[0-9a-f]{4}$")
_GPU_UUID = re.compile(r"^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_IFNAME = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")
_RDMA_DEV = re.compile(r"^[a-z0-9_]+$")


class ProfileError(ValueError):
    """A profile that cannot be loaded; the message names the file and the field."""


# PCIe link of each device, from its vendor's documentation, when the profile does not give pcie_gts/pcie_width:
# NICs: NVIDIA ConnectX-7 and BlueField-3 user manuals (host interface PCIe Gen5 x16), ConnectX-6 / ConnectX-6 Dx
# user manuals (PCIe Gen4 x16), Intel E810 product brief (PCIe 4.0 x16). GPUs: plugins/module_utils/verify/bandwidth_calibration.py
# GPU_PCIE (A40 product brief: Gen4 x16; H100/H200: Gen5 x16). Anything else: 32 GT/s x16, what every device had
# before links were modelled.
NIC_PCIE = (("ConnectX-7", 32.0, 16), ("BlueField-3", 32.0, 16), ("ConnectX-6", 16.0, 16), ("E810", 16.0, 16))
DEFAULT_PCIE = (32.0, 16)


def pcie_default(model, table):
    for name, gts, width in table:
        if name.lower() in str(model).lower():
            return gts, width
    return DEFAULT_PCIE


@dataclass
class Port:
    port: int
    link_layer: str
    speed_gbps: int
    state: str
    netdev: str
    rdma_device: str
    mtu: int
    mac: str = ""
    guid: str = ""

    @property
    def is_infiniband(self):
        return self.link_layer == "InfiniBand"


@dataclass
class Nic:
    model: str
    vendor_id: str
    device_id: str
    pci_address: str
    numa_node: int
    firmware: str
    total_vfs: int
    ports: list
    driver: str = "mlx5_core"
    pci_class: str = ""
    part_number: str = ""
    pcie_gts: float = 32.0
    pcie_width: int = 16

    @property
    def is_mellanox(self):
        return self.vendor_id == "15b3"

    @property
    def sriov_capable(self):
        return self.total_vfs > 0


@dataclass
class Gpu:
    model: str
    device_id: str
    pci_address: str
    numa_node: int
    memory_mib: int
    uuid: str
    pci_class: str = "0302"
    vendor_id: str = "10de"
    pcie_gts: float = 32.0
    pcie_width: int = 16


@dataclass
class PciDevice:
    pci_address: str
    vendor_id: str
    device_id: str
    pci_class: str
    description: str = ""
    total_vfs: int = 0


@dataclass
class NodeProfile:
    name: str
    roles: list
    hostname: str
    internal_ip: str
    kernel: str
    os_image: str
    cpu: int
    memory_gib: int
    architecture: str = "amd64"
    cpu_model: str = ""
    numa_nodes: int = 1
    nvlink_links_per_gpu: int = 0
    labels: dict = field(default_factory=dict)
    gpus: list = field(default_factory=list)
    nics: list = field(default_factory=list)
    pci_devices: list = field(default_factory=list)

    @property
    def is_worker(self):
        return "worker" in self.roles

    @property
    def is_master(self):
        return "master" in self.roles or "control-plane" in self.roles

    def all_pci_devices(self):
        """Every PCI function as NFD sees it: (vendor, device, class, sriov_totalvfs)."""
        devs = [(g.vendor_id, g.device_id, g.pci_class, 0) for g in self.gpus]
        devs += [(n.vendor_id, n.device_id, n.pci_class, n.total_vfs) for n in self.nics]
        devs += [(d.vendor_id, d.device_id, d.pci_class, d.total_vfs) for d in self.pci_devices]
        return devs


@dataclass
class ClusterInfo:
    version: str
    channel: str
    platform: str = "BareMetal"
    cluster_id: str = ""
    base_domain: str = "example.com"

    @property
    def minor(self):
        return ".".join(self.version.split(".")[:2])

    @property
    def kubernetes_version(self):
        return OPENSHIFT_RELEASES.get(self.minor, OPENSHIFT_RELEASES["4.20"])[0] + ".5"

    @property
    def rhel_version(self):
        return OPENSHIFT_RELEASES.get(self.minor, OPENSHIFT_RELEASES["4.20"])[1]

    @property
    def crio_version(self):
        return OPENSHIFT_RELEASES.get(self.minor, OPENSHIFT_RELEASES["4.20"])[3]


@dataclass
class Profile:
    name: str
    description: str
    cluster: ClusterInfo
    nodes: list
    remove_packages: list = field(default_factory=list)
    source_states: dict = field(default_factory=dict)
    source: str = ""

    def node(self, name):
        # Names are unique (checked when parsed): a dict finds one in O(1) on 1000-node profiles. It is rebuilt when
        # the node list changed (a test may add or drop nodes).
        index = self.__dict__.get("_by_name")
        found = index.get(name) if index is not None else None
        if found is None or found.name != name or len(index) != len(self.nodes):
            index = self.__dict__["_by_name"] = dict((n.name, n) for n in self.nodes)
            found = index.get(name)
        if found is None:
            raise KeyError(name)
        return found

    @property
    def workers(self):
        return [n for n in self.nodes if n.is_worker]


# ---------------------------------------------------------------------------------------------
# Validation: a small declarative checker so errors carry the field path.

class _Checker:
    def __init__(self, origin):
        self.origin = origin

    def fail(self, path, message):
        raise ProfileError("profile %s: %s: %s" % (self.origin, path or "<top>", message))

    def mapping(self, value, path, required, optional):
        if not isinstance(value, dict):
            self.fail(path, "must be a mapping, got %s" % type(value).__name__)
        allowed = set(required) | set(optional)
        unknown = sorted(k for k in value if k not in allowed)
        if unknown:
            self.fail(path, "unknown key(s) %s (allowed: %s)" % (", ".join(map(str, unknown)), ", ".join(sorted(allowed))))
        for key in required:
            if key not in value or value[key] is None:
                self.fail(_join(path, key), "is required")
        return value

    def string(self, value, path, pattern=None, what=None, choices=None):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.fail(path, "must be a string")
        value = str(value)
        if choices and value not in choices:
            self.fail(path, "%r is not one of %s" % (value, ", ".join(choices)))
        if pattern and not pattern.match(value):
            self.fail(path, "%r is not a valid %s" % (value, what or "value"))
        return value

    def integer(self, value, path, minimum=None, maximum=None):
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, "must be an integer, got %r" % (value,))
        if minimum is not None and value < minimum:
            self.fail(path, "must be >= %d, got %d" % (minimum, value))
        if maximum is not None and value > maximum:
            self.fail(path, "must be <= %d, got %d" % (maximum, value))
        return value

    def seq(self, value, path):
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(path, "must be a list")
        return value


def _join(path, key):
    return "%s.%s" % (path, key) if path else str(key)


def _hex(value):
    return str(value).lower().replace("0x", "") if value is not None else value


def _pci_class_for(nic_ports, vendor_id):
    if vendor_id == "15b3" and nic_ports and nic_ports[0].link_layer == "InfiniBand":
        return "0207"
    return "0200"


def _parse_port(c, raw, path):
    c.mapping(raw, path, ("link_layer", "speed_gbps", "netdev", "rdma_device"),
              ("port", "state", "mtu", "mac", "guid"))
    link = c.string(raw["link_layer"], _join(path, "link_layer"), choices=LINK_LAYERS)
    port = Port(
        port=c.integer(raw.get("port", 1), _join(path, "port"), 1, 4),
        link_layer=link,
        speed_gbps=c.integer(raw["speed_gbps"], _join(path, "speed_gbps"), 1, 3200),
        state=c.string(raw.get("state", "ACTIVE"), _join(path, "state"), choices=PORT_STATES),
        netdev=c.string(raw["netdev"], _join(path, "netdev"), _IFNAME, "interface name (1-15 characters)"),
        rdma_device=c.string(raw["rdma_device"], _join(path, "rdma_device"), _RDMA_DEV, "RDMA device name"),
        mtu=c.integer(raw.get("mtu", 4092 if link == "InfiniBand" else 1500), _join(path, "mtu"), 68, 65520),
    )
    if raw.get("mac") is not None:
        port.mac = c.string(str(raw["mac"]).lower(), _join(path, "mac"), _MAC, "MAC address (xx:xx:xx:xx:xx:xx)")
    if raw.get("guid") is not None:
        port.guid = c.string(str(raw["guid"]).lower(), _join(path, "guid"), _GUID, "GUID (xxxx:xxxx:xxxx:xxxx)")
    if link == "Ethernet" and not port.mac:
        c.fail(_join(path, "mac"), "is required for an Ethernet port")
    if link == "InfiniBand" and not port.guid:
        c.fail(_join(path, "guid"), "is required for an InfiniBand port")
    return port


def _parse_nic(c, raw, path):
    c.mapping(raw, path, ("model", "device_id", "pci_address", "ports"),
              ("vendor_id", "numa_node", "firmware", "total_vfs", "driver", "pci_class", "part_number", "pcie_gts", "pcie_width"))
    ports = [_parse_port(c, p, "%s.ports[%d]" % (path, i)) for i, p in enumerate(c.seq(raw["ports"], _join(path, "ports")))]
    if not ports:
        c.fail(_join(path, "ports"), "needs at least one port")
    vendor = c.string(_hex(raw.get("vendor_id", "15b3")), _join(path, "vendor_id"), _HEX4, "PCI vendor ID (4 hex digits)")
    nic = Nic(
        model=c.string(raw["model"], _join(path, "model")),
        vendor_id=vendor,
        device_id=c.string(_hex(raw["device_id"]), _join(path, "device_id"), _HEX4, "PCI device ID (4 hex digits)"),
        pci_address=c.string(str(raw["pci_address"]).lower(), _join(path, "pci_address"), _PCI, "PCI address (DDDD:BB:DD.F)"),
        numa_node=c.integer(raw.get("numa_node", 0), _join(path, "numa_node"), -1, 63),
        firmware=c.string(raw.get("firmware", ""), _join(path, "firmware")),
        total_vfs=c.integer(raw.get("total_vfs", 0), _join(path, "total_vfs"), 0, 256),
        ports=ports,
        driver=c.string(raw.get("driver", "mlx5_core" if vendor == "15b3" else "unknown"), _join(path, "driver")),
        part_number=c.string(raw.get("part_number", ""), _join(path, "part_number")),
    )
    nic.pci_class = c.string(_hex(raw.get("pci_class", _pci_class_for(ports, vendor))), _join(path, "pci_class"), _HEX4,
                             "PCI class (4 hex digits)")
    nic.pcie_gts, nic.pcie_width = _pcie(c, raw, path, pcie_default(nic.model, NIC_PCIE))
    return nic


def _pcie(c, raw, path, default):
    gts = raw.get("pcie_gts", default[0])
    if gts not in (2.5, 5, 8, 16, 32):
        c.fail(_join(path, "pcie_gts"), "must be a PCIe transfer rate in GT/s: 2.5, 5, 8, 16 or 32, got %r" % (gts,))
    return float(gts), c.integer(raw.get("pcie_width", default[1]), _join(path, "pcie_width"), 1, 32)


def _parse_gpu(c, raw, path):
    c.mapping(raw, path, ("model", "device_id", "pci_address", "memory_mib"), ("numa_node", "uuid", "pci_class", "pcie_gts", "pcie_width"))
    address = c.string(str(raw["pci_address"]).lower(), _join(path, "pci_address"), _PCI, "PCI address (DDDD:BB:DD.F)")
    gpu_uuid = raw.get("uuid") or "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_OID, path + address))
    gts, width = bandwidth_calibration.gpu_pcie(raw["model"])
    gts, width = _pcie(c, raw, path, (gts, width) if gts else DEFAULT_PCIE)
    return Gpu(
        pcie_gts=gts,
        pcie_width=width,
        model=c.string(raw["model"], _join(path, "model")),
        device_id=c.string(_hex(raw["device_id"]), _join(path, "device_id"), _HEX4, "PCI device ID (4 hex digits)"),
        pci_address=address,
        numa_node=c.integer(raw.get("numa_node", 0), _join(path, "numa_node"), -1, 63),
        memory_mib=c.integer(raw["memory_mib"], _join(path, "memory_mib"), 1),
        uuid=c.string(gpu_uuid, _join(path, "uuid"), _GPU_UUID, "GPU UUID (GPU-8-4-4-4-12 hex)"),
        pci_class=c.string(_hex(raw.get("pci_class", "0302")), _join(path, "pci_class"), _HEX4, "PCI class (4 hex digits)"),
    )


def _parse_pci_device(c, raw, path):
    c.mapping(raw, path, ("pci_address", "vendor_id", "device_id", "pci_class"), ("description", "total_vfs"))
    return PciDevice(
        pci_address=c.string(str(raw["pci_address"]).lower(), _join(path, "pci_address"), _PCI, "PCI address (DDDD:BB:DD.F)"),
        vendor_id=c.string(_hex(raw["vendor_id"]), _join(path, "vendor_id"), _HEX4, "PCI vendor ID (4 hex digits)"),
        device_id=c.string(_hex(raw["device_id"]), _join(path, "device_id"), _HEX4, "PCI device ID (4 hex digits)"),
        pci_class=c.string(_hex(raw["pci_class"]), _join(path, "pci_class"), _HEX4, "PCI class (4 hex digits)"),
        description=c.string(raw.get("description", ""), _join(path, "description")),
        total_vfs=c.integer(raw.get("total_vfs", 0), _join(path, "total_vfs"), 0, 256),
    )


def _parse_node(c, raw, path, cluster, index):
    c.mapping(raw, path, ("name", "roles"),
              ("hostname", "internal_ip", "kernel", "os_image", "cpu", "memory_gib", "architecture", "cpu_model",
               "numa_nodes", "nvlink_links_per_gpu", "labels", "gpus", "nics", "pci_devices"))
    name = c.string(raw["name"], _join(path, "name"), _DNS1123, "node name (DNS-1123 subdomain)")
    roles = [c.string(r, "%s.roles[%d]" % (path, i), choices=ROLES) for i, r in enumerate(c.seq(raw["roles"], _join(path, "roles")))]
    if not roles:
        c.fail(_join(path, "roles"), "needs at least one role")
    release = OPENSHIFT_RELEASES.get(cluster.minor, OPENSHIFT_RELEASES["4.20"])
    labels = raw.get("labels") or {}
    if not isinstance(labels, dict):
        c.fail(_join(path, "labels"), "must be a mapping")
    node = NodeProfile(
        name=name,
        roles=roles,
        hostname=c.string(raw.get("hostname", name), _join(path, "hostname"), _DNS1123, "hostname"),
        internal_ip=c.string(raw.get("internal_ip", "10.0.%d.%d" % (index // 250, index % 250 + 2)), _join(path, "internal_ip")),
        kernel=c.string(raw.get("kernel", release[2]), _join(path, "kernel")),
        os_image=c.string(raw.get("os_image", "Red Hat Enterprise Linux CoreOS %s.20251010-0 (Plow)" % release[1]),
                          _join(path, "os_image")),
        cpu=c.integer(raw.get("cpu", 64), _join(path, "cpu"), 1),
        memory_gib=c.integer(raw.get("memory_gib", 256), _join(path, "memory_gib"), 1),
        architecture=c.string(raw.get("architecture", "amd64"), _join(path, "architecture"), choices=("amd64", "arm64")),
        cpu_model=c.string(raw.get("cpu_model", ""), _join(path, "cpu_model")),
        numa_nodes=c.integer(raw.get("numa_nodes", 1), _join(path, "numa_nodes"), 1, 64),
        # NVLink links from each GPU into the NVSwitch fabric (NV18 in `nvidia-smi topo -m` on HGX H100); 0: none
        nvlink_links_per_gpu=c.integer(raw.get("nvlink_links_per_gpu", 0), _join(path, "nvlink_links_per_gpu"), 0, 18),
        labels={str(k): str(v) for k, v in labels.items()},
        gpus=[_parse_gpu(c, g, "%s.gpus[%d]" % (path, i)) for i, g in enumerate(c.seq(raw.get("gpus"), _join(path, "gpus")))],
        nics=[_parse_nic(c, n, "%s.nics[%d]" % (path, i)) for i, n in enumerate(c.seq(raw.get("nics"), _join(path, "nics")))],
        pci_devices=[_parse_pci_device(c, d, "%s.pci_devices[%d]" % (path, i))
                     for i, d in enumerate(c.seq(raw.get("pci_devices"), _join(path, "pci_devices")))],
    )
    _check_node_unique(c, node, path)
    return node


def _check_node_unique(c, node, path):
    seen = {}
    for kind, items in (("gpus", node.gpus), ("nics", node.nics), ("pci_devices", node.pci_devices)):
        for i, item in enumerate(items):
            where = "%s.%s[%d].pci_address" % (path, kind, i)
            if item.pci_address in seen:
                c.fail(where, "PCI address %s already used by %s" % (item.pci_address, seen[item.pci_address]))
            seen[item.pci_address] = where
    for attr in ("netdev", "rdma_device"):
        names = {}
        for i, nic in enumerate(node.nics):
            for j, port in enumerate(nic.ports):
                where = "%s.nics[%d].ports[%d].%s" % (path, i, j, attr)
                value = getattr(port, attr)
                if value in names:
                    c.fail(where, "%s %s already used by %s" % (attr, value, names[value]))
                names[value] = where
    uuids = set()
    for i, gpu in enumerate(node.gpus):
        if gpu.uuid in uuids:
            c.fail("%s.gpus[%d].uuid" % (path, i), "duplicate GPU UUID %s" % gpu.uuid)
        uuids.add(gpu.uuid)


def parse_profile(data, origin="<dict>"):
    """Validate a profile given as a dict (parsed YAML) and return a Profile."""
    c = _Checker(origin)
    c.mapping(data, "", ("name", "cluster", "nodes"), ("description", "catalog"))
    craw = c.mapping(data["cluster"], "cluster", ("version",), ("channel", "platform", "cluster_id", "base_domain"))
    version = c.string(craw["version"], "cluster.version", _VERSION, "OpenShift version (X.Y.Z)")
    minor = ".".join(version.split(".")[:2])
    if minor not in OPENSHIFT_RELEASES:
        c.fail("cluster.version", "OpenShift %s is not known to the simulator (known: %s)" % (minor, ", ".join(OPENSHIFT_RELEASES)))
    cluster = ClusterInfo(
        version=version,
        channel=c.string(craw.get("channel", "stable-%s" % minor), "cluster.channel"),
        platform=c.string(craw.get("platform", "BareMetal"), "cluster.platform"),
        cluster_id=c.string(craw.get("cluster_id") or str(uuid.uuid5(uuid.NAMESPACE_DNS, str(data["name"]))), "cluster.cluster_id"),
        base_domain=c.string(craw.get("base_domain", "example.com"), "cluster.base_domain"),
    )
    raw_nodes = c.seq(data["nodes"], "nodes")
    if not raw_nodes:
        c.fail("nodes", "needs at least one node")
    nodes = [_parse_node(c, n, "nodes[%d]" % i, cluster, i) for i, n in enumerate(raw_nodes)]
    names = set()
    for i, n in enumerate(nodes):
        if n.name in names:
            c.fail("nodes[%d].name" % i, "duplicate node name %s" % n.name)
        names.add(n.name)
    catalog = c.mapping(data.get("catalog") or {}, "catalog", (), ("remove_packages", "source_states"))
    remove = [c.string(p, "catalog.remove_packages[%d]" % i) for i, p in enumerate(c.seq(catalog.get("remove_packages"), "catalog.remove_packages"))]
    states = catalog.get("source_states") or {}
    if not isinstance(states, dict):
        c.fail("catalog.source_states", "must be a mapping of CatalogSource name to state")
    states = {str(k): c.string(v, "catalog.source_states.%s" % k, choices=SOURCE_STATES) for k, v in states.items()}
    return Profile(
        name=c.string(data["name"], "name"),
        description=c.string(data.get("description", ""), "description"),
        cluster=cluster,
        nodes=nodes,
        remove_packages=remove,
        source_states=states,
        source=origin,
    )


def shipped_profiles():
    return sorted(f[:-5] for f in os.listdir(PROFILE_DIR) if f.endswith(".yaml"))


def load_profile(name_or_path):
    """Load a shipped profile by name (`roce-lab`), a YAML path, `synthetic[:k=v,...]`, or pass a Profile through."""
    if isinstance(name_or_path, Profile):
        return name_or_path
    if isinstance(name_or_path, dict):
        return parse_profile(name_or_path)
    text = str(name_or_path)
    version = None
    if "@" in text and not os.path.exists(text):
        # `roce-lab@4.18.20`: a shipped profile on another OpenShift version (its catalog follows that version).
        text, _sep, version = text.partition("@")
    if text == "synthetic" or text.startswith("synthetic:"):
        kwargs = {}
        for item in filter(None, text.partition(":")[2].split(",")):
            key, _sep, value = item.partition("=")
            kwargs[key.strip()] = int(value) if value.strip().isdigit() else value.strip()
        return synthetic(**kwargs)
    path = text
    if not os.path.exists(path):
        path = os.path.join(PROFILE_DIR, text + ".yaml")
    if not os.path.exists(path):
        raise ProfileError("profile %s: no such shipped profile or file (shipped: %s)" % (text, ", ".join(shipped_profiles())))
    with open(path) as fh:
        try:
            data = yaml.safe_load(fh)
        except yaml.YAMLError as exc:
            raise ProfileError("profile %s: not valid YAML: %s" % (path, exc)) from exc
    if version and isinstance(data, dict) and isinstance(data.get("cluster"), dict):
        data["cluster"]["version"] = version
        data["cluster"].pop("channel", None)
    return parse_profile(data, origin=path if not version else "%s@%s" % (path, version))


# ---------------------------------------------------------------------------------------------
# Synthetic profiles for scale tests.

GPU_MODELS = {
    "H100": ("NVIDIA H100 80GB HBM3", "2330", 81559),
    "H200": ("NVIDIA H200", "2335", 143771),
    "A100": ("NVIDIA A100-SXM4-80GB", "20b2", 81920),
    "A40": ("NVIDIA A40", "2235", 46068),
}


def synthetic(nodes=4, gpus=8, nics=8, masters=3, link_layer="InfiniBand", gpu_model="H100",
              version="4.20.8", name=None):
    """Build a validated Profile with `nodes` identical GPU workers (plus `masters` control-plane nodes).

    link_layer: InfiniBand, Ethernet or mixed (even NICs InfiniBand, odd Ethernet).
    Identifiers (PCI addresses, MACs, GUIDs, UUIDs) are derived from the node and device index,
    so two calls with the same arguments give the same profile.
    """
    model, device_id, memory = GPU_MODELS[gpu_model]
    raw_nodes = []
    for m in range(masters):
        raw_nodes.append({"name": "master-%d" % m, "roles": ["master", "control-plane"], "cpu": 32, "memory_gib": 128})
    for n in range(nodes):
        gpu_list = []
        for g in range(gpus):
            bus = 0x18 + g * 0x10
            gpu_list.append({
                "model": model, "device_id": device_id, "pci_address": "0000:%02x:00.0" % (bus % 256),
                "numa_node": 0 if g < gpus / 2 else 1, "memory_mib": memory,
                "uuid": "GPU-%08x-%04x-%04x-%04x-%012x" % (n, g, 0x4000, 0x8000, n * 64 + g),
            })
        nic_list = []
        for k in range(nics):
            bus = 0x1a + k * 0x10
            ib = link_layer == "InfiniBand" or (link_layer == "mixed" and k % 2 == 0)
            port = {"port": 1, "link_layer": "InfiniBand" if ib else "Ethernet", "speed_gbps": 400,
                    "netdev": ("ibp%ds0" if ib else "enp%ds0np0") % (bus % 256), "rdma_device": "mlx5_%d" % k,
                    "mtu": 4092 if ib else 9000}
            if ib:
                port["guid"] = "a088:c203:%04x:%04x" % (n & 0xFFFF, k)
            else:
                port["mac"] = "b8:3f:d2:%02x:%02x:%02x" % ((n >> 8) & 0xFF, n & 0xFF, k)
            nic_list.append({
                "model": "ConnectX-7", "device_id": "1021", "pci_address": "0000:%02x:00.0" % ((bus + 1) % 256),
                "numa_node": 0 if k < nics / 2 else 1, "firmware": "28.43.2026", "total_vfs": 16, "ports": [port],
            })
        raw_nodes.append({
            "name": "gpu-worker-%04d" % n, "roles": ["worker"], "cpu": 224, "memory_gib": 2048, "numa_nodes": 2,
            "internal_ip": "10.%d.%d.%d" % (1 + n // 62500, (n // 250) % 250, n % 250 + 2),
            "gpus": gpu_list, "nics": nic_list,
        })
    data = {
        "name": name or "synthetic-%d" % nodes,
        "description": "generated: %d workers x %d %s, %d ConnectX-7 (%s)" % (nodes, gpus, gpu_model, nics, link_layer),
        "cluster": {"version": version},
        "nodes": raw_nodes,
    }
    return parse_profile(data, origin="synthetic(nodes=%d)" % nodes)
