# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU/NIC facts of one node: collect(sys_root, proc_root, nvidia_smi_xml) -> dict.

Also a command line tool for a pod with a bare python3 (stdlib only):
  python3 collector.py --sys-root /host/sys --proc-root /host/proc --json
It needs its sibling files (devices.py, sysfs.py, nvidia_smi.py, topology.py, readiness.py) next to
it, or run `python3 collector.py --write-standalone facts.py` once to get a single self-contained
script that can be copied alone (e.g. into a ConfigMap).
"""


import argparse
import json
import os
import re
import shutil
import sys

try:
    from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import (
        devices, nvidia_smi, readiness, sysfs, topology)
except ImportError:  # plain script: the siblings sit in this file's directory or were preloaded
    if globals().get("__file__") and os.path.dirname(os.path.abspath(__file__)) not in sys.path:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # python3 -I drops the script dir
    import devices  # pylint: disable=import-error
    import nvidia_smi  # pylint: disable=import-error
    import readiness  # pylint: disable=import-error
    import sysfs  # pylint: disable=import-error
    import topology  # pylint: disable=import-error

FACTS_SCHEMA_VERSION = 1

# Kernel modules whose presence matters for GPUDirect RDMA (irdma conflicts with the DOCA driver).
WATCHED_MODULES = ("nvidia", "nvidia_peermem", "nvidia_uvm", "mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs",
                   "rdma_cm", "rdma_ucm", "irdma")

SIBLING_MODULES = ("devices", "sysfs", "nvidia_smi", "topology", "readiness")

_PROC_VERSION_RE = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+([0-9]+(?:\.[0-9]+)+)")


def _watched_modules(sys_root, proc_modules):
    """name -> True (loaded or built in), False (absent) or None (/proc/modules unreadable)."""
    result = {}
    for name in WATCHED_MODULES:
        if proc_modules is None:
            result[name] = True if sysfs.builtin_module_present(sys_root, name) else None
        else:
            result[name] = name in proc_modules or sysfs.builtin_module_present(sys_root, name)
    return result


def _nvidia_driver(proc_root, sys_root, smi, gpus):
    """Driver version and whether the open kernel module runs (True/False/None) with the evidence used."""
    proc_text = sysfs.read_nvidia_proc_version(proc_root)
    version = smi.get("driver_version") if smi else None
    if version is None and proc_text:
        match = _PROC_VERSION_RE.search(proc_text)
        version = match.group(1) if match else None
    if version is None:
        version = sysfs.read_text(os.path.join(sys_root, "module", "nvidia", "version"))
    open_module, source = None, None
    if proc_text and "Kernel Module" in proc_text:
        open_module = "Open Kernel Module" in proc_text
        source = "/proc/driver/nvidia/version"
    elif any((gpu.get("architecture") or "").lower().startswith("blackwell") for gpu in gpus):
        open_module, source = True, "inferred: Blackwell GPUs run only with the open kernel module"
    return {"version": version, "open_kernel_module": open_module, "open_kernel_module_source": source}


def _read_rdma(sys_root, pci_address, name):
    info = sysfs.read_rdma_device(sys_root, name)
    if info["pci_address"] is None and pci_address:
        info["pci_address"] = pci_address
    return info


def _port_mtus(ports, netdevs):
    """MTU of each port from its netdev: the RoCE GID netdev, else dev_port, else the only netdev."""
    by_name = {dev["name"]: dev for dev in netdevs}
    for port in ports:
        netdev = None
        for gid in port.get("gids", []):
            if gid.get("netdev") in by_name:
                netdev = by_name[gid["netdev"]]
                break
        if netdev is None and isinstance(port.get("port"), int):
            matches = [dev for dev in netdevs if dev.get("dev_port") == port["port"] - 1]
            if len(matches) == 1:
                netdev = matches[0]
        if netdev is None and len(netdevs) == 1:
            netdev = netdevs[0]
        port["netdev"] = netdev["name"] if netdev else None
        port["mtu"] = netdev["mtu"] if netdev else None


def _collect_nics(sys_root, addresses, warnings, rdma_cache):
    """NIC facts per PCI function; rdma_cache receives every RDMA device read (name -> dict)."""
    nics = []
    for address in addresses:
        info = sysfs.read_pci_function(sys_root, address)
        entry = devices.mellanox_device(info["device_id"])
        physfn = sysfs.read_physfn(sys_root, address)
        kind = "VF" if physfn or (entry and entry["function"] == "VF") else "PF"
        info.update({
            "model": entry["model"] if entry else None,
            "family": entry["family"] if entry else None,
            "function": kind,
            "pf_pci_address": physfn,
            "sriov": sysfs.read_sriov(sys_root, address) if kind == "PF" else None,
            "netdevs": sysfs.read_pci_netdevs(sys_root, address),
        })
        if entry is None:
            warnings.append("NIC %s: unknown Mellanox device ID %s" % (address, info["device_id"]))
        rdma_names = sysfs.read_pci_rdma_names(sys_root, address)
        rdma = [_read_rdma(sys_root, address, name) for name in rdma_names]
        for dev in rdma:
            rdma_cache[dev["name"]] = dev
        info["rdma_device"] = rdma_names[0] if rdma_names else None
        info["rdma_devices"] = rdma_names
        first = rdma[0] if rdma else {}
        info["fw_ver"] = first.get("fw_ver")
        info["node_guid"] = first.get("node_guid")
        info["hca_type"] = first.get("hca_type")
        info["board_id"] = first.get("board_id")
        ports = [port for dev in rdma for port in dev["ports"]]
        _port_mtus(ports, info["netdevs"])
        info["ports"] = ports
        info["link_layers"] = sorted({port["link_layer"] for port in ports if port.get("link_layer")})
        if info["driver"] is None:
            warnings.append("NIC %s: no driver bound" % address)
        nics.append(info)
    by_address = {nic["pci_address"]: nic for nic in nics}
    for nic in nics:
        if nic["function"] == "VF":
            pf = by_address.get(nic["pf_pci_address"])
            nic["model"] = devices.vf_model(nic["device_id"], pf["model"] if pf else None)
    return nics


def _collect_rdma_devices(sys_root, nics, warnings, rdma_cache):
    """Every infiniband-class device, also those without a PCI link (partial trees) or of other vendors."""
    by_rdma = {nic["rdma_device"]: nic for nic in nics if nic.get("rdma_device")}
    result = []
    for name in sysfs.list_rdma_devices(sys_root):
        cached = rdma_cache.get(name)
        info = (dict(cached, ports=[dict(port) for port in cached["ports"]]) if cached
                else sysfs.read_rdma_device(sys_root, name))
        nic = by_rdma.get(name)
        entry = devices.mellanox_model_from_hca_type(info["hca_type"])
        if nic is not None:
            info["pci_address"] = nic["pci_address"]
            vendor = "mellanox"
            model, family = nic.get("model"), nic.get("family")
        else:
            vendor = "mellanox" if (entry or name.startswith(("mlx4_", "mlx5_"))) else None
            model = entry["model"] if entry else None
            family = entry["family"] if entry else (name[:4] if name.startswith(("mlx4_", "mlx5_")) else None)
        if info["pci_address"] is None:
            warnings.append(
                "RDMA device %s has no device link to a PCI function; PCI facts and topology unknown" % name)
        info.update({"vendor": vendor, "model": model, "family": family})
        result.append(info)
    return result


def _collect_gpus(sys_root, addresses, smi, warnings):
    sys_info = {address: sysfs.read_pci_function(sys_root, address) for address in addresses}
    gpus = []
    if smi is not None:
        for gpu in smi["gpus"]:
            address = gpu.get("pci_address")
            pci = sys_info.pop(address, None)
            if pci is None:
                warnings.append("GPU %s from nvidia-smi not found in sysfs" % address)
                pci = {}
            # sysfs reads the device's configuration space: its ID wins over what nvidia-smi reports.
            if pci.get("device_id"):
                if gpu.get("pci_device_id") and gpu["pci_device_id"] != pci["device_id"]:
                    warnings.append("GPU %s: nvidia-smi reports PCI device ID %s, sysfs %s; the sysfs one is kept"
                                    % (address, gpu["pci_device_id"], pci["device_id"]))
                gpu["pci_device_id"] = pci["device_id"]
            if not gpu.get("name"):
                gpu["name"] = devices.nvidia_gpu_model(gpu.get("pci_device_id"))
            gpu.update({
                "memory_source": "nvidia-smi" if gpu.get("memory_total_mib") is not None else None,
                "source": "nvidia-smi",
                "driver": pci.get("driver"),
                "numa_node": pci.get("numa_node"),
                "local_cpulist": pci.get("local_cpulist"),
                "pcie": pci.get("pcie"),
                "sysfs_path": pci.get("sysfs_path"),
            })
            gpus.append(gpu)
    for address in sorted(sys_info):
        pci = sys_info[address]
        if smi is not None:
            warnings.append("GPU %s is in sysfs but not reported by nvidia-smi (driver %s)" % (address, pci["driver"]))
        gpus.append({
            "index": len(gpus),
            "name": devices.nvidia_gpu_model(pci["device_id"]),  # from the PCI ID table: nvidia-smi did not run
            "uuid": None,
            "pci_address": address,
            "pci_device_id": pci["device_id"],
            "driver_version": None,
            "cuda_version": None,
            "memory_total_mib": None,
            "memory_source": None,
            "persistence_mode": None,
            "addressing_mode": None,
            "mig_mode": {"current": None, "pending": None},
            "source": "sysfs",
            "driver": pci["driver"],
            "numa_node": pci["numa_node"],
            "local_cpulist": pci["local_cpulist"],
            "pcie": pci["pcie"],
            "sysfs_path": pci["sysfs_path"],
        })
    return gpus


def collect(sys_root="/sys", proc_root="/proc", nvidia_smi_xml=None, nvidia_smi_error=None,
            gather_gpus=True, gather_nics=True):
    """Facts of the node whose sysfs/procfs are mounted at sys_root/proc_root.

    nvidia_smi_xml: output of `nvidia-smi -q -x` (None: GPUs come from sysfs only);
    nvidia_smi_error: why there is no XML, reported as a warning."""
    warnings = []
    if nvidia_smi_error:
        warnings.append(nvidia_smi_error)
    if not os.path.isdir(sysfs.pci_devices_dir(sys_root)):
        warnings.append("%s is missing: no PCI facts" % sysfs.pci_devices_dir(sys_root))
    gpu_addresses, nic_addresses = [], []
    for address in sysfs.list_pci_functions(sys_root):
        vendor = sysfs.read_pci_vendor(sys_root, address)
        if vendor == devices.NVIDIA_VENDOR_ID and devices.is_gpu_class(sysfs.read_pci_class(sys_root, address)):
            gpu_addresses.append(address)
        elif vendor == devices.MELLANOX_VENDOR_ID:
            nic_addresses.append(address)

    smi = None
    if nvidia_smi_xml is not None and gather_gpus:
        try:
            smi = nvidia_smi.parse(nvidia_smi_xml)
        except ValueError as exc:
            warnings.append("nvidia-smi output ignored, GPUs read from sysfs: %s" % exc)
    gpus = _collect_gpus(sys_root, gpu_addresses, smi, warnings) if gather_gpus else []
    rdma_cache = {}
    nics = _collect_nics(sys_root, nic_addresses, warnings, rdma_cache) if gather_nics else []
    rdma_devices = _collect_rdma_devices(sys_root, nics, warnings, rdma_cache) if gather_nics else []

    proc_modules = sysfs.read_proc_modules(proc_root)
    if proc_modules is None:
        warnings.append("%s/modules is unreadable: kernel module state unknown" % proc_root)
    modules = _watched_modules(sys_root, proc_modules)
    if modules["nvidia"] is None and smi is not None and smi["gpus"]:
        modules["nvidia"] = True  # nvidia-smi only lists GPUs through a loaded driver
    kernel_release = sysfs.read_kernel_release(proc_root)
    driver = _nvidia_driver(proc_root, sys_root, smi, gpus)
    dma_buf = readiness.dma_buf_support(kernel_release, driver["open_kernel_module"], driver["version"])
    peermem = modules.get("nvidia_peermem")
    path = "nvidia_peermem" if peermem else ("dma_buf" if dma_buf["usable"] else None)

    chains = {}
    for item in gpus + nics:
        chains[item["pci_address"]] = topology.pci_chain(item.get("sysfs_path"))
    topo = topology.gpu_nic_topology(gpus, nics, chains)

    facts = {
        "schema_version": FACTS_SCHEMA_VERSION,
        "sys_root": sys_root,
        "proc_root": proc_root,
        "kernel": {"release": kernel_release},
        "kernel_modules": modules,
        "nvidia_driver": driver,
        "nvidia_smi": {
            "used": smi is not None,
            "xml_schema": smi["xml_schema"] if smi else None,
            "cuda_version": smi["cuda_version"] if smi else None,
        },
        "gpus": gpus,
        "nics": nics,
        "rdma_devices": rdma_devices,
        "peer_memory": {"nvidia_peermem_loaded": peermem, "dma_buf": dma_buf, "path": path},
        "topology": topo,
        "warnings": warnings,
    }
    facts["readiness"] = readiness.evaluate(facts)
    return facts


def find_nvidia_smi(option):
    """'skip' -> None; 'auto' -> nvidia-smi on PATH (or None); anything else is taken as a path."""
    if option == "skip":
        return None
    if option in (None, "auto"):
        return shutil.which("nvidia-smi")
    return option


def standalone_from_sources(sources, generated_by):
    """Source of one self-contained script from ``sources`` ({module name: source text}, the siblings and
    "collector"): the sibling modules are embedded and preloaded, then the collector runs as __main__."""
    lines = [
        "#!/usr/bin/env python3",
        "# Generated by %s; do not edit." % generated_by,
        "# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)",
        "import sys",
        "import types",
        "_SOURCES = {",
    ]
    for name in SIBLING_MODULES + ("collector",):
        lines.append("    %r: %r," % (name, sources[name]))
    lines += [
        "}",
        "for _name in %r:" % (SIBLING_MODULES,),
        "    _module = types.ModuleType(_name)",
        "    _module.__file__ = '<standalone %s.py>' % _name",
        "    sys.modules[_name] = _module",
        "    exec(compile(_SOURCES[_name], _module.__file__, 'exec'), _module.__dict__)",
        "exec(compile(_SOURCES['collector'], '<standalone collector.py>', 'exec'), {'__name__': '__main__'})",
        "",
    ]
    return "\n".join(lines)


def build_standalone():
    """The self-contained script, from the files next to this one."""
    here = os.path.dirname(os.path.abspath(__file__))
    sources = {}
    for name in SIBLING_MODULES + ("collector",):
        with open(os.path.join(here, name + ".py")) as handle:
            sources[name] = handle.read()
    return standalone_from_sources(sources, "gpudirect.openshift collector.py --write-standalone")


def main(argv=None):
    parser = argparse.ArgumentParser(description="GPU/NIC facts of this node for GPUDirect RDMA (JSON).")
    parser.add_argument("--sys-root", default="/sys", help="where the host's sysfs is mounted (default /sys)")
    parser.add_argument("--proc-root", default="/proc", help="where the host's procfs is mounted (default /proc)")
    parser.add_argument("--nvidia-smi", default="auto", help="path to nvidia-smi, 'auto' (PATH) or 'skip'")
    parser.add_argument("--json", action="store_true", help="print compact JSON (default: indented)")
    parser.add_argument("--no-gpus", action="store_true", help="skip GPU facts")
    parser.add_argument("--no-nics", action="store_true", help="skip NIC facts")
    parser.add_argument("--write-standalone", metavar="PATH",
                        help="write a single-file copy of this tool (siblings embedded) to PATH and exit")
    args = parser.parse_args(argv)
    if args.write_standalone:
        with open(args.write_standalone, "w") as handle:
            handle.write(build_standalone())
        return 0
    xml_text, error = None, None
    binary = find_nvidia_smi(args.nvidia_smi) if not args.no_gpus else None
    if binary:
        xml_text, error = nvidia_smi.run(binary)
    facts = collect(args.sys_root, args.proc_root, xml_text, error, not args.no_gpus, not args.no_nics)
    sys.stdout.write(json.dumps(facts, sort_keys=True, indent=None if args.json else 2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
