# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for `nvidia-smi -q -x` output (DTD v11, v12 and v13 layouts) and a runner for it.

Layout differences handled here (seen in real captures):
- the module ID is <gpu_module_id> (v11/v12) or <platformInfo><module_id> (v13);
- <addressing_mode> is missing before v12;
- v13 adds <pci><pci_base_class>/<pci_sub_class>, <c2c_mode>, <gpu_recovery_action>;
- very old drivers put framebuffer memory in <memory_usage> instead of <fb_memory_usage>.
The DOCTYPE names the DTD ("nvsmi_device_v13.dtd"); it is reported as `xml_schema`.
"""


import re
import subprocess
import xml.etree.ElementTree as ET

_DTD_RE = re.compile(r"nvsmi_device_(v[0-9]+)\.dtd")
_MIB_RE = re.compile(r"^\s*([0-9]+)\s*MiB")
_BUS_ID_RE = re.compile(r"^([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")
# Per-GPU lists that are most of the document and unused here; dropped before parsing (a third of the time).
_UNUSED_BLOCKS = ("supported_clocks", "processes", "accounted_processes")
_UNUSED_OPEN_RE = re.compile(r"<(%s)>" % "|".join(_UNUSED_BLOCKS))
_NOT_AVAILABLE = ("N/A", "", "[N/A]", "Not Available", "[Not Supported]", "Not Supported")

DEFAULT_TIMEOUT = 60
NVIDIA_VENDOR_ID = 0x10de


def _decoded(value):
    """bytes decoded as UTF-8 (undecodable bytes replaced); anything else unchanged."""
    return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else value


def _text(node, path):
    if node is None:
        return None
    found = node.find(path)
    if found is None or found.text is None:
        return None
    value = found.text.strip()
    return None if value in _NOT_AVAILABLE else value


def _first(node, *paths):
    for path in paths:
        value = _text(node, path)
        if value is not None:
            return value
    return None


def _mib(text):
    if text is None:
        return None
    match = _MIB_RE.match(text)
    return int(match.group(1)) if match else None


def _int(text):
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _width(text):
    """'16x' -> 16."""
    return _int(text[:-1]) if text and text.endswith("x") else _int(text)


def pci_device_id(text):
    """nvidia-smi's <pci_device_id> is (device << 16) | vendor: '233510DE' -> '0x2335'.

    None unless the vendor half is NVIDIA's and the device half is not zero: some virtual machines report
    '000000DE' (an A10G capture), which must not pass for a device ID."""
    try:
        value = int((_decoded(text) or "").strip(), 16)
    except ValueError:
        return None
    device, vendor = value >> 16, value & 0xFFFF
    if vendor != NVIDIA_VENDOR_ID or not 0 < device <= 0xFFFF:
        return None
    return "0x%04x" % device


def normalize_bus_id(bus_id):
    """nvidia-smi '00000000:00:1E.0' -> sysfs form '0000:00:1e.0'."""
    bus_id = _decoded(bus_id)
    if not bus_id:
        return None
    match = _BUS_ID_RE.match(bus_id.strip())
    if not match:
        return None
    domain, bus, device, function = match.groups()
    return "%04x:%s:%s.%s" % (int(domain, 16), bus.lower(), device.lower(), function)


def extract_xml(text):
    """The <nvidia_smi_log> document inside text (a capture may carry a prompt or a warning line)."""
    text = _decoded(text)
    if text is None:
        return None
    start = text.find("<?xml")
    if start < 0:
        start = text.find("<nvidia_smi_log")
    end = text.rfind("</nvidia_smi_log>")
    if start < 0 or end < 0:
        return None
    return text[start:end + len("</nvidia_smi_log>")]


def drop_unused_blocks(document):
    """The document without the _UNUSED_BLOCKS elements. A tag left open stays (the XML parser then reports it);
    once one closing tag is missing that tag is not looked for again, so unclosed tags cost linear time."""
    pieces = []
    position = 0
    unclosed = set()
    for match in _UNUSED_OPEN_RE.finditer(document):
        tag = match.group(1)
        if match.start() < position or tag in unclosed:
            continue
        close = document.find("</%s>" % tag, match.end())
        if close < 0:
            unclosed.add(tag)
            continue
        pieces.append(document[position:match.start()])
        position = close + len(tag) + 3
    pieces.append(document[position:])
    return "".join(pieces)


def _parse_gpu(gpu, index, driver_version, cuda_version):
    pci = gpu.find("pci")
    link = pci.find("pci_gpu_link_info") if pci is not None else None
    bus_id = _text(pci, "pci_bus_id") or gpu.get("id")
    mig_devices = gpu.find("mig_devices")
    module_id = _first(gpu, "platformInfo/module_id", "gpu_module_id")
    return {
        "index": index,
        "name": _text(gpu, "product_name"),
        "brand": _text(gpu, "product_brand"),
        "architecture": _text(gpu, "product_architecture"),
        "uuid": _text(gpu, "uuid"),
        "serial": _text(gpu, "serial"),
        "minor_number": _int(_text(gpu, "minor_number")),
        "module_id": _int(module_id),
        "vbios_version": _text(gpu, "vbios_version"),
        "pci_address": normalize_bus_id(bus_id),
        "pci_device_id": pci_device_id(_text(pci, "pci_device_id")),
        "driver_version": driver_version,
        "cuda_version": cuda_version,
        "memory_total_mib": _mib(_first(gpu, "fb_memory_usage/total", "memory_usage/total")),
        "bar1_total_mib": _mib(_text(gpu, "bar1_memory_usage/total")),
        "persistence_mode": _text(gpu, "persistence_mode"),
        "addressing_mode": _text(gpu, "addressing_mode"),
        "mig_mode": {
            "current": _text(gpu, "mig_mode/current_mig"),
            "pending": _text(gpu, "mig_mode/pending_mig"),
        },
        "mig_device_count": len(mig_devices.findall("mig_device")) if mig_devices is not None else 0,
        "virtualization_mode": _text(gpu, "gpu_virtualization_mode/virtualization_mode"),
        "compute_mode": _text(gpu, "compute_mode"),
        "pcie_link": {
            "current_gen": _int(_text(link, "pcie_gen/current_link_gen")),
            "max_gen": _int(_text(link, "pcie_gen/max_link_gen")),
            "current_width": _width(_text(link, "link_widths/current_link_width")),
            "max_width": _width(_text(link, "link_widths/max_link_width")),
        },
    }


def parse(text):
    """Parse `nvidia-smi -q -x` output into {xml_schema, driver_version, cuda_version, attached_gpus, gpus}.

    Raises ValueError when text (str, or bytes read as UTF-8) holds no parsable nvidia_smi_log document."""
    if text is None:
        raise ValueError("no nvidia-smi output (got None)")
    document = extract_xml(text)
    if document is None:
        raise ValueError("no <nvidia_smi_log> document in nvidia-smi output")
    schema_match = _DTD_RE.search(document[:400])
    try:
        root = ET.fromstring(drop_unused_blocks(document))
    except ET.ParseError as exc:
        raise ValueError("nvidia-smi XML does not parse: %s" % exc)
    driver_version = _text(root, "driver_version")
    cuda_version = _first(root, "cuda_version", "cuda_driver_version")
    gpus = [_parse_gpu(gpu, index, driver_version, cuda_version) for index, gpu in enumerate(root.findall("gpu"))]
    return {
        "xml_schema": schema_match.group(1) if schema_match else None,
        "driver_version": driver_version,
        "cuda_version": cuda_version,
        "attached_gpus": _int(_text(root, "attached_gpus")),
        "gpus": gpus,
    }


def run(binary, timeout=DEFAULT_TIMEOUT):
    """Run `<binary> -q -x` once: (stdout text, None) or (None, error message)."""
    try:
        proc = subprocess.run([binary, "-q", "-x"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, "%s -q -x failed: %s" % (binary, exc)
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip() or out.strip()
        return None, "%s -q -x exited %d: %s" % (binary, proc.returncode, err[:500])
    return out, None
