# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Runs the cross-node GPUDirect RDMA bandwidth test (module_utils/verify/bandwidth_plan.py) as Kubernetes pods.

The pairs of GPU nodes (a ring when there are more than two) run in rounds in which no node is in two pairs of one
rail (module_utils/verify/bandwidth_plan.py pair_rounds: at most three rounds around a ring). The rails of a pair share
the round when the buffers are in GPU memory (bandwidth_plan.rails_in_parallel says why that does not change the
result), else they run rail after rail. At most ``parallel_pairs`` pairs run at
once. For each pair a server pod starts on the first node; once it runs and has an address on the secondary network
the client pod starts on the second node pointed at that address; when the client is done both logs are read and
judged. One watch follows all pods of a round (cluster/pods.py); the round's pods are deleted by label in one
request and the next round starts when they are gone, so RDMA resources are free again. Every pod is gone when
run() returns, also when something fails.
"""


import math
import re
import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import bandwidth_calibration, perftest_output
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.bandwidth_plan import (
    COMPONENT,
    COMPONENT_LABEL,
    PAIR_LABEL,
    ROUND_LABEL,
    RUN_LABEL,
    SRIOV_NODE_STATE,
    SettingsError,
    nodes_for_rail,
    nodes_to_test,
    pair_rounds,
    pod_manifest,
    pod_name,
    public_rail,
    rail_settings,
    rail_text,
    ring_pairs,
    secondary_ips,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.bandwidth_verdicts import (
    calibrated_expectation,
    device_for,
    device_mismatch,
    expectation_text,
    facts_ports,
    judge,
    link_rate_for,
    pair_side_hardware,
    port_not_active,
    rail_device_problems,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import ClusterError, api_message
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.pods import PodRun
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.pod_states import (
    is_done,
    new_run_id,
    pending_problem,
    pod_phase,
    pod_state_text,
)


class _Pair:
    """One pair on one rail, and where it is: server starting -> client running -> server finishing -> done."""

    def __init__(self, index, settings, server, client, round_index, run_id):
        self.index = index
        self.settings = settings
        self.server_node, self.server_host = server
        self.client_node, self.client_host = client
        self.round_index = round_index
        self.server_pod = pod_name(run_id, index, "server")
        self.client_pod = pod_name(run_id, index, "client")
        self.server_device = device_for(settings, self.server_node)
        self.client_device = device_for(settings, self.client_node)
        self.pods = {}
        self.state = "queued"
        self.started = None
        self.deadline = None
        self.running_since = None
        self.server_ip = None
        self.timed_out = False
        self.problem_side = None

    def wake(self):
        """When the pair must be looked at again without an event (its next deadline), or None."""
        times = [t for t in (self.deadline, self.running_since + self.settings["run_timeout"] if self.running_since
                             else None) if t]
        return min(times) if times else None


class BandwidthTest:
    """Runs the pairs against a cluster (a ClusterClient); every pod it creates is gone when run() returns."""

    def __init__(self, cluster, settings, run_id=None, clock=time.monotonic, log=None):
        self.cluster = cluster
        self.settings = settings
        self.run_id = run_id or new_run_id()
        self.node_items = []  # the Node objects nodes() listed: which resources each node has allocatable
        self.clock = clock
        self.pods = PodRun(cluster, settings["namespace"], RUN_LABEL, self.run_id,
                           grace=settings["pending_grace_period"], clock=clock)
        self.log = log or (lambda message: None)

    # -- discovery -------------------------------------------------------------------------------

    def nodes(self):
        """[(name, hostname label)] of the nodes to test, in name order."""
        items, _rv = self.cluster.list(self.cluster.require("v1", "Node"))
        self.node_items = items
        try:
            return nodes_to_test(items, self.settings)
        except SettingsError as exc:
            raise ClusterError(str(exc))

    def node_state(self, node):
        resource = self.cluster.resource(*SRIOV_NODE_STATE)
        if resource is None:
            return None
        items, _rv = self.cluster.list(resource, field_selector="metadata.name=%s" % node)
        return items[0] if items else None

    def plan(self, nodes):
        """[(pair index, rail settings, server, client, round index)]: each rail's ring in rounds; the rails share
        their rounds when they run in parallel (bandwidth_plan.rails_in_parallel), else rail after rail."""
        planned = []
        for rail in self.settings["rails"]:
            settings = rail_settings(self.settings, rail)
            ring = ring_pairs(nodes_for_rail(self.node_items, nodes, settings["resources"]))
            first = len(planned)
            rounds = pair_rounds([(s[0], c[0]) for s, c in ring])
            numbering = 0 if self.settings.get("parallel_rails") else len({p[4] for p in planned})
            by_pair = {pair: numbering + number for number, members in enumerate(rounds) for pair in members}
            for position, (server, client) in enumerate(ring):
                planned.append((first + position, settings, server, client, by_pair[position]))
        return planned

    # -- pods ------------------------------------------------------------------------------------

    def read_log(self, name):
        return self.pods.log(name)

    def delete_pods(self, selector):
        """Delete the pods matching `selector` in one request and wait until they are gone; returns the names
        deleted."""
        return self.pods.delete_all(selector, wait_timeout=self.settings["cleanup_timeout"])

    # -- one pair, step by step ------------------------------------------------------------------

    def _start(self, pair, now):
        pair.state = "server"
        pair.started = now
        pair.deadline = now + pair.settings["start_timeout"]
        self.pods.create_or_fail(pod_manifest(pair.settings, self.run_id, pair.index, "server", pair.server_node,
                                              pair.server_host, pair.server_device, round_index=pair.round_index))

    def _grace_over(self, pair, now):
        since = [self.pods.problem_since.get(name) for name in (pair.server_pod, pair.client_pod)]
        return any(t is not None and now - t >= self.pods.grace for t in since)

    def _stuck(self, pod, now):
        return bool(pod and pending_problem(pod) and self.pods.failure(pod, now))

    def _advance(self, pair, now):
        """Move the pair on from what its pods show now; True when it has ended."""
        settings = pair.settings
        server, client = pair.pods.get("server"), pair.pods.get("client")
        if pair.state == "server":
            if is_done(server):
                pair.problem_side = "server"
            elif self._stuck(server, now):
                pair.problem_side = "server"
            elif pod_phase(server) == "Running" and secondary_ips(server, settings["network"], settings["namespace"]):
                pair.server_ip = secondary_ips(server, settings["network"], settings["namespace"])[0]
                self.log("pair %d (%s): server on %s at %s" % (pair.index, rail_text(settings["rail"]),
                                                               pair.server_node, pair.server_ip))
                pair.state = "client"
                # start_timeout to get the client running, then run_timeout for the test itself.
                pair.deadline = now + settings["start_timeout"] + settings["run_timeout"]
                self.pods.create_or_fail(pod_manifest(settings, self.run_id, pair.index, "client", pair.client_node,
                                                      pair.client_host, pair.client_device, pair.server_ip,
                                                      round_index=pair.round_index))
                return False
            elif now >= pair.deadline:
                pair.timed_out = True
                pair.problem_side = "server"
            else:
                return False
            return True
        if pair.state == "client":
            client_phase = pod_phase(client)
            if client_phase == "Running" and pair.running_since is None:
                pair.running_since = now
            if client_phase == "Succeeded":
                # The server prints its table once the client is done; give it a moment to exit.
                pair.state = "server_finishing"
                pair.running_since = None
                pair.deadline = now + min(30, settings["run_timeout"])
                return self._advance(pair, now)
            if client_phase == "Failed" or self._stuck(client, now):
                return True
            if pod_phase(server) == "Failed":
                pair.problem_side = "server"
                return True
            if now >= pair.deadline or (pair.running_since is not None
                                        and now - pair.running_since >= settings["run_timeout"]):
                pair.timed_out = True
                return True
            return False
        if pair.state == "server_finishing":
            return is_done(server) or now >= pair.deadline
        return True

    def _run_round(self, pairs):
        """All pairs of one round (no node in two of them), at most parallel_pairs at once, under one watch."""
        queue = list(pairs)
        active = {}
        by_pod = {}
        touched = set()
        results = []
        cap = max(1, self.settings["parallel_pairs"])

        def finish(pair):
            active.pop(pair.index, None)
            pair.state = "done"
            results.append(self._result(pair))

        def fill(now):
            while queue and len(active) < cap:
                pair = queue.pop(0)
                active[pair.index] = pair
                by_pod[pair.server_pod] = (pair, "server")
                by_pod[pair.client_pod] = (pair, "client")
                self._start(pair, now)

        def on_change(pod, now):
            found = by_pod.get(pod["metadata"]["name"])
            if found and found[0].state != "done":
                found[0].pods[found[1]] = pod
                touched.add(found[0].index)

        def done(now):
            # Only the pairs an event touched or whose deadline came: not every pair on every event.
            due = [pair for pair in active.values() if pair.index in touched
                   or (pair.wake() is not None and pair.wake() <= now)
                   or self._grace_over(pair, now)]
            touched.clear()
            for pair in due:
                if self._advance(pair, now):
                    finish(pair)
            fill(now)
            return not queue and not active

        def wake_at():
            times = [t for t in (pair.wake() for pair in active.values()) if t is not None]
            return min(times) if times else None

        fill(self.clock())
        waves = math.ceil(len(pairs) / float(cap))
        backstop = waves * (self.settings["start_timeout"] + self.settings["run_timeout"] + 60) + 60
        _seen, finished = self.pods.follow(on_change, done, backstop,
                                           selector=self.pods.selector(**{ROUND_LABEL: pairs[0].round_index}),
                                           wake_at=wake_at)
        if not finished:
            for pair in list(active.values()) + queue:
                pair.timed_out = True
                finish(pair)
        return results

    def _result(self, pair):
        settings = pair.settings
        server_pod, client_pod = pair.pods.get("server"), pair.pods.get("client")
        server_log = self.read_log(pair.server_pod) if server_pod else ""
        client_log = self.read_log(pair.client_pod) if client_pod else ""
        # The client's header and CUDA lines, read before the verdict: its device, GPU and MTU.
        early = {}
        if client_log:
            try:
                early = perftest_output.parse_bw_output(client_log, require_results=False) or {}
            except perftest_output.PerftestParseError:
                early = {}
        parsed_device = early.get("device")
        # a client that failed before its header still printed its CUDA set-up
        client_cuda = early.get("cuda") or perftest_output.parse_cuda_setup(client_log) or {}
        rates = []
        for node, device in ((pair.server_node, pair.server_device),
                             (pair.client_node, pair.client_device or parsed_device)):
            state = (self.node_state(node) if settings["link_rate_gbps"] is None and not facts_ports(settings, node)
                     else None)
            rates.append(link_rate_for(settings, node, device, state))
        known = [rate for rate, _source in rates if rate]
        link_rate = min(known) if len(known) == len(rates) else None
        # What the pair can reach on its hardware (PCIe links and path of each side's GPU and NIC, MTU): the run is
        # judged against that bound, by default at the calibrated low end of healthy published runs
        # (bandwidth_calibration.py).
        server_cuda = perftest_output.parse_cuda_setup(server_log) or {}
        sides = [pair_side_hardware(settings, pair.server_node, pair.server_device or _server_device(server_log),
                                    server_cuda.get("pci_address")),
                 pair_side_hardware(settings, pair.client_node, pair.client_device or parsed_device,
                                    client_cuda.get("pci_address"))]
        gpu_memory = settings["gpu_rdma_mode"] != "none"
        expectation = calibrated_expectation(link_rate, settings["link_layer"], early.get("mtu"), sides,
                                             client_cuda.get("device_name"), gpu_memory)
        bound = expectation["bound_gbps"] if expectation else link_rate
        threshold = (settings["threshold"] if settings["threshold"] is not None
                     else (expectation or {}).get("low_fraction"))
        parsed, evaluation, diagnosis = judge(settings, client_log, server_log, client_pod, server_pod, bound,
                                              timed_out=pair.timed_out, problem=pair.problem_side, threshold=threshold)
        if evaluation and expectation and evaluation.get("code") in ("passed", "bandwidth_below_threshold"):
            words = expectation_text(evaluation["measured_gbps"], expectation)
            if settings["threshold"] is not None:
                words += "; threshold %.0f%% of the bound (%.2f Gb/s)" % (
                    settings["threshold"] * 100, evaluation["expected_gbps"])
            evaluation = dict(evaluation, reason=words)
            if diagnosis.get("code") == "bandwidth_below_threshold":
                diagnosis = dict(diagnosis,
                                 message="the test ran but the bandwidth is below the expected range: %s" % words)
        if not link_rate and parsed and parsed.get("rows"):
            diagnosis = dict(diagnosis, code="link_rate_unknown", ok=False,
                             message="; ".join(source for rate, source in rates if not rate))
        # A rail is reported only from its own NIC: the device each side's header names must be the rail's.
        mismatch = device_mismatch({"server": pair.server_device, "client": pair.client_device},
                                   {"server": _server_device(server_log), "client": (parsed or {}).get("device")})
        if mismatch:
            diagnosis = mismatch
            evaluation = dict(evaluation or {}, passed=False, reason=mismatch["message"])
        if diagnosis["code"] == "link_down":
            down = [text for text in (port_not_active(settings, pair.server_node, pair.server_device),
                                      port_not_active(settings, pair.client_node, pair.client_device)) if text]
            if down:
                diagnosis = dict(diagnosis, message="%s: %s" % ("; ".join(down), diagnosis["message"]))
        if pair.timed_out and diagnosis["code"] == "timeout":
            diagnosis = dict(diagnosis, message="%s (server %s, client %s)" % (
                diagnosis["message"], pod_state_text(server_pod), pod_state_text(client_pod)))
        row = (parsed or {}).get("largest_message_row") or {}
        return {
            "index": pair.index,
            "rail": public_rail(settings["rail"]),
            "round": pair.round_index,
            "server_node": pair.server_node,
            "client_node": pair.client_node,
            "server_pod": pair.server_pod,
            "client_pod": pair.client_pod,
            "server_device": _server_device(server_log) or pair.server_device,
            "client_device": (parsed or {}).get("device") or pair.client_device,
            "server_ip": pair.server_ip,
            "link_rate_gbps": link_rate,
            "link_rate_source": [source for _rate, source in rates],
            "threshold": threshold,
            "threshold_source": "verify_threshold" if settings["threshold"] is not None else "calibrated",
            "threshold_gbps": round(bound * threshold, 3) if bound and threshold else None,
            "bound_gbps": bound,
            "expected": dict(expectation, sources=[{"key": key, "title": bandwidth_calibration.SOURCES[key]["title"],
                                                    "url": bandwidth_calibration.SOURCES[key]["url"]}
                                                   for key in expectation["sources"]])
            if expectation else None,
            "path": dict(server=sides[0]["path"], client=sides[1]["path"]),
            "pcie": {side_name: {"gpu": bandwidth_calibration.pcie_text(*side["gpu_pcie"]),
                                 "nic": bandwidth_calibration.pcie_text(*side["nic_pcie"])}
                     for side_name, side in (("server", sides[0]), ("client", sides[1]))},
            "bandwidth_gbps": row.get("bw_avg_gbps"),
            "bw_peak_gbps": row.get("bw_peak_gbps"),
            "msg_rate_mpps": row.get("msg_rate_mpps"),
            "message_size": row.get("bytes"),
            "fraction": evaluation.get("fraction") if evaluation else None,
            "use_cuda": (parsed or {}).get("use_cuda"),
            "use_dmabuf": (parsed or {}).get("use_dmabuf"),
            "gpu": ((parsed or {}).get("cuda") or {}).get("device_name"),
            "sweep": [{"bytes": r["bytes"], "bw_avg_gbps": r["bw_avg_gbps"]} for r in (parsed or {}).get("rows") or []]
            if settings["sweep"] else [],
            "verdict": "passed" if diagnosis["ok"] and evaluation and evaluation["passed"] else "failed",
            "reason": evaluation["reason"] if evaluation else diagnosis["message"],
            "diagnosis": diagnosis,
            "server_state": pod_state_text(server_pod),
            "client_state": pod_state_text(client_pod),
            "server_log": server_log,
            "client_log": client_log,
            "elapsed": round(self.clock() - pair.started, 3) if pair.started is not None else 0.0,
        }

    def run_pair(self, pair_index, server, client, settings=None):
        """One pair on its own (a round of one): `settings` are its rail's (rail_settings), default the first rail's."""
        settings = settings or rail_settings(self.settings, self.settings["rails"][0])
        try:
            return self._run_round([_Pair(pair_index, settings, server, client, pair_index, self.run_id)])[0]
        finally:
            self.delete_pods(self.pods.selector(**{PAIR_LABEL: pair_index}))

    def run(self, check_mode=False):
        nodes = self.nodes()
        planned = self.plan(nodes)
        problems = rail_device_problems([(r, node[0]) for _i, r, s, c, _n in planned for node in (s, c)])
        if problems:  # before any pod: nothing to clean up
            raise ClusterError("; ".join(problems))
        plan = [{"index": i, "rail": public_rail(r["rail"]), "server_node": s[0], "client_node": c[0], "round": n}
                for i, r, s, c, n in planned]
        members = {}
        for i, _r, _s, _c, number in planned:
            members.setdefault(number, []).append(i)
        rounds = [{"index": number, "pairs": members[number]} for number in sorted(members)]
        if check_mode:
            return {"run_id": self.run_id, "pairs": plan, "rounds": rounds, "pods": [
                pod_manifest(r, self.run_id, i, role, node[0], node[1], device_for(r, node[0]), round_index=n)
                for i, r, s, c, n in planned for role, node in (("server", s), ("client", c))]}
        results = []
        cleanup_error = None
        # Pods of an earlier run that was killed before it could clean up would hold the RDMA resources.
        stale = self.delete_pods("%s=%s" % (COMPONENT_LABEL, COMPONENT))
        try:
            for entry in rounds:
                pairs = [_Pair(i, r, s, c, n, self.run_id) for i, r, s, c, n in planned if n == entry["index"]]
                try:
                    results.extend(self._run_round(pairs))
                finally:
                    self.delete_pods(self.pods.selector(**{ROUND_LABEL: entry["index"]}))
        finally:
            try:
                self.delete_pods(self.pods.selector())
            except (ClusterError, Exception) as exc:  # pylint: disable=broad-except
                cleanup_error = api_message(exc)
        leftover, _rv = self.cluster.list(self.pods.resource, namespace=self.settings["namespace"],
                                          label_selector=self.pods.selector())
        results.sort(key=lambda pair: pair["index"])
        return {"run_id": self.run_id, "pairs": results, "rounds": rounds, "stale_pods_deleted": stale,
                "pods_left": [p["metadata"]["name"] for p in leftover], "cleanup_error": cleanup_error}


def _server_device(log):
    if not log:
        return None
    match = re.search(r"Device\s*:\s*(\S+)", log)
    return match.group(1) if match else None
