"""Scheduler, Multus and kubelet for the NCCL all-reduce verification pods (nccl-tests all_reduce_perf over MPI).

The collection runs `all_reduce_perf` across nodes as MPI Operator does for an MPIJob (kubeflow/mpi-operator,
pkg/controller/mpi_job_controller.go): one worker pod per node that holds the node's GPUs and rails and waits for
the launcher, and one launcher pod that runs `mpirun -H <worker>:<slots>,... all_reduce_perf_mpi ...` and
whose log is nccl-tests' output. Pods labelled app.kubernetes.io/component=gpudirect-nccl are scheduled, given
their networks and run by the same code as the perftest pods (perftest_pods.PerftestPodController):

- Worker (label gpudirect.openshift/nccl-role=worker): Running until deleted.
- Launcher (role launcher): after sim.config `nccl_run_seconds` (0.2) it finds the workers of its run by their
  pod IP in `mpirun -H`, and exits 0 with the output nccl-tests v2.19.6 prints (src/util.cu writeResultHeader,
  writeBenchmarkLinePreamble, writeBenchmarkLineBody with getFloatStr, writeResultFooter), for the sizes of its
  -b/-e/-f arguments, one rank per GPU slot.

Bandwidth model, following NVIDIA/nccl (master, the files named) for which rails a run uses, and published real runs
for what fraction of them it reaches:
- src/transport/net_ib/init.cc (ncclIbInit): NCCL keeps only IB ports named by NCCL_IB_HCA (the launcher's env, passed
  to every rank with mpirun -x) whose state is IBV_PORT_ACTIVE; a port that is down is no NET of the node at all.
- src/graph/search.cc (ncclTopoSelectNets, ncclTopoSearchRecNet): a node's ring channels start from the NETs local to
  its GPUs (a GPU whose own NIC is gone gets the node's other NETs); every channel runs at one bandwidth (bwInter)
  and takes it from the NET it crosses, and a NET with less left is skipped. So a node carries at most
  max over s of s x sum(floor(NET bw / s)) -- the sum of its active rails when they share a speed. (Left out: the
  bound of each GPU's own PCIe link on the paths search.cc follows, which matters only with fewer GPUs than rails,
  and that a GPU without its own NIC prefers the NETs at the nearest path type rather than all of them.)
- src/init.cc (initTransportsRank): nChannels, bwIntra and bwInter become the minimum over all ranks, so the node
  with the fewest or slowest active rails sets the pace of the whole job.
- src/graph/tuning.cc (ncclTopoTuneModel): ring bus bandwidth = nChannels x per-channel bandwidth.
A node with one of its 8 rails down therefore carries 7/8 of a healthy node, and the job with it 7/8 of a healthy
job. The launcher reports a ring's busbw inside the range published healthy runs reach of those rails
(plugins/module_utils/verify/nccl_calibration.py ring_range, the table in docs/nccl-tests.md), at a point drawn per set of
nodes (deterministic, as the perftest pods), kept 5 % of the range above its low end so the two decimals
nccl-tests prints never fall under it. (Left out: NCCL's tree on 2 nodes, which can show more than the rails' sum; the
simulated launcher stays a ring, what NCCL_ALGO=Ring shows.)
nccl-tests reports busbw = algbw x 2(n-1)/n (src/all_reduce.cu); time is a fixed 25 us of latency plus
size / algbw. A single node is bound by NVLink instead: 25 GB/s per link (NVLink 4) times the profile's
nvlink_links_per_gpu, at 85 %.

Faults, sim.faults.operator_faults["nccl"]: "launch_failure" (the launcher exits 3 with NCCL's failure lines),
"wrong_results" (the largest size reports #wrong in place and the out-of-bounds check fails), "hang" (the launcher
never finishes).
"""

import hashlib

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import nccl_calibration

from ._base import profile_node
from .perftest_pods import COMPONENT_LABEL, PerftestPodController, _env, _requests

COMPONENT = "gpudirect-nccl"
ROLE_LABEL = "gpudirect.openshift/nccl-role"
RUN_LABEL = "gpudirect.openshift/nccl-run"
FAULTS = ("launch_failure", "wrong_results", "hang")
GPU_RESOURCE = "nvidia.com/gpu"
NVLINK4_GBS_PER_LINK = 25.0
LATENCY_US = 25.0
NCCL_TESTS_VERSION = "2.19.6"
NCCL_CODE = 22803
_DEFAULTS = {"nccl_run_seconds": 0.2}


def is_nccl_pod(obj):
    return ((obj.get("metadata") or {}).get("labels") or {}).get(COMPONENT_LABEL) == COMPONENT


def parse_size(text):
    """nccl-tests' parsesize: a number with an optional K, M or G suffix (powers of 1024)."""
    text = str(text).strip()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def float_text(value, width):
    """getFloatStr (src/util.cu): 2, 1 or 0 decimals, whichever fits the width, else exponent form."""
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        text = fmt % (width, value)
        if len(text) <= width:
            return text
    return ("%*.1e" if width >= 7 else "%*.0e") % (width, value)


def _fraction(nodes):
    """Fraction of the rails' sum a ring reaches on these nodes: inside the calibrated healthy range, drawn per node set."""
    digest = hashlib.sha256(("nccl:" + ",".join(sorted(nodes))).encode()).digest()
    low, high, _sources = nccl_calibration.ring_range()
    return low + (high - low) * (0.05 + 0.95 * (int.from_bytes(digest[:2], "big") % 1000) / 1000.0)


def node_bus_gbps(pnode, hcas, gpus):
    """Gb/s one node's rails carry for an all-reduce over `gpus` GPUs using the HCAs named (NCCL_IB_HCA).

    The NETs are the active listed ports local to the GPUs used (GPU k beside HCA k of the list; a GPU whose HCA is
    down reaches every other active one); the channels share one speed s and each NET carries floor(its speed / s)
    of them (see the module docstring for the NCCL source this follows).
    """
    ports = dict((port.rdma_device, port) for nic in pnode.nics for port in nic.ports)
    listed = [ports[name] for name in hcas if name in ports]
    active = [port for port in listed if port.state == "ACTIVE"]
    if not active:
        return 0.0
    nets = {}
    for gpu in range(min(gpus, len(listed))):
        own = listed[gpu]
        for port in ([own] if own.state == "ACTIVE" else active):
            nets[port.rdma_device] = port.speed_gbps
    speeds = sorted(set(nets.values()))
    return max(speed * sum(int(rate // speed) for rate in nets.values()) for speed in speeds)


def result_rows(min_bytes, max_bytes, factor, ranks, busbw_peak_gbs, wrong_at_largest=0):
    """(size, count, out-of-place (time, algbw, busbw, wrong), in-place (...)) per size, float sum."""
    bus_factor = 2.0 * (ranks - 1) / ranks
    algbw_peak = busbw_peak_gbs / bus_factor if bus_factor else busbw_peak_gbs
    rows = []
    size = max(min_bytes, 4)
    while size <= max_bytes:
        count = size // 4
        nbytes = count * 4
        halves = []
        for place, skew in (("out", 1.0), ("in", 0.997)):
            time_us = LATENCY_US + nbytes / (algbw_peak * 1e3) * skew
            algbw = nbytes / (time_us * 1e3)
            wrong = wrong_at_largest if (place == "in" and size * factor > max_bytes) else 0
            halves.append((time_us, algbw, algbw * bus_factor, wrong))
        rows.append((nbytes, count, halves[0], halves[1]))
        if factor <= 1:
            break
        size *= factor
    return rows


def nccl_output(workers, args, busbw_peak_gbs, wrong_at_largest=0):
    """The text all_reduce_perf_mpi prints on rank 0. workers: [(hostname, profile node, slots)]."""
    min_bytes, max_bytes, factor, iters, warmup, check = 33554432, 33554432, 2, 20, 1, 1
    for flag, value in zip(args, args[1:]):
        if flag == "-b":
            min_bytes = parse_size(value)
        elif flag == "-e":
            max_bytes = parse_size(value)
        elif flag == "-f":
            factor = int(value)
        elif flag == "-n":
            iters = int(value)
        elif flag == "-w":
            warmup = int(value)
        elif flag == "-c":
            check = int(value)
    ranks = sum(slots for _host, _node, slots in workers)
    lines = ["# nccl-tests version %s nccl-headers=%d nccl-library=%d" % (NCCL_TESTS_VERSION, NCCL_CODE, NCCL_CODE),
             "# Collective test starting: all_reduce_perf_mpi",
             "# nThread 1 nGpus 1 minBytes %d maxBytes %d step: %d(factor) warmup iters: %d iters: %d agg iters: 1 validation: %d "
             "graph: 0 unalign: 0" % (min_bytes, max_bytes, factor, warmup, iters, check),
             "#", "# Using devices"]
    rank = 0
    for index, (host, pnode, slots) in enumerate(workers):
        for local in range(slots):
            gpu = pnode.gpus[local % len(pnode.gpus)] if pnode and pnode.gpus else None
            domain, bus, device = (gpu.pci_address.split(":") if gpu else ("0000", "00", "00.0"))
            lines.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" % (
                rank, 0, 1000 + 37 * index + local, host, local, int(domain, 16), int(bus, 16), int(device.split(".")[0], 16),
                gpu.model if gpu else "NVIDIA GPU"))
            rank += 1
    lines.append("#")
    lines.append("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " % ("", "", "", "", ""))
    lines.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " % (
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"))
    lines.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " % (
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""))
    rows = result_rows(min_bytes, max_bytes, factor, ranks, busbw_peak_gbs, wrong_at_largest)
    total, halves = 0.0, 0
    for nbytes, count, out_of_place, in_place in rows:
        text = "%12d  %12d  %8s  %6s  %6s" % (nbytes, count, "float", "sum", "%6i" % -1)
        for time_us, algbw, busbw, wrong in (out_of_place, in_place):
            wrong_text = ("%6g" % wrong) if check else "   N/A"
            text += "  %7s  %6s  %6s  %s" % (float_text(time_us, 7), float_text(algbw, 6), float_text(busbw, 6), wrong_text)
            total += busbw
            halves += 1
        lines.append(text)
    errors = 1 if wrong_at_largest else 0
    lines.append("# %-20s : %d %s" % ("Out of bounds values", errors, "FAILED" if errors else "OK"))
    lines.append("# %-20s : %g " % ("Avg bus bandwidth", total / halves if halves else 0.0))
    lines += ["#", "# Collective test concluded: all_reduce_perf_mpi", "#", ""]
    return "\n".join(lines)


def failure_output(host):
    """Rank 0's lines when NCCL finds no usable network: the lines of our own capture of that failure with
    nccl-tests v2.19.6 (tests/unit/fixtures/nccl/ours_h100_v2.19.6_net_plugin_warn.txt), on this host."""
    return ("# nccl-tests version %s nccl-headers=%d nccl-library=%d\n# Collective test starting: all_reduce_perf_mpi\n"
            "%s: Test NCCL failure common.cu:222 'invalid usage (run with NCCL_DEBUG=WARN for details) / '\n"
            " .. %s pid 1000: Test failure common.cu:1620\n .. %s pid 1000: Test failure common.cu:1454\n"
            % (NCCL_TESTS_VERSION, NCCL_CODE, NCCL_CODE, host, host, host))


class NcclPodController(PerftestPodController):
    """The perftest pods' scheduler and Multus, with MPI worker and launcher behaviour instead of perftest's."""

    @staticmethod
    def is_mine(obj):
        return is_nccl_pod(obj)

    def cfg(self, key):
        if key in _DEFAULTS:
            conf = getattr(self.rt.sim, "config", None) or {}
            return float(conf.get(key, _DEFAULTS[key]))
        return super().cfg(key)

    def fault_for(self, pod):
        value = self.rt.operator_faults().get("nccl")
        if isinstance(value, dict):
            value = value.get("fault")
        return value if value in FAULTS else None

    def _describe(self, pod, env, nad_types):
        return {"node": pod["spec"].get("nodeName")}

    def _begin(self, namespace, name, role, run, fault, secondary, running):
        self._set_log(namespace, name, "")
        self.rt.mutate("", "pods", namespace, name, running)
        pod = self._get(namespace, name)
        role = ((pod or {}).get("metadata", {}).get("labels") or {}).get(ROLE_LABEL)
        if role == "launcher" and fault != "hang":
            self.rt.later(self.cfg("nccl_run_seconds"), lambda: self.launch(namespace, name, fault))

    def launch(self, namespace, name, fault):
        launcher = self._get(namespace, name)
        if launcher is None:
            return
        command = list(launcher["spec"]["containers"][0].get("command") or []) + list(launcher["spec"]["containers"][0].get("args") or [])
        hosts = command[command.index("-H") + 1].split(",") if "-H" in command else []
        program = next((i for i, word in enumerate(command) if word.split("/")[-1].startswith("all_reduce_perf")), None)
        test_args = command[program + 1:] if program is not None else []
        run = (launcher["metadata"].get("labels") or {}).get(RUN_LABEL)
        workers_by_ip = {}
        for pod in self.rt.list("", "pods"):
            labels = pod["metadata"].get("labels") or {}
            if is_nccl_pod(pod) and labels.get(RUN_LABEL) == run and labels.get(ROLE_LABEL) == "worker" \
                    and (pod.get("status") or {}).get("phase") == "Running":
                workers_by_ip[(pod.get("status") or {}).get("podIP")] = pod
        workers = []
        for entry in hosts:
            address, _sep, slots = entry.partition(":")
            pod = workers_by_ip.get(address)
            if pod is None:
                # mpirun cannot reach a host that is not a running worker (ORTE/PRRTE: daemon failed to start)
                self.finish(namespace, name, 1, "ssh: connect to host %s port 22: Connection refused\n" % address)
                return
            node = pod["spec"].get("nodeName")
            workers.append((pod["metadata"]["name"], node, profile_node(self.rt, node),
                            int(slots or _requests(pod).get(GPU_RESOURCE, 1))))
        if not workers:
            self.finish(namespace, name, 1, "mpirun: no hosts given (-H)\n")
            return
        if fault == "launch_failure":
            self.finish(namespace, name, 3, failure_output(workers[0][0]))
            return
        hcas = [item.strip().lstrip("=").split(":")[0] for item in (_env(launcher).get("NCCL_IB_HCA") or "").split(",") if item.strip()]
        nodes = sorted(set(node for _pod, node, _p, _s in workers))
        if len(nodes) > 1:
            # the weakest node sets every rank's channels (src/init.cc); Gb/s to GB/s
            per_node = [node_bus_gbps(pnode, hcas, slots) if pnode else 0.0 for _pod, _node, pnode, slots in workers]
            peak = min(per_node) / 8.0 * _fraction(nodes)
        else:
            pnode = workers[0][2]
            links = pnode.nvlink_links_per_gpu if pnode else 0
            peak = (links * NVLINK4_GBS_PER_LINK if links else 25.0) * 0.85
        if peak <= 0:
            self.finish(namespace, name, 3, failure_output(workers[0][0]))
            return
        text = nccl_output([(pod_name, pnode, slots) for pod_name, _node, pnode, slots in workers], test_args, peak,
                           wrong_at_largest=7 if fault == "wrong_results" else 0)
        self.finish(namespace, name, 0, text)
