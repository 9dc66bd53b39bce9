# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect RDMA readiness verdict of one node, from the collected facts.

Every blocking problem is listed (not just the first), each with a stable code and a message;
warnings do not make the node "not ready"."""


# DMA-BUF for GPU memory needs these (see docs/facts.md for the heuristic).
DMA_BUF_MIN_KERNEL = (5, 12)
DMA_BUF_MIN_DRIVER = 515


def _add(bucket, code, message):
    bucket.append((code, message))


def _mellanox_rdma(facts):
    """(name, ports) of every Mellanox RDMA device, with or without a known PCI function."""
    devices = []
    seen = set()
    for nic in facts.get("nics", []):
        if nic.get("rdma_device"):
            devices.append((nic["rdma_device"], nic.get("ports", []), nic.get("function"), nic.get("family")))
            seen.add(nic["rdma_device"])
    for dev in facts.get("rdma_devices", []):
        if dev["name"] in seen or dev.get("pci_address"):
            continue
        if dev.get("vendor") == "mellanox":
            devices.append((dev["name"], dev.get("ports", []), None, dev.get("family")))
    return devices


def evaluate(facts):
    """{ready, reasons, reason_codes, warnings, warning_codes} for a facts dict from collector.collect()."""
    reasons = []
    warnings = []
    modules = facts.get("kernel_modules", {})
    gpus = facts.get("gpus", [])
    nics = facts.get("nics", [])

    # nvidia-smi answering is evidence of a loaded driver; an unreadable /proc/modules (None) is no evidence either way.
    driver_seen = (any(gpu.get("driver") == "nvidia" for gpu in gpus) or modules.get("nvidia") is True
                   or (facts.get("nvidia_smi") or {}).get("used") is True)
    if not gpus:
        _add(reasons, "no_nvidia_gpu",
             "no NVIDIA GPU found (no PCI function with vendor 0x10de and a display/3D class)")
    elif not driver_seen and modules.get("nvidia") is None:
        _add(warnings, "nvidia_driver_unknown",
             "cannot tell whether the nvidia kernel driver is loaded: no GPU shows a bound driver and the kernel "
             "module list is unreadable")
    elif not driver_seen:
        _add(reasons, "nvidia_driver_not_loaded",
             "NVIDIA GPU present but the nvidia kernel driver is not loaded or bound")

    rdma = _mellanox_rdma(facts)
    if not nics and not rdma:
        _add(reasons, "no_mellanox_nic",
             "no NVIDIA/Mellanox network adapter found (no PCI function with vendor 0x15b3)")
    elif not rdma:
        _add(reasons, "no_rdma_device",
             "NVIDIA/Mellanox NIC present but no RDMA device is registered (mlx5_ib/mlx5_core driver not loaded?)")
    else:
        active = [(name, port) for name, ports, _kind, _fam in rdma for port in ports if port.get("state") == "ACTIVE"]
        if not active:
            states = ", ".join("%s/%s=%s" % (name, port.get("port"), port.get("state"))
                               for name, ports, _kind, _fam in rdma for port in ports) or "no ports"
            _add(reasons, "no_active_rdma_port", "no RDMA port of an NVIDIA/Mellanox NIC is ACTIVE (%s)" % states)
        else:
            for name, ports, kind, _fam in rdma:
                for port in ports:
                    if port.get("state") != "ACTIVE" and kind != "VF":
                        _add(warnings, "rdma_port_not_active",
                             "RDMA port %s/%s is %s (%s)" % (name, port.get("port"), port.get("state"),
                                                             port.get("phys_state")))
        if all(fam == "mlx4" for _name, _ports, _kind, fam in rdma):
            _add(warnings, "mlx4_only",
                 "only mlx4 (ConnectX-3) RDMA devices found; GPUDirect RDMA with the NVIDIA operators needs mlx5 "
                 "adapters")
        if modules.get("ib_uverbs") is False:
            _add(reasons, "ib_uverbs_not_loaded",
                 "ib_uverbs is not loaded: user-space verbs (ib_write_bw, NCCL) cannot open RDMA devices")

    peer = facts.get("peer_memory", {})
    if gpus and peer.get("path") is None:
        dma = peer.get("dma_buf", {})
        peermem = ("is not loaded" if peer.get("nvidia_peermem_loaded") is False
                   else "is not known to be loaded (module list unreadable)")
        _add(reasons, "no_peer_memory_path",
             "no GPU peer memory path: nvidia_peermem %s and DMA-BUF is %s (%s)"
             % (peermem, "not usable" if dma.get("usable") is False else "not confirmed",
                dma.get("detail") or "no details"))

    elif gpus and peer.get("path") == "dma_buf" and not peer.get("nvidia_peermem_loaded"):
        _add(warnings, "nvidia_peermem_not_loaded",
             "the nvidia_peermem peer-memory module is not loaded; GPU memory would be registered through DMA-BUF "
             "instead")

    if modules.get("irdma") is True:
        _add(reasons, "irdma_loaded",
             "irdma (Intel RDMA) is loaded; it conflicts with the NVIDIA DOCA driver reload (blacklist it)")

    topo = facts.get("topology", {})
    relations = [pair.get("relation") for pair in topo.get("pairs", []) if pair.get("rdma_device")]
    if relations and all(rel == "SYS" for rel in relations):
        _add(warnings, "all_pairs_sys",
             "every GPU-NIC pair crosses the inter-socket link (SYS): GPUDirect RDMA bandwidth will suffer")
    if relations and any(rel is None for rel in relations):
        _add(warnings, "topology_unknown",
             "the PCIe relation of some GPU-NIC pairs is unknown (missing sysfs device paths)")

    return {
        "ready": not reasons,
        "reasons": [message for _code, message in reasons],
        "reason_codes": [code for code, _message in reasons],
        "warnings": [message for _code, message in warnings],
        "warning_codes": sorted({code for code, _message in warnings}),
    }


def _version_tuple(text, parts):
    numbers = []
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8", "replace")
    for piece in (text or "").replace("-", ".").split("."):
        if not piece.isdigit():
            break
        numbers.append(int(piece))
        if len(numbers) == parts:
            break
    return tuple(numbers) if len(numbers) == parts else None


def dma_buf_support(kernel_release, open_kernel_module, driver_version):
    """DMA-BUF verdict: {usable: True/False/None, kernel_supports, driver_supports, detail}.

    CONFIG_DMA_SHARED_BUFFER cannot be read from a pod, so a kernel >= 5.12 is taken as support;
    the NVIDIA side needs the open kernel module (R515 or newer)."""
    kernel = _version_tuple(kernel_release, 2)
    kernel_ok = None if kernel is None else kernel >= DMA_BUF_MIN_KERNEL
    major = _version_tuple(driver_version, 1)
    driver_ok = None if major is None else major[0] >= DMA_BUF_MIN_DRIVER
    details = []
    if kernel_ok is None:
        details.append("kernel release unknown")
    elif not kernel_ok:
        details.append("kernel %s older than 5.12" % kernel_release)
    if open_kernel_module is None:
        details.append("cannot tell whether the NVIDIA open kernel module is in use")
    elif not open_kernel_module:
        details.append("proprietary NVIDIA kernel module (DMA-BUF needs the open one)")
    if driver_ok is False:
        details.append("driver %s older than R515" % driver_version)
    if kernel_ok is False or open_kernel_module is False or driver_ok is False:
        usable = False
    elif kernel_ok and open_kernel_module and driver_ok is not False:
        usable = True
    else:
        usable = None
    return {
        "usable": usable,
        "kernel_supports": kernel_ok,
        "driver_supports": driver_ok,
        "detail": "; ".join(details) if details else "kernel >= 5.12 and NVIDIA open kernel module",
    }
