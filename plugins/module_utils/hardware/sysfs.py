# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Readers for PCI functions, network devices and RDMA (infiniband class) devices in sysfs, and for
the few procfs files the facts need. Every reader returns None or an empty value for a missing
file or link: partial trees give partial facts, never an exception."""


import os
import re

PCI_ADDRESS_RE = re.compile(r"^([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")
_RATE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*Gb/sec")
_LINK_SPEED_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*GT/s")
_ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
_READ_SIZE = 65536
MAX_GIDS_PER_PORT = 16  # RoCE tables hold up to 255 entries; the used ones come first


def _decoded(value):
    """bytes decoded as UTF-8 (undecodable bytes replaced); anything else unchanged."""
    return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else value


def read_text(path):
    """Stripped content of a sysfs/procfs file, or None when it is missing or unreadable.

    os.open/os.read: a text-mode open() costs several times more, and a node has thousands of attributes."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = [os.read(fd, _READ_SIZE)]
        while len(chunks[-1]) == _READ_SIZE:  # only big procfs files need a second read
            chunks.append(os.read(fd, _READ_SIZE))
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8").strip()
    except UnicodeDecodeError:
        return None


def read_int(path, base=10):
    text = read_text(path)
    if text is None:
        return None
    try:
        return int(text, base)
    except ValueError:
        return None


def link_name(path):
    """Basename of a symlink target (driver, physfn, device links), or None."""
    try:
        name = os.path.basename(os.readlink(path).rstrip("/"))
    except OSError:
        return None
    if name in ("", ".", ".."):  # a link to an ancestor directory ("../..")
        name = os.path.basename(os.path.realpath(path))
    return name or None


def list_dir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def normalize_pci_address(address):
    """'00000000:00:06.0' or '0000:00:1E.0' -> '0000:00:1e.0'; None for anything else."""
    address = _decoded(address)
    if not address:
        return None
    match = PCI_ADDRESS_RE.match(str(address).strip())
    if not match:
        return None
    domain, bus, device, function = match.groups()
    return "%04x:%s:%s.%s" % (int(domain, 16), bus.lower(), device.lower(), function)


def parse_state(text):
    """'4: ACTIVE' -> (4, 'ACTIVE'); 'ACTIVE' -> (None, 'ACTIVE'); None -> (None, None)."""
    text = _decoded(text)
    if text is None:
        return None, None
    # split, not a regex: '(\S.*?)\s*$' backtracks quadratically on a long value
    code, colon, name = text.partition(":")
    code, name = code.strip(), name.strip()
    if colon and name and code and all(char in "0123456789" for char in code):
        return int(code), name
    return None, text.strip() or None


def parse_rate_gbps(text):
    """'400 Gb/sec (4X NDR)' -> 400.0; '2.5 Gb/sec (1X SDR)' -> 2.5; None when not parsable."""
    text = _decoded(text)
    if not text:
        return None
    match = _RATE_RE.match(text)
    return float(match.group(1)) if match else None


def parse_link_speed_gts(text):
    """'32.0 GT/s PCIe' -> 32.0; 'Unknown' or None -> None."""
    text = _decoded(text)
    if not text:
        return None
    match = _LINK_SPEED_RE.match(text)
    return float(match.group(1)) if match else None


def pci_devices_dir(sys_root):
    return sys_root.rstrip("/") + "/bus/pci/devices"


def list_pci_functions(sys_root):
    """Addresses of every PCI function (entries of /sys/bus/pci/devices)."""
    return [name for name in list_dir(pci_devices_dir(sys_root)) if PCI_ADDRESS_RE.match(name)]


def read_pci_vendor(sys_root, address):
    return read_int(pci_devices_dir(sys_root) + "/" + address + "/vendor", 16)


def read_pci_class(sys_root, address):
    return read_int(pci_devices_dir(sys_root) + "/" + address + "/class", 16)


def _hex(value, width):
    return None if value is None else "0x%0*x" % (width, value)


def read_pci_function(sys_root, address):
    """Attributes of one PCI function: IDs, driver, NUMA node, PCIe link, SR-IOV and children."""
    base = pci_devices_dir(sys_root) + "/" + address + "/"
    numa = read_int(base + "numa_node")
    cur_speed = read_text(base + "current_link_speed")
    max_speed = read_text(base + "max_link_speed")
    info = {
        "pci_address": address,
        "vendor_id": _hex(read_int(base + "vendor", 16), 4),
        "device_id": _hex(read_int(base + "device", 16), 4),
        "class": _hex(read_int(base + "class", 16), 6),
        "subsystem_vendor_id": _hex(read_int(base + "subsystem_vendor", 16), 4),
        "subsystem_device_id": _hex(read_int(base + "subsystem_device", 16), 4),
        "driver": link_name(base + "driver"),
        # -1 means the platform reports no NUMA affinity (single node or a VM).
        "numa_node": numa if numa is not None and numa >= 0 else None,
        "local_cpulist": read_text(base + "local_cpulist"),
        "pcie": {
            "current_link_speed": cur_speed,
            "current_link_speed_gts": parse_link_speed_gts(cur_speed),
            "current_link_width": read_int(base + "current_link_width"),
            "max_link_speed": max_speed,
            "max_link_speed_gts": parse_link_speed_gts(max_speed),
            "max_link_width": read_int(base + "max_link_width"),
        },
        "sysfs_path": resolve(base[:-1]),
    }
    return info


def resolve(path):
    """Physical sysfs path of a device link (the chain of bridges under /sys/devices), or None.

    One readlink: /sys/bus/pci/devices/<addr> points straight into /sys/devices; realpath() would
    lstat every component."""
    try:
        target = os.readlink(path)
    except OSError:
        return os.path.realpath(path) if os.path.isdir(path) else None
    resolved = os.path.normpath(os.path.join(os.path.dirname(path), target))
    return resolved if os.path.isdir(resolved) else None


def read_sriov(sys_root, address):
    base = pci_devices_dir(sys_root) + "/" + address
    virtfns = [name for name in list_dir(base) if name.startswith("virtfn")]
    vf_addresses = []
    for name in sorted(virtfns, key=lambda item: int(item[6:]) if item[6:].isdigit() else 0):
        target = link_name(base + "/" + name)
        if target:
            vf_addresses.append(target)
    return {
        "totalvfs": read_int(base + "/sriov_totalvfs"),
        "numvfs": read_int(base + "/sriov_numvfs"),
        "vf_addresses": vf_addresses,
    }


def read_physfn(sys_root, address):
    """PCI address of the PF for a VF (physfn link), or None for a PF."""
    return link_name(pci_devices_dir(sys_root) + "/" + address + "/physfn")


def read_netdev(net_dir):
    """One /sys/class/net/<name> (or <pci>/net/<name>) directory."""
    name = os.path.basename(net_dir.rstrip("/"))
    speed = read_int(net_dir + "/speed")
    return {
        "name": name,
        "mtu": read_int(net_dir + "/mtu"),
        "operstate": read_text(net_dir + "/operstate"),
        "address": read_text(net_dir + "/address"),
        "type": read_int(net_dir + "/type"),
        "dev_port": read_int(net_dir + "/dev_port"),
        # speed is -1 (or unreadable) while the link is down
        "speed_mbps": speed if speed is not None and speed >= 0 else None,
    }


def read_pci_netdevs(sys_root, address):
    net_dir = pci_devices_dir(sys_root) + "/" + address + "/net/"
    return [read_netdev(net_dir + name) for name in list_dir(net_dir)]


def read_pci_rdma_names(sys_root, address):
    return list_dir(pci_devices_dir(sys_root) + "/" + address + "/infiniband")


def _read_gids(port_dir, roce=True):
    """Used GIDs of a port; the type/netdev attributes only mean something on RoCE ports."""
    gids = []
    gids_dir = port_dir + "/gids/"
    if not os.path.isdir(gids_dir):
        return gids
    attrs = port_dir + "/gid_attrs/"
    for index in range(MAX_GIDS_PER_PORT):
        gid = read_text(gids_dir + str(index))
        if gid is None or gid == _ZERO_GID:
            break
        gids.append({
            "index": index,
            "gid": gid,
            "type": read_text(attrs + "types/" + str(index)) if roce else None,
            "netdev": read_text(attrs + "ndevs/" + str(index)) if roce else None,
        })
    return gids


def _guid_from_gid(gid):
    """Interface ID half of GID 0 = the port GUID, in the node_guid notation."""
    parts = gid.split(":")
    if len(parts) != 8:
        return None
    return ":".join(parts[4:])


def read_ib_port(port_dir):
    number = os.path.basename(port_dir.rstrip("/"))
    state_code, state = parse_state(read_text(port_dir + "/state"))
    phys_code, phys_state = parse_state(read_text(port_dir + "/phys_state"))
    rate = read_text(port_dir + "/rate")
    link_layer = read_text(port_dir + "/link_layer")
    gids = _read_gids(port_dir, roce=link_layer != "InfiniBand")
    return {
        "port": int(number) if number.isdigit() else number,
        "link_layer": link_layer,
        "state": state,
        "state_code": state_code,
        "phys_state": phys_state,
        "phys_state_code": phys_code,
        "rate": rate,
        "rate_gbps": parse_rate_gbps(rate),
        "lid": read_int(port_dir + "/lid", 16),
        "sm_lid": read_int(port_dir + "/sm_lid", 16),
        "port_guid": _guid_from_gid(gids[0]["gid"]) if gids else None,
        "gids": gids,
    }


def infiniband_class_dir(sys_root):
    return sys_root.rstrip("/") + "/class/infiniband"


def list_rdma_devices(sys_root):
    return list_dir(infiniband_class_dir(sys_root))


def read_rdma_device(sys_root, name):
    """One /sys/class/infiniband/<name> device with its ports; pci_address None without a device link."""
    base = infiniband_class_dir(sys_root) + "/" + name + "/"
    ports_dir = base + "ports"
    ports = [read_ib_port(ports_dir + "/" + port) for port in list_dir(ports_dir)]
    ports.sort(key=lambda item: item["port"] if isinstance(item["port"], int) else 0)
    device_link = base + "device"
    pci_address = link_name(device_link) if os.path.islink(device_link) else None
    return {
        "name": name,
        "pci_address": normalize_pci_address(pci_address),
        "node_guid": read_text(base + "node_guid"),
        "sys_image_guid": read_text(base + "sys_image_guid"),
        "fw_ver": read_text(base + "fw_ver"),
        "hca_type": read_text(base + "hca_type"),
        "board_id": read_text(base + "board_id"),
        "node_type": read_text(base + "node_type"),
        "ports": ports,
    }


def read_proc_modules(proc_root):
    """Loaded kernel modules from /proc/modules: name -> {size, refcount, state}; None if unreadable."""
    text = read_text(os.path.join(proc_root, "modules"))
    if text is None:
        return None
    modules = {}
    for line in text.splitlines():
        fields = line.split()
        # name size refcount deps state address [taint]
        if len(fields) < 5 or not fields[1].isdigit():
            continue
        modules[fields[0]] = {
            "size": int(fields[1]),
            "refcount": int(fields[2]) if fields[2].isdigit() else None,
            "state": fields[4],
        }
    return modules


def builtin_module_present(sys_root, name):
    """A module compiled into the kernel has /sys/module/<name> but no /proc/modules line."""
    return os.path.isdir(os.path.join(sys_root, "module", name))


def read_kernel_release(proc_root):
    return read_text(os.path.join(proc_root, "sys", "kernel", "osrelease"))


def read_nvidia_proc_version(proc_root):
    return read_text(os.path.join(proc_root, "driver", "nvidia", "version"))
