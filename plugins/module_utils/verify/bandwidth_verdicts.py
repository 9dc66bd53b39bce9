# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Cross-node bandwidth test, the verdicts: which RDMA device and link rate a pair's node has (NIC facts,
SriovNetworkNodeState), what the tested hardware is calibrated to reach, and the judgement of each pair and of the
run. Pure, like the settings, pods and pairs it judges (bandwidth_plan.py); cluster/bandwidth_run.py runs the pods.
"""


import re

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import bandwidth_calibration
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import perftest_diagnosis, perftest_output
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.bandwidth_plan import rail_text
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.pod_states import pod_phase


def _port_rate(port):
    for key in ("rate_gbps", "speed_gbps", "link_rate_gbps"):
        if port.get(key) not in (None, ""):
            return float(port[key])
    for key in ("speed", "rate"):
        value = port.get(key)
        if value not in (None, ""):
            try:
                return perftest_output._rate(value, key)  # pylint: disable=protected-access
            except ValueError:
                continue
    if port.get("speed_mbps"):
        return float(port["speed_mbps"]) / 1000.0
    return None


def facts_ports(settings, node):
    """The fact entries (hardware_facts_nic_ports) of `node` that match the fabric and the NIC selection."""
    selection = settings["selection"]
    ports = [p for p in settings["nic_ports"] if isinstance(p, dict) and p.get("node") == node]
    ports = [p for p in ports if not p.get("link_layer") or p.get("link_layer") == settings["link_layer"]]
    chosen = []
    for port in ports:
        if selection["interfaces"] and port.get("netdev") not in selection["interfaces"]:
            continue
        if selection["pci_addresses"] and port.get("pci_address") not in selection["pci_addresses"]:
            continue
        if selection["device_ids"] and str(port.get("device_id") or "") not in selection["device_ids"]:
            continue
        chosen.append(port)
    # With several rails a port of another rail is never a stand-in: rail i must be measured on rail i's NIC.
    if (settings.get("rail") or {}).get("count", 1) > 1:
        return chosen
    return chosen or ports


def device_for(settings, node):
    """RDMA device to pass with -d on `node`, or None to let the pod find it.

    SR-IOV pods get a VF with its own RDMA device, which only the pod can see, so facts (PFs) are not used there.
    """
    if settings["rdma_device"]:
        return settings["rdma_device"]
    if settings["method"] == "sriov_legacy":
        return None
    for port in facts_ports(settings, node):
        if port.get("rdma_device"):
            return port["rdma_device"]
    return None


def rail_device_problems(planned):
    """Why some rail's pods would not know their RDMA device, or [] (planned: [(rail settings, node), ...]).

    With several rails every rail's pods must be told their own device: a pod left to find one itself takes the
    first active port of the link layer, i.e. the same NIC for every rail, and would report rails it never measured.
    SR-IOV pods are the exception: their VF's device is the one behind their own secondary interface.
    """
    problems = []
    for settings, node in planned:
        rail = settings.get("rail") or {}
        if rail.get("count", 1) < 2 or settings["method"] == "sriov_legacy" or device_for(settings, node):
            continue
        problem = "%s: no RDMA device for node %s in nic_ports (verify_nic_ports)" % (rail_text(rail), node)
        if problem not in problems:
            problems.append(problem)
    if problems:
        problems.append("give the port facts of every tested node (the hardware_facts role, or verify_nic_ports), "
                        "so that each rail's pods use that rail's own device")
    return problems


def device_mismatch(expected, measured):
    """The diagnosis when perftest measured another device than the rail's, else None."""
    wrong = [(side, want, got) for side, want, got in expected_and_measured(expected, measured) if want and got
             and want != got]
    if not wrong:
        return None
    return {"code": "wrong_rdma_device", "ok": False, "evidence": [],
            "message": "the rail's device is %s but perftest measured %s: this result is not the rail's" % (
                " / ".join(sorted({w[1] for w in wrong})),
                ", ".join("%s %s" % (side, got) for side, _want, got in wrong))}


def expected_and_measured(expected, measured):
    return [(side, expected.get(side), measured.get(side)) for side in ("server", "client")]


def port_not_active(settings, node, device):
    """'node netdev (device) is DOWN in the facts' when the facts show the port `device` of `node` not ACTIVE, else
    None."""
    for port in facts_ports(settings, node):
        state = str(port.get("state") or "").rsplit(":", maxsplit=1)[-1].strip().upper()
        if device and port.get("rdma_device") == device and state and state != "ACTIVE":
            return "%s %s (%s) is %s in the facts" % (node, port.get("netdev") or "-", device, state)
    return None


def pair_side_hardware(settings, node, device, cuda_pci):
    """What one side measured through: its NIC's PCIe link, the GPU perftest picked (CUDA log 'PCIe address is 61:00')
    with its PCIe link, and nvidia-smi's name for the path between them, from the port facts (gpu_paths).

    The GPU's link falls back to its model's (bandwidth_calibration.GPU_PCIE) when the facts do not give it."""
    ports = [p for p in facts_ports(settings, node) if not device or p.get("rdma_device") == device]
    if not ports and settings["method"] == "sriov_legacy":
        # A VF's device is the pod's own; its PCIe path is its PF's, the port the configuration selected.
        ports = [p for p in facts_ports(settings, node) if not p.get("is_vf")]
    port = ports[0] if ports else {}
    side = {"nic_pcie": (port.get("pcie_gts"), port.get("pcie_width")), "gpu": None, "gpu_pcie": (None, None),
            "path": None}
    wanted = str(cuda_pci or "").lower()
    for entry in port.get("gpu_paths") or []:
        # "0000:61:00.0" against the "61:00" perftest prints
        if wanted and str(entry.get("gpu") or "").lower().split(":", 1)[-1].startswith(wanted):
            side.update(gpu=entry.get("gpu"), path=entry.get("relation"),
                        gpu_pcie=(entry.get("pcie_gts"), entry.get("pcie_width")))
            break
    return side


def calibrated_expectation(link_rate, link_layer, mtu, sides, gpu_model=None, gpu_memory=True):
    """bandwidth_calibration.expected for the weaker side of a pair (sides: pair_side_hardware of each), or None."""
    if not link_rate:
        return None
    best = None
    for side in sides:
        gpu_link = side["gpu_pcie"]
        if gpu_memory and not gpu_link[0]:
            gpu_link = bandwidth_calibration.gpu_pcie(gpu_model)
        expectation = bandwidth_calibration.expected(link_rate, link_layer, mtu, gpu_link if gpu_memory else None,
                                                     side["nic_pcie"], side["path"] if gpu_memory else None)
        if best is None or expectation["low_gbps"] < best["low_gbps"]:
            best = expectation
    return best


def expectation_text(measured, expectation):
    """The verdict's words: measured, expected range for this hardware, why it is lower than the link, the sources."""
    text = "expected %.2f-%.2f Gb/s for this hardware (bound %.2f Gb/s: %s)" % (
        expectation["low_gbps"], expectation["high_gbps"], expectation["bound_gbps"], expectation["limited_by"])
    if measured is not None:
        text = "%.2f Gb/s measured, %s" % (measured, text)
    if expectation["why"]:
        text += "; lower than the link because %s" % "; ".join(expectation["why"])
    if expectation["sources_thin"]:
        text += "; few published runs cover this path, the range is wide"
    return text + " [sources: %s]" % ", ".join(expectation["sources"])


def link_rate_for(settings, node, device=None, node_state=None):
    """(Gb/s, where it came from) for the port `node` tests, or (None, reason)."""
    if settings["link_rate_gbps"] is not None:
        return settings["link_rate_gbps"], "link_rate_gbps option"
    ports = facts_ports(settings, node)
    if device and settings["method"] != "sriov_legacy":
        ports = [p for p in ports if p.get("rdma_device") == device] or ports
    for port in ports:
        rate = _port_rate(port)
        if rate:
            return rate, "facts of %s %s" % (node, port.get("rdma_device") or port.get("netdev") or "")
    for interface in ((node_state or {}).get("status") or {}).get("interfaces") or []:
        selection = settings["selection"]
        if selection["interfaces"] and interface.get("name") not in selection["interfaces"]:
            continue
        if selection["pci_addresses"] and interface.get("pciAddress") not in selection["pci_addresses"]:
            continue
        link_type = (interface.get("linkType") or "").upper()
        if link_type and link_type != ("IB" if settings["link_layer"] == "InfiniBand" else "ETH"):
            continue
        match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*Mb/s", str(interface.get("linkSpeed") or ""))
        if match and float(match.group(1)) > 0:
            return float(match.group(1)) / 1000.0, "SriovNetworkNodeState %s %s" % (node, interface.get("name"))
    return None, "no link rate for %s: set verify_link_rate_gbps, or give the NIC facts (hardware_facts role)" % node


def _threshold(threshold, settings):
    """The fraction to reach: given, else the settings', else the calibrated healthy low end (no hardware known)."""
    for value in (threshold, settings.get("threshold")):
        if value is not None:
            return value
    return bandwidth_calibration.healthy_range()[0]


def judge(settings, client_log, server_log, client_pod, server_pod, link_rate, timed_out=False, problem=None,
          threshold=None):
    """Verdict of one pair: (parsed client run or None, evaluation or None, diagnosis).

    link_rate is what the run is judged against (the pair's bound), threshold the fraction of it to reach (default
    the settings' threshold)."""
    parsed = None
    evaluation = None
    log_for_diagnosis = client_log or ""
    pod_for_diagnosis = client_pod
    if client_log and client_log.strip():
        try:
            parsed = perftest_output.parse_bw_output(client_log, require_results=False)
        except perftest_output.PerftestParseError:
            parsed = None
    if parsed and parsed.get("rows") and link_rate:
        evaluation = perftest_output.evaluate_bw(parsed, link_rate, _threshold(threshold, settings))
        if evaluation["passed"] and settings["gpu_rdma_mode"] != "none":
            # A run from host memory measures the NIC, not GPUDirect: refuse it.
            if not parsed.get("use_cuda"):
                evaluation = dict(evaluation, passed=False, code="no_gpu_memory_path",
                                  reason="perftest ran from host memory (no CUDA set-up in its output); the image's "
                                         "perftest lacks CUDA")
            elif settings["gpu_rdma_mode"] == "dmabuf" and not parsed.get("use_dmabuf"):
                evaluation = dict(evaluation, passed=False, code="no_gpu_memory_path",
                                  reason="perftest did not register the GPU buffers with DMA-BUF although "
                                         "--use_cuda_dmabuf was asked for")
    # The side that failed first explains the pair: a server that exited before the client ran, or a
    # client that never started, is diagnosed from its own state and log.
    if problem == "server" or (server_pod and pod_phase(server_pod) == "Failed"
                               and not (parsed and parsed.get("rows"))):
        log_for_diagnosis = server_log or ""
        pod_for_diagnosis = server_pod
    diagnosis = perftest_diagnosis.diagnose(log=log_for_diagnosis, pod=pod_for_diagnosis, timed_out=timed_out,
                                            evaluation=evaluation if evaluation
                                            and evaluation.get("code") != "no_gpu_memory_path" else None)
    if evaluation and evaluation.get("code") == "no_gpu_memory_path" and diagnosis["ok"]:
        diagnosis = {"code": "no_gpu_memory_path", "ok": False,
                     "message": "perftest did not use the GPU memory path: %s" % evaluation["reason"], "evidence": []}
    if diagnosis["ok"] and not evaluation:
        diagnosis = {"code": "unknown", "ok": False,
                     "message": "perftest printed results but there is no link rate to judge them against",
                     "evidence": []}
    return parsed, evaluation, diagnosis


def summarize(pairs, threshold):
    """Aggregate of the pairs for set_stats and reports; with rails, also one entry per rail."""
    summary = _aggregate(pairs, threshold)
    rails = {}
    for pair in pairs:
        if pair.get("rail"):
            rails.setdefault(pair["rail"].get("index"), (pair["rail"], []))[1].append(pair)
    if rails:
        summary["rails"] = []
        for index in rails:  # first seen first: the pairs come rail after rail
            rail, members = rails[index]
            entry = {key: rail.get(key) for key in ("index", "network", "resource", "nic", "interfaces",
                                                    "pci_addresses", "ipam_range")}
            aggregate = _aggregate(members, threshold)
            entry.update((key, aggregate[key]) for key in ("pairs", "passed", "failed", "all_passed",
                                                           "min_bandwidth_gbps", "avg_bandwidth_gbps",
                                                           "max_bandwidth_gbps", "diagnoses"))
            summary["rails"].append(entry)
    return summary


def _aggregate(pairs, threshold):
    measured = [p["bandwidth_gbps"] for p in pairs if p.get("bandwidth_gbps") is not None]
    passed = [p for p in pairs if p.get("verdict") == "passed"]
    return {
        "pairs": len(pairs),
        "passed": len(passed),
        "failed": len(pairs) - len(passed),
        "all_passed": bool(pairs) and len(passed) == len(pairs),
        "min_bandwidth_gbps": round(min(measured), 2) if measured else None,
        "avg_bandwidth_gbps": round(sum(measured) / len(measured), 2) if measured else None,
        "max_bandwidth_gbps": round(max(measured), 2) if measured else None,
        "threshold": threshold,
        "diagnoses": sorted({p["diagnosis"]["code"] for p in pairs if p.get("verdict") != "passed"}),
    }


def failure_message(pairs):
    lines = []
    weak = []
    # Name the rail only when there are several: a one-rail message stays as it always was.
    several = any((p.get("rail") or {}).get("count", 1) > 1 for p in pairs)
    for pair in pairs:
        if pair.get("verdict") == "passed":
            continue
        diagnosis = pair.get("diagnosis") or {}
        evidence = diagnosis.get("evidence") or []
        rail = pair.get("rail") if several else None
        if rail and rail.get("index") not in weak:
            weak.append(rail.get("index"))
        lines.append("%s%s -> %s: %s: %s%s" % (
            "%s: " % rail_text(rail) if rail else "", pair["server_node"], pair["client_node"], diagnosis.get("code"),
            diagnosis.get("message"), " [%s]" % " | ".join(str(e) for e in evidence[:3]) if evidence else ""))
    rails = ""
    if several:
        count = max((p.get("rail") or {}).get("count", 1) for p in pairs)
        rails = ", on %d of %d rail(s)" % (len(weak), count)
    return "GPUDirect RDMA bandwidth test failed for %d of %d pair(s)%s: %s" % (
        len(lines), len(pairs), rails, "; ".join(lines))
