# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Cross-node GPUDirect RDMA bandwidth test with ib_write_bw (spec section 4.2): the pure part.

Settings from the module parameters, rails, the pods' manifests, the pairs and the rounds they run in: no cluster
client here (unit tested as is). bandwidth_verdicts.py judges the pairs; cluster/bandwidth_run.py runs the pods.
"""


import json

from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE

COMPONENT_LABEL = "app.kubernetes.io/component"
COMPONENT = "gpudirect-verify"
RUN_LABEL = "gpudirect.openshift/verify-run"
PAIR_LABEL = "gpudirect.openshift/verify-pair"
ROLE_LABEL = "gpudirect.openshift/verify-role"
ROUND_LABEL = "gpudirect.openshift/verify-round"
NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
NETWORK_STATUS_ANNOTATION = "k8s.v1.cni.cncf.io/network-status"
CONTAINER = "perftest"
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
SRIOV_NODE_STATE = ("sriovnetwork.openshift.io/v1", "SriovNetworkNodeState")

LINK_LAYERS = {"roce": "Ethernet", "infiniband": "InfiniBand"}
GPU_MODES = ("dmabuf", "peermem", "none")
# The pod's command. It runs perftest with its positional parameters (each argument one word: no splitting or
# globbing of user-given arguments) and the server address quoted. Without RDMA_DEVICE it takes the
# RDMA device behind the secondary interface (an SR-IOV VF has its own device, unknown before the pod runs),
# else the first active port of the fabric's link layer, else leaves the choice to perftest.
POD_SCRIPT = """dev="${RDMA_DEVICE:-}"
if [ -z "$dev" ] && [ -d "/sys/class/net/${SECONDARY_INTERFACE}/device/infiniband" ]; then
  dev=$(ls "/sys/class/net/${SECONDARY_INTERFACE}/device/infiniband" | head -n 1)
fi
if [ -z "$dev" ]; then
  for path in /sys/class/infiniband/*; do
    if [ "$(cat "$path/ports/1/link_layer" 2>/dev/null)" = "$RDMA_LINK_LAYER" ] && \
grep -q ACTIVE "$path/ports/1/state" 2>/dev/null; then
      dev=${path##*/}; break
    fi
  done
fi
exec "$PERFTEST_BINARY" "$@" ${dev:+-d "$dev"} -p "$PERFTEST_PORT" ${PERFTEST_SERVER_IP:+"$PERFTEST_SERVER_IP"}
"""
# $0 of the script above; the perftest arguments follow it in the container's command.
SCRIPT_NAME = "gpudirect-perftest"
RAIL_MODES = ("all", "first")
# Pairs of one round share no node, but they share the fabric's switches: how many run at once by default.
DEFAULT_PARALLEL_PAIRS = 16


def rails_in_parallel(asked, gpu_rdma_mode):
    """Whether the rails of a pair of nodes are tested at the same time.

    Each rail's pods use that rail's NIC only (its own RDMA resource, network and device) and one GPU each from the
    device plugin, which gives two pods of one node two different GPUs (unless GPUs are shared by time-slicing: then
    ask for rail after rail): with the buffers in GPU memory no two rails
    share a NIC, a GPU or the PCIe path between them, so running them together measures what running them one after
    another would, in 1/n of the time. With gpu_rdma_mode none every rail's buffers are in the node's host memory,
    which all rails would then share: those rails run one after another."""
    return asked is not False and gpu_rdma_mode != "none"


class SettingsError(ValueError):
    """Options that cannot work together; the module reports the message as is."""


def resource_count(value):
    try:
        text = str(value).strip()
        if text.endswith("k"):
            return int(text[:-1]) * 1000
        return int(float(text))
    except (TypeError, ValueError):
        return 0


def is_network_selection(text):
    """Whether ``text`` is one network in the short form of the Multus networks annotation, [namespace/]name[@ifname]
    (k8snetworkplumbingwg/multus-cni pkg/k8sclient/k8sclient.go, parsePodNetworkAnnotation and
    parsePodNetworkObjectName: a comma-separated list or JSON there would attach more networks)."""
    if not isinstance(text, str):
        return False
    rest, _at, interface = text.partition("@")
    namespace, _slash, name = rest.rpartition("/")
    return (names.is_dns1123_subdomain(name) and (not namespace or names.is_dns1123_label(namespace))
            and (not interface or names.is_ifname(interface)) and text.count("@") <= 1)


def settings_from(configuration=None, method=None, fabric=None, namespace=None, network=None, resources=None,
                  rails=None, gpu_resource="nvidia.com/gpu", gpu_rdma_mode=None, gpu_index=None, image=None,
                  image_pull_policy=None, binary=None, rdma_device=None, nic_ports=None, link_rate_gbps=None,
                  threshold=None, rdma_cm=True, gid_index=None, qps=None, message_size=None, sweep=False,
                  iterations=None, duration=None, port=None, extra_args=None, secondary_interface=None, nodes=None,
                  node_selector=None, service_account=None, start_timeout=None, run_timeout=None,
                  pending_grace_period=None, cleanup_timeout=None, parallel_pairs=None, parallel_rails=True):
    """Normalise and check the values of rdma_bandwidth's options of the same names; returns a dict the other
    helpers read."""
    configuration = configuration or {}
    method = method or configuration.get("method")
    fabric = fabric or configuration.get("fabric")
    errors = []
    if method not in ("shared_device", "host_device", "sriov_legacy"):
        errors.append(
            "method must be shared_device, host_device or sriov_legacy (from configuration.method), got %r" % (method,))
    if fabric not in LINK_LAYERS:
        errors.append("fabric must be roce or infiniband (from configuration.fabric), got %r" % (fabric,))
    given_network, given_resources = network, resources
    if network and not is_network_selection(network):
        # The value becomes the pods' Multus annotation verbatim: JSON or a list there would attach other networks.
        errors.append("network %r is not a network name: give [namespace/]name[@interface] (DNS-1123 names, "
                      "one network)" % (network,))
    networks = configuration.get("networks") or []
    # Multus finds a network's NetworkAttachmentDefinition in the pod's namespace or in one of its global namespaces
    # (names.attachable_networks): without a namespace the pods run where the configuration's first network lives; the
    # verify role gives its own namespace (gpudirect-verify) and the pods name a network of "default" as default/<name>.
    namespace = namespace or (networks[0].get("namespace") if networks and not network else None) or "default"
    if not network:
        attachable = names.attachable_networks(networks, namespace)
        if attachable:
            network = attachable[0]["annotation"]
        elif networks:
            errors.append("no network of the configuration is in namespace %s or in a namespace whose networks Multus "
                          "lets every namespace use (%s); they are in %s: run the pods in one of those namespaces "
                          "(verify_namespace), or give network"
                          % (namespace, ", ".join(names.MULTUS_GLOBAL_NAMESPACES),
                             ", ".join(sorted({str(n.get("namespace")) for n in networks}))))
    if not network and not networks:
        errors.append("no secondary network: give network, or a configuration (plan summary) with networks")
    resources = dict(resources or configuration.get("pod_resources") or {})
    if not resources:
        errors.append("no RDMA resource: give resources, or a configuration (plan summary) with pod_resources")
    gpu_mode = gpu_rdma_mode or configuration.get("gpu_rdma_mode") or "dmabuf"
    if gpu_mode not in GPU_MODES:
        errors.append("gpu_rdma_mode must be one of %s, got %r" % (", ".join(GPU_MODES), gpu_mode))
    # None: the calibrated lower bound of the tested hardware (bandwidth_calibration.expected), per pair.
    if threshold is not None and not 0 < float(threshold) <= 1:
        errors.append("threshold must be in (0, 1], got %r" % (threshold,))
    if link_rate_gbps is not None and float(link_rate_gbps) <= 0:
        errors.append("link_rate_gbps must be positive, got %r" % (link_rate_gbps,))
    for name, value in (("qps", qps), ("duration", duration), ("iterations", iterations),
                        ("message_size", message_size), ("parallel_pairs", parallel_pairs)):
        if value is not None and int(value) < 1:
            errors.append("%s must be at least 1, got %r" % (name, value))
    if gpu_mode != "none" and not gpu_resource:
        errors.append(
            "gpu_rdma_mode %s puts the buffers in GPU memory: gpu_resource must name the GPU resource" % gpu_mode)
    rail_mode = rails or "all"
    if rail_mode not in RAIL_MODES:
        errors.append("rails must be all or first, got %r" % (rail_mode,))
    if errors:
        raise SettingsError("; ".join(errors))
    groups = (configuration.get("nic_selection") or {}).get("groups") or []
    rails = []
    # A network or resources given by the user pin the test to that one network, as before rails existed.
    if rail_mode == "all" and len(groups) > 1 and not given_network and not given_resources:
        for index, group in enumerate(groups):
            rail, problem = _plan_rail(index, group, networks, namespace, resources)
            if problem:
                errors.append(problem)
            rails.append(rail)
        if len(rails) > 1 and rdma_device:
            errors.append("rdma_device names one device for all %d rails: leave it empty (each rail's device comes "
                          "from nic_ports) or set rails to first" % len(rails))
        if errors:
            raise SettingsError("; ".join(errors))
    if not rails:
        rails = [_rail(0, groups[0] if groups else {}, network, resources)]
    for rail in rails:
        rail["count"] = len(rails)
    selection = _selection(rails[0])
    sweep = bool(sweep)
    duration = int(duration or 10)
    iterations = int(iterations or 5000)
    if not run_timeout:
        # A sweep is 23 sizes of `iterations` messages; a single size runs `duration` seconds plus set-up.
        run_timeout = 120 + (23 * max(1, iterations // 1000) if sweep else duration)
    return {
        "method": method,
        "fabric": fabric,
        "link_layer": LINK_LAYERS[fabric],
        "namespace": namespace,
        "network": rails[0]["network"],
        "resources": dict(rails[0]["resources"]),
        "gpu_resource": gpu_resource or "",
        "gpu_rdma_mode": gpu_mode,
        "gpu_index": int(gpu_index or 0),
        "image": image,
        "image_pull_policy": image_pull_policy or "IfNotPresent",
        "binary": binary or "ib_write_bw",
        "rdma_device": rdma_device or "",
        "nic_ports": list(nic_ports or []),
        "link_rate_gbps": float(link_rate_gbps) if link_rate_gbps is not None else None,
        "threshold": float(threshold) if threshold is not None else None,
        "rdma_cm": rdma_cm is not False,
        "gid_index": gid_index,
        "qps": int(qps or 16),
        "message_size": int(message_size or 65536),
        "sweep": sweep,
        "iterations": iterations,
        "duration": duration,
        "port": int(port or 18515),
        "extra_args": [str(a) for a in extra_args or []],
        "secondary_interface": secondary_interface or "net1",
        "nodes": list(nodes or []),
        "node_selector": dict(node_selector or {}),
        "start_timeout": int(start_timeout or 600),
        "run_timeout": int(run_timeout),
        "pending_grace_period": int(pending_grace_period if pending_grace_period is not None else 60),
        "cleanup_timeout": int(cleanup_timeout or 120),
        "parallel_pairs": int(parallel_pairs or DEFAULT_PARALLEL_PAIRS),
        "parallel_rails": rails_in_parallel(parallel_rails, gpu_mode),
        "service_account": service_account or "",
        "selection": selection,
        "rails": rails,
        "configuration_label": configuration.get("configuration") or "%s/%s" % (method, fabric),
    }


def _selection(rail):
    return {key: list(rail[key]) for key in ("interfaces", "pci_addresses", "device_ids")}


def _rail(index, group, network, resources):
    """What one rail is tested with, and how reports and messages name it."""
    selection = {key: [str(item) for item in group.get(key) or []]
                 for key in ("interfaces", "pci_addresses", "device_ids")}
    return {
        "index": index,
        "network": network,
        "resources": dict(resources),
        "resource": ", ".join(sorted(resources)),
        "interfaces": selection["interfaces"],
        "pci_addresses": selection["pci_addresses"],
        "device_ids": selection["device_ids"],
        "nic": ", ".join(selection["interfaces"] or selection["pci_addresses"] or selection["device_ids"]),
        "ipam_range": group.get("ipam_range"),
        # gpudirect_rdma_second_fabric's group has the other fabric: its device and link rate are of that link layer.
        "fabric": group.get("fabric"),
    }


def _plan_rail(index, group, networks, namespace, pod_resources):
    """(rail, problem or None) of NIC group `index`: its network in `namespace` and its own resource only."""
    name = group.get("network_name")
    # With several network namespaces a rail's network is named <network_name>-<namespace> (render/rdma.py).
    found = [n for n in names.attachable_networks(networks, namespace)
             if n.get("name") in (name, "%s-%s" % (name, n.get("namespace")))]
    wanted = str(group.get("resource_name") or "").rsplit("/", maxsplit=1)[-1]
    resources = {key: count for key, count in pod_resources.items() if wanted and key.split("/")[-1] == wanted}
    rail = _rail(index, group, found[0]["annotation"] if found else None, resources)
    problems = []
    if not found:
        problems.append("no network %s in namespace %s" % (name, namespace))
    if not resources:
        problems.append("no pod resource named %s in the configuration's pod_resources (%s)"
                        % (wanted or "-", ", ".join(sorted(pod_resources))))
    if problems:
        return rail, "rail %d (%s): %s" % (index, rail["nic"] or "NIC group %d" % index, "; ".join(problems))
    return rail, None


def rail_settings(settings, rail):
    """The settings one rail's pods use: its network, its resource and its NIC selection."""
    fabric = rail.get("fabric") if rail.get("fabric") in LINK_LAYERS else settings["fabric"]
    return dict(settings, network=rail["network"], resources=dict(rail["resources"]), selection=_selection(rail),
                rail=rail, fabric=fabric, link_layer=LINK_LAYERS[fabric])


def rail_text(rail):
    """How messages name a rail: rail 1 (network rdmashared-net-2, resource rdma/rail_b, NIC ens2f0np0)."""
    parts = ["network %s" % rail.get("network"), "resource %s" % (rail.get("resource") or "-")]
    if rail.get("nic"):
        parts.append("NIC %s" % rail["nic"])
    return "rail %s (%s)" % (rail.get("index"), ", ".join(parts))


def public_rail(rail):
    return {key: value for key, value in rail.items() if key != "resources"}


def perftest_args(settings):
    """Arguments both sides pass to ib_write_bw (the client adds the server address)."""
    args = ["-F", "--report_gbits", "-q", str(settings["qps"])]
    if settings["sweep"]:
        args += ["-a", "-n", str(settings["iterations"])]
    else:
        args += ["-s", str(settings["message_size"]), "-D", str(settings["duration"])]
    if settings["rdma_cm"]:
        args.append("-R")
    if settings["gid_index"] is not None:
        args += ["-x", str(settings["gid_index"])]
    if settings["gpu_rdma_mode"] != "none":
        args.append("--use_cuda=%d" % settings["gpu_index"])
        if settings["gpu_rdma_mode"] == "dmabuf":
            args.append("--use_cuda_dmabuf")
    return args + settings["extra_args"]


def ring_pairs(nodes):
    """(server, client) pairs: one for two nodes, else around the ring n0->n1, ..., n(k-1)->n0."""
    nodes = list(nodes)
    if len(nodes) < 2:
        return []
    if len(nodes) == 2:
        return [(nodes[0], nodes[1])]
    return [(nodes[i], nodes[(i + 1) % len(nodes)]) for i in range(len(nodes))]


def pair_rounds(pairs):
    """[[pair index, ...], ...]: the pairs in rounds whose pairs share no node, so a round's pairs can run at once.

    pairs: [(server node, client node)]. First fit in the given order; around a ring that is two rounds for an even
    number of nodes and three for an odd one (every node is in two pairs; an odd cycle needs a third)."""
    rounds = []
    busy = []
    for index, (server, client) in enumerate(pairs):
        for number, nodes in enumerate(busy):
            if server not in nodes and client not in nodes:
                rounds[number].append(index)
                nodes.update((server, client))
                break
        else:
            rounds.append([index])
            busy.append({server, client})
    return rounds


def nodes_to_test(items, settings):
    """[(name, hostname label)] of the nodes to test, in name order; raises SettingsError naming what is missing.

    items: the cluster's Node objects. Without settings' nodes: schedulable nodes matching node_selector that have
    the GPU resource allocatable (or GPU feature discovery's gpu.present label)."""
    by_name = {n["metadata"]["name"]: n for n in items}
    wanted = settings["nodes"]
    if wanted:
        missing = [n for n in wanted if n not in by_name]
        if missing:
            raise SettingsError("verify nodes not in the cluster: %s" % ", ".join(missing))
        chosen = [by_name[n] for n in wanted]
    else:
        chosen = []
        for name in sorted(by_name):
            node = by_name[name]
            labels = node["metadata"].get("labels") or {}
            if any(labels.get(k) != str(v) for k, v in settings["node_selector"].items()):
                continue
            if (node.get("spec") or {}).get("unschedulable"):
                continue
            gpu = settings["gpu_resource"]
            if gpu:
                allocatable = (node.get("status") or {}).get("allocatable") or {}
                if resource_count(allocatable.get(gpu)) < 1 and labels.get(GPU_PRESENT_LABEL) != "true":
                    continue
            elif labels.get("feature.node.kubernetes.io/pci-15b3.present") != "true" and not settings["node_selector"]:
                continue
            chosen.append(node)
    if len(chosen) < 2:
        raise SettingsError("The bandwidth test needs two nodes with a GPU (%s allocatable or label %s=true)%s; found "
                            "%d: %s" % (settings["gpu_resource"] or "no GPU", GPU_PRESENT_LABEL,
                                        " matching %s" % settings["node_selector"] if settings["node_selector"] else "",
                                        len(chosen), ", ".join(n["metadata"]["name"] for n in chosen) or "none"))
    return [(n["metadata"]["name"], (n["metadata"].get("labels") or {}).get("kubernetes.io/hostname")
             or n["metadata"]["name"])
            for n in chosen]


def nodes_for_rail(items, nodes, resources):
    """The ``nodes`` ([(name, hostname)]) whose Node in ``items`` has every one of ``resources`` allocatable. With node
    groups each group's nodes carry their own resources, so a rail pairs only nodes that can run its pods. When fewer
    than two do, ``nodes`` unchanged: the pairs then fail naming the missing resource instead of being left out."""
    allocatable = {n["metadata"]["name"]: (n.get("status") or {}).get("allocatable") or {} for n in items}
    carrying = [node for node in nodes if all(resource_count(allocatable.get(node[0], {}).get(r)) >= 1
                                              for r in resources)]
    return carrying if len(carrying) >= 2 else list(nodes)


def pod_name(run_id, pair_index, role):
    return "gpudirect-verify-%s-%d-%s" % (run_id, pair_index, role)


def pod_manifest(settings, run_id, pair_index, role, node, node_hostname=None, rdma_device=None, server_ip=None,
                 round_index=None):
    """The server or client pod of one pair, pinned to its node through the hostname label (as the chapter does)."""
    resources = {name: str(count) for name, count in settings["resources"].items()}
    if settings["gpu_resource"]:
        resources[settings["gpu_resource"]] = "1"
    env = [
        {"name": "PERFTEST_BINARY", "value": settings["binary"]},
        {"name": "PERFTEST_PORT", "value": str(settings["port"])},
        {"name": "PERFTEST_ROLE", "value": role},
        {"name": "RDMA_DEVICE", "value": rdma_device or ""},
        {"name": "RDMA_LINK_LAYER", "value": settings["link_layer"]},
        {"name": "SECONDARY_INTERFACE", "value": settings["secondary_interface"]},
    ]
    if server_ip:
        env.append({"name": "PERFTEST_SERVER_IP", "value": server_ip})
    deadline = settings["start_timeout"] + settings["run_timeout"] + 60
    spec = {
        "restartPolicy": "Never",
        # Backstop: the kubelet stops the pod even if the controller that started it died.
        "activeDeadlineSeconds": deadline,
        "terminationGracePeriodSeconds": 5,
        # The test talks to no API: no service account token in the pod.
        "automountServiceAccountToken": False,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "nodeSelector": {"kubernetes.io/hostname": node_hostname or node},
        "containers": [{
            "name": CONTAINER,
            "image": settings["image"],
            "imagePullPolicy": settings["image_pull_policy"],
            "command": ["/bin/bash", "-c", POD_SCRIPT, SCRIPT_NAME] + perftest_args(settings),
            "env": env,
            # IPC_LOCK (pinned memory for RDMA) is the only capability perftest needs.
            "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["IPC_LOCK"]},
                                "allowPrivilegeEscalation": False},
            "resources": {"requests": dict(resources), "limits": dict(resources)},
        }],
    }
    if settings["service_account"]:
        spec["serviceAccountName"] = settings["service_account"]
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(run_id, pair_index, role),
            "namespace": settings["namespace"],
            "labels": {
                COMPONENT_LABEL: COMPONENT,
                MANAGED_BY_LABEL: MANAGED_BY_VALUE,
                RUN_LABEL: run_id,
                PAIR_LABEL: str(pair_index),
                ROLE_LABEL: role,
            },
            "annotations": {NETWORKS_ANNOTATION: settings["network"]},
        },
        "spec": spec,
    }
    if round_index is not None:
        manifest["metadata"]["labels"][ROUND_LABEL] = str(round_index)
    return manifest


def secondary_ips(pod, network, namespace):
    """Addresses of the pod on `network`, from Multus' network-status annotation ([] until Multus wrote it)."""
    annotations = (pod or {}).get("metadata", {}).get("annotations") or {}
    raw = annotations.get(NETWORK_STATUS_ANNOTATION)
    if not raw:
        return []
    try:
        entries = json.loads(raw)
    except ValueError:
        return []
    short = network.split("/")[-1]
    wanted = (network, short, "%s/%s" % (namespace, short))
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and not entry.get("default") and entry.get("name") in wanted:
            return [ip.split("/")[0] for ip in entry.get("ips") or []]
    return []
