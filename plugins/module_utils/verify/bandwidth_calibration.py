# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What an ib_write_bw result should be on given hardware: physical bounds and published real runs (issue 36).

Pure functions and data, no cluster client. The verdict (cluster/bandwidth_run.py) and the simulator's perftest pods
(simulator/controllers/perftest_pods.py) both read this one table, so the simulated numbers are the calibrated ones.

Bound of one GPUDirect transfer = min(link rate, PCIe payload rate of the GPU's link, of the NIC's link):

- PCIe payload rate = GT/s x lanes x line-code efficiency (8b/10b up to Gen2, 128b/130b from Gen3, PCI-SIG base
  specification) x TLP payload efficiency MPS / (MPS + 24): a posted write of MPS bytes carries a 16-byte header
  (64-bit address), a 2-byte sequence number, a 4-byte LCRC and 2 framing bytes, the model of Neugebauer et al.,
  "Understanding PCIe performance for end host networking", SIGCOMM 2018 (pcie-bench). MPS 256 B (what x86 hosts
  negotiate for these devices) gives 256/280 = 91.4 %: Gen4 x16 carries 230 Gb/s of payload, Gen5 x16 461 Gb/s. DLLP
  (ACK, flow control) traffic is left out, so the bound is an upper one.
- The link rate is the port's data rate (ibstatus / sysfs rate: after the line code). RoCE also carries Ethernet,
  IP, UDP, BTH and ICRC per packet of one path MTU: a message rate is bounded by MTU / (MTU + 82) on the wire
  (preamble+IFG 20, Ethernet 14+4, IPv4 20, UDP 8, BTH 12, ICRC 4); InfiniBand by MTU / (MTU + 26) (LRH 8, BTH
  12, ICRC 4, VCRC 2). The link rate times that is the link's payload bound.

The expected range for a healthy GPUDirect run is [low, 1] x bound, low = the lowest healthy fraction of bound in
the published rows below (every row names its source); a path through the CPU (NODE, SYS) lowers it by the derating
of the rows measured on such paths. Where no row covers a case the range says so (`sources_thin`).
"""


# Line-code efficiency per PCIe transfer rate in GT/s (PCI-SIG base specification: 8b/10b for 2.5 and 5 GT/s,
# 128b/130b for 8, 16 and 32 GT/s).
PCIE_LINE_CODE = {2.5: 8 / 10.0, 5.0: 8 / 10.0, 8.0: 128 / 130.0, 16.0: 128 / 130.0, 32.0: 128 / 130.0}
PCIE_GENERATION = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5}
MAX_PAYLOAD_BYTES = 256
TLP_OVERHEAD_BYTES = 24  # header 16 (64-bit address) + sequence 2 + LCRC 4 + framing 2 (Neugebauer et al. 2018)
ROCE_OVERHEAD_BYTES = 82  # preamble+IFG 20, Ethernet 18, IPv4 20, UDP 8, BTH 12, ICRC 4 (IBTA annex A16/A17)
IB_OVERHEAD_BYTES = 26  # LRH 8, BTH 12, ICRC 4, VCRC 2 (IBTA volume 1)

# PCIe link of GPU models whose negotiated link the facts may not give (the device's own link; an x16 slot):
# NVIDIA A40 product brief PB-09976-001_v04 (PCIe Gen4 x16); A100 and H100/H200 datasheets (A100: PCIe Gen4 64 GB/s;
# H100/H200 SXM and PCIe: PCIe Gen5 128 GB/s); Tesla T4 datasheet (PCIe Gen3 x16).
GPU_PCIE = (("H200", 32.0, 16), ("H100", 32.0, 16), ("A100", 16.0, 16), ("A40", 16.0, 16), ("A30", 16.0, 16),
            ("T4", 8.0, 16))

# Published real runs. fraction = BW average / the bound of that hardware, as the source reports the hardware.
# verdict: what the source says about the run (healthy, or degraded with its cause).
SOURCES = {
    "redhat-chapter": {
        "title": "Red Hat OpenShift documentation, GPUDirect RDMA chapter (SR-IOV legacy RoCE, A40, ConnectX-6 Dx VF)",
        "url": "https://docs.redhat.com/en/documentation/openshift_container_platform/4.19/html/hardware_accelerators/"
               "rdma-verifying-rdma-connectivity_rdma-remote-direct-memory-access",
        "test": "ib_write_bw -R -T 41 -s 65536 -F -x 3 -m 4096 --report_gbits -q 16 -D 60 --use_cuda=0 "
                "--use_cuda_dmabuf",
        "hardware": "200 Gb/s RoCE (MT4123/MT4124 VF), MTU 1024, NVIDIA A40 (PCIe Gen4 x16)",
        "measured_gbps": 180.47, "link_gbps": 200.0, "gpu_memory": True, "verdict": "healthy",
    },
    "redhat-gpu-tools": {
        "title": "Red Hat engineer write-up, schmaustech/gpu-tools (same lab, shared device RoCE, peer memory)",
        "url": "https://github.com/schmaustech/gpu-tools",
        "test": "ib_write_bw -s 65536 -q 16 --use_cuda=0 --report_gbits",
        "hardware": "200 Gb/s RoCE, MTU 1024, NVIDIA A40 (PCIe Gen4 x16)",
        "measured_gbps": 181.46, "link_gbps": 200.0, "gpu_memory": True, "verdict": "healthy",
    },
    "nvidia-gpu-operator": {
        "title": "NVIDIA GPU Operator documentation, GPUDirect RDMA (ib_write_bw -a, 1 QP, DMA-BUF)",
        "url": "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html",
        "test": "ib_write_bw --use_cuda=0 --use_cuda_dmabuf -a -F --report_gbits -q 1",
        "hardware": "100 Gb/s RoCE",
        "measured_gbps": 92.4, "link_gbps": 100.0, "gpu_memory": True, "verdict": "healthy",
    },
    "azure-ndv5-gdr": {
        # The README's table writes "380 GB/s"; a 400 Gb/s port cannot carry 380 GB/s, so the unit is Gb/s.
        "title": "Azure/azurehpc-health-checks README, check_ib_bw_loop_gdr expected value on NDv5 (H100, NDR)",
        "url": "https://github.com/Azure/azurehpc-health-checks/pull/38",
        "test": "ib_write_bw with GPUDirect RDMA per HCA (the health check's threshold, not one run)",
        "hardware": "400 Gb/s InfiniBand NDR (ConnectX-7), H100 (PCIe Gen5), rail NIC next to its GPU",
        "measured_gbps": 380.0, "link_gbps": 400.0, "gpu_memory": True, "verdict": "healthy",
    },
    "azure-ndv4-gdr": {
        "title": "Azure/azurehpc-health-checks README, check_ib_bw_loop_gdr expected value on NDv4 (A100, HDR)",
        "url": "https://github.com/Azure/azurehpc-health-checks/pull/38",
        "test": "ib_write_bw with GPUDirect RDMA per HCA (the health check's threshold, not one run)",
        "hardware": "200 Gb/s InfiniBand HDR (ConnectX-6), A100 (PCIe Gen4)",
        "measured_gbps": 180.0, "link_gbps": 200.0, "gpu_memory": True, "verdict": "healthy",
    },
    "perftest-241": {
        "title": "linux-rdma/perftest issue 241, 'ib_write_bw poor GPU performance but CPU works fine' (A30, path SYS)",
        "url": "https://github.com/linux-rdma/perftest/issues/241",
        "test": "ib_write_bw -d mlx5_0 --use_cuda=0 -s 33554432 (GPU) against the same without --use_cuda (host)",
        "hardware": "A30 and NIC on different CPU sockets (SYS): ~11000 MB/s from GPU memory, ~23000 MB/s from host "
                    "memory",
        "measured_gbps": 11000 * 0.008388608, "host_gbps": 23000 * 0.008388608, "gpu_memory": True,
        "verdict": "degraded: GPU and NIC on different sockets (SYS)",
    },
}

HEALTHY_ROWS = ("redhat-chapter", "redhat-gpu-tools", "nvidia-gpu-operator", "azure-ndv5-gdr", "azure-ndv4-gdr")
# Paths whose traffic crosses the CPU: the SYS derating is perftest issue 241's GPU / host ratio. No published run in
# this table measures NODE or PHB alone: their range is SYS's low end up to the healthy high end (sources_thin).
CPU_PATHS = ("PHB", "NODE", "SYS")


def pcie_payload_gbps(gts, width, mps=MAX_PAYLOAD_BYTES):
    """Payload Gb/s a PCIe link carries in one direction (module docstring), or None when gts/width are unknown."""
    try:
        gts, width = float(gts), int(width)
    except (TypeError, ValueError):
        return None
    code = PCIE_LINE_CODE.get(gts)
    if code is None or width < 1:
        return None
    return gts * width * code * mps / float(mps + TLP_OVERHEAD_BYTES)


def wire_efficiency(link_layer, mtu):
    """Payload share of the wire for one path MTU (module docstring); 1.0 when the MTU is unknown."""
    try:
        mtu = int(mtu)
    except (TypeError, ValueError):
        return 1.0
    if mtu <= 0:
        return 1.0
    overhead = IB_OVERHEAD_BYTES if link_layer in ("IB", "InfiniBand") else ROCE_OVERHEAD_BYTES
    return mtu / float(mtu + overhead)


def pcie_text(gts, width):
    """'PCIe Gen4 x16 (16 GT/s)' or None."""
    try:
        gts, width = float(gts), int(width)
    except (TypeError, ValueError):
        return None
    generation = PCIE_GENERATION.get(gts)
    return "PCIe %sx%d (%g GT/s)" % ("Gen%d " % generation if generation else "", width, gts)


def gpu_pcie(model):
    """(GT/s, lanes) of a GPU model from GPU_PCIE, or (None, None)."""
    for name, gts, width in GPU_PCIE:
        if name.lower() in str(model or "").lower():
            return gts, width
    return None, None


def _fraction(key):
    row = SOURCES[key]
    return row["measured_gbps"] / row["link_gbps"]


def healthy_range():
    """(low, high) fraction of the bound over the healthy rows, and their keys."""
    fractions = [_fraction(key) for key in HEALTHY_ROWS]
    return min(fractions), max(fractions), list(HEALTHY_ROWS)


def sys_derating():
    row = SOURCES["perftest-241"]
    return row["measured_gbps"] / row["host_gbps"]


def expected(link_gbps, link_layer=None, mtu=None, gpu_link=(None, None), nic_link=(None, None), path=None):
    """Expected BW average of a healthy GPUDirect ib_write_bw run of large messages on this hardware.

    Returns {bound_gbps, limited_by, low_gbps, high_gbps, low_fraction, sources, sources_thin, why}: `why` lists the
    reasons the bound is below the link rate (PCIe, MTU, path), in words a report can show.
    """
    if not link_gbps:
        return None
    candidates = [(float(link_gbps), "link rate %g Gb/s" % float(link_gbps))]
    why = []
    for side, (gts, width) in (("GPU", gpu_link or (None, None)), ("NIC", nic_link or (None, None))):
        payload = pcie_payload_gbps(gts, width)
        if payload is not None:
            candidates.append((payload, "%s %s: %.0f Gb/s of payload" % (side, pcie_text(gts, width), payload)))
    bound, limited_by = min(candidates)
    if limited_by != candidates[0][1]:
        why.append("the %s carries less than the %g Gb/s link" % (limited_by, float(link_gbps)))
    efficiency = wire_efficiency(link_layer, mtu)
    if efficiency < 0.95:
        why.append("path MTU %s: %.1f %% of the wire is payload" % (mtu, efficiency * 100))
    low, high, sources = healthy_range()
    thin = False
    if path in CPU_PATHS:
        derating = sys_derating()
        sources = sources + ["perftest-241"]
        why.append("GPU and NIC meet only through the CPU (%s): GPUDirect writes cross the host bridge%s" % (
            path, " and the socket interconnect" if path == "SYS" else ""))
        if path == "SYS":
            low, high = low * derating, high * derating
        else:  # no published run isolates NODE or PHB: anything from SYS's low end up is plausible
            low, thin = low * derating, True
    return {
        "bound_gbps": round(bound, 2),
        "limited_by": limited_by,
        "low_fraction": round(low, 4),
        "low_gbps": round(bound * low, 2),
        "high_gbps": round(bound * high, 2),
        "sources": sources,
        "sources_thin": thin,
        "why": why,
    }


def source_text(keys):
    return "; ".join("%s (%s)" % (SOURCES[key]["title"], SOURCES[key]["url"]) for key in keys)
