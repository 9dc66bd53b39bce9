# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What an all_reduce_perf bus bandwidth should be across nodes: the rails' bound and published real runs (issue 36).

Pure functions and data, no cluster client. The verdict (nccl_tests_output.evaluate_allreduce) and the simulator's NCCL
launcher (simulator/controllers/nccl_pods.py) read this one table, so the simulated numbers are the calibrated ones.

Bounds, for nodes of n/N ranks each (n ranks over N nodes), every node's traffic leaving through its rails:

- Each rail carries at most its link's payload rate (bandwidth_calibration.py: link rate x MTU / (MTU + headers) when
the path
  MTU is known), so a node carries at most the sum of its rails, in GB/s = Gb/s / 8.
- Ring all-reduce: every rank sends 2(n-1)/n of the data, and each ring leaves a node once, so each node's rails move
  2(n-1)/n x S per operation. nccl-tests reports busbw = algbw x 2(n-1)/n (src/all_reduce.cu AllReduceGetBw), so a
  ring's busbw is bounded by the rails' sum itself: that is what "busbw" was made to compare with (nccl-tests
  doc/PERFORMANCE.md).
- Tree, NVLS tree or SHARP reduce inside a node over NVLink first; between nodes each node moves only 2(N-1)/N x S,
  so busbw <= rails x N(n-1)/(n(N-1)): 1.875 x the rails' sum for 2 nodes of 8 GPUs. NCCL picks tree on 2 nodes for
  large messages (NVIDIA/nccl-tests issue 196 and NVIDIA/nccl issue 812, maintainers' answers), so a 2-node busbw
  above the rails' sum is this, never "more than 100 %".

The expected range of a healthy run is [low, high] x the rails' sum, low and high the lowest and highest fraction of
the rails' sum in the healthy ring rows below (each names its source and what the source says of it). The degraded
rows give the reasons a result is low.
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import bandwidth_calibration

# Published runs and figures. busbw_gbs: the all-reduce bus bandwidth the source reports (GB/s) for `rails` NICs of
# link_gbps each per node; algorithm as the source names it; verdict: what the source says of the result.
SOURCES = {
    "nccl-tests-29": {
        "title": "NVIDIA/nccl-tests issue 29, maintainer's answer: 12.2 GB/s is as good as one 100 Gb/s adapter gets",
        "url": "https://github.com/NVIDIA/nccl-tests/issues/29",
        "hardware": "4 nodes of 8 GPUs (32 ranks) with 1 EDR InfiniBand adapter (100 Gb/s) each",
        "rails": 1, "link_gbps": 100.0, "busbw_gbs": 12.2, "algorithm": "ring", "verdict": "healthy",
    },
    "nccl-412": {
        "title": "NVIDIA/nccl issue 412, maintainer's answer: 24 GB/s inter-node for one 200 Gb/s HDR NIC behind a "
                 "PCIe switch",
        "url": "https://github.com/NVIDIA/nccl/issues/412",
        "hardware": "nodes of 8 A800 (NVLink) with 1 HDR InfiniBand NIC (200 Gb/s) on a PCIe switch with a GPU",
        "rails": 1, "link_gbps": 200.0, "busbw_gbs": 24.0, "algorithm": "ring", "verdict": "healthy",
    },
    "nccl-412-cpu-nic": {
        "title": "NVIDIA/nccl issue 412, the reporter's 15.3 GB/s on 12 nodes; maintainer: ~16 GB/s is what a NIC "
                 "attached to the CPU gets",
        "url": "https://github.com/NVIDIA/nccl/issues/412",
        "hardware": "nodes of 8 A800 with 1 HDR NIC (200 Gb/s) shared with storage traffic",
        "rails": 1, "link_gbps": 200.0, "busbw_gbs": 15.3, "algorithm": "ring",
        "verdict": "degraded: the NIC hangs off the CPU, not a PCIe switch beside a GPU (no GPUDirect path)",
    },
    "nccl-tests-160": {
        "title": "NVIDIA/nccl-tests issue 160, maintainer's answer: 80 GB/s on 4 NICs (20 per NIC) is not the 24 of a "
                 "perfect setup but not too bad",
        "url": "https://github.com/NVIDIA/nccl-tests/issues/160",
        "hardware": "4 nodes of 8 GPUs with 4 NICs of 200 Gb/s",
        "rails": 4, "link_gbps": 200.0, "busbw_gbs": 80.0, "algorithm": "ring", "verdict": "healthy",
    },
    "nccl-tests-119": {
        "title": "NVIDIA/nccl-tests issue 119, maintainer's answer: 24 GB/s per 200 Gb/s NIC is the peak, 96 GB/s the "
                 "target of 4 such NICs, which the run reaches: perfect",
        "url": "https://github.com/NVIDIA/nccl-tests/issues/119",
        "hardware": "nodes of 8 GPUs with 4 NICs of 200 Gb/s; the run's plateau ~96 GB/s (the post's last rows "
                    "95.5-96.7)",
        "rails": 4, "link_gbps": 200.0, "busbw_gbs": 96.0, "algorithm": "ring", "verdict": "healthy",
    },
    "nccl-tests-252": {
        "title": "NVIDIA/nccl-tests issue 252, NCCL_ALGO=RING on 2 nodes of 4 H100 (8 ranks): 95.10 GB/s at 8 GB; "
                 "maintainer: looks great with ~24 GB/s per NIC",
        "url": "https://github.com/NVIDIA/nccl-tests/issues/252",
        "hardware": "2 nodes of 4 H100; 4 NICs per node (95 GB/s read by the maintainer as ~24 GB/s per NIC), 200 Gb/s "
                    "each (24 GB/s per NIC is the 200 Gb/s figure of nccl-tests issue 160 and nccl issue 412)",
        "rails": 4, "link_gbps": 200.0, "busbw_gbs": 95.10, "algorithm": "ring", "nodes": 2, "ranks": 8,
        "verdict": "healthy", "fixture": "issue252_h100_2x4_ring_4rails_cut.txt",
    },
    "nccl-tests-29-dgx1": {
        "title": "NVIDIA/nccl-tests issue 29, maintainer's answer: a DGX-1 gets 48 GB/s with its 4 InfiniBand adapters",
        "url": "https://github.com/NVIDIA/nccl-tests/issues/29",
        "hardware": "DGX-1 (8 V100) with 4 EDR InfiniBand adapters (100 Gb/s)",
        "rails": 4, "link_gbps": 100.0, "busbw_gbs": 48.0, "algorithm": "ring", "verdict": "healthy",
    },
    "nccl-812-dgx-a100": {
        "title": "NVIDIA/nccl issue 812, maintainer's answer: a DGX-A100 with 8 x 200 Gb/s InfiniBand measures "
                 "192 GB/s",
        "url": "https://github.com/NVIDIA/nccl/issues/812",
        "hardware": "DGX-A100 (8 A100, NVSwitch) with 8 HDR InfiniBand NICs (200 Gb/s)",
        "rails": 8, "link_gbps": 200.0, "busbw_gbs": 192.0, "algorithm": "ring", "verdict": "healthy",
    },
    "nccl-tests-290-ndr": {
        "title": "NVIDIA/nccl-tests issue 290, maintainer's answer: 46-48 GB/s per 400 Gb/s NDR NIC with "
                 "NCCL_ALGO=RING",
        "url": "https://github.com/NVIDIA/nccl-tests/issues/290",
        "hardware": "2 nodes of 8 H100 (NVSwitch) with 8 NDR InfiniBand NICs (ConnectX-7, 400 Gb/s); low end of 46-48",
        "rails": 8, "link_gbps": 400.0, "busbw_gbs": 8 * 46.0, "algorithm": "ring", "verdict": "healthy",
    },
    "nccl-812-roce": {
        "title": "NVIDIA/nccl issue 812, the reporter's 60 GB/s ring on 2 DGX-A100 with 8 x 100 Gb/s; maintainer: a "
                 "little low",
        "url": "https://github.com/NVIDIA/nccl/issues/812",
        "hardware": "2 DGX-A100 with 8 NICs of 100 Gb/s",
        "rails": 8, "link_gbps": 100.0, "busbw_gbs": 60.0, "algorithm": "ring",
        "verdict": "degraded: the maintainer asks whether GPUDirect RDMA is enabled and whether the fabric is RoCE",
    },
    "nccl-495": {
        "title": "NVIDIA/nccl issue 495, 600 Gb/s (75 GB/s) on 2 A100 nodes with 8 x 100 Gb/s RoCE; maintainer: indeed "
                 "a bit low",
        "url": "https://github.com/NVIDIA/nccl/issues/495",
        "hardware": "2 nodes of 8 A100 with 8 RoCE NICs of 100 Gb/s, NCCL 2.7",
        "rails": 8, "link_gbps": 100.0, "busbw_gbs": 75.0, "algorithm": "ring",
        "verdict": "degraded: NIC and platform settings (the maintainer sends the reporter to NVIDIA networking "
                   "support)",
    },
    "a3mega-2x8": {
        "title": "lessizzmore/create-a3mega-ztan-fork ztan-NCCL-test-result: 338.82 GB/s on 2 A3 Mega nodes (8 x 200 "
                 "Gb/s)",
        "url": "https://github.com/lessizzmore/create-a3mega-ztan-fork/blob/02dd8f455c43ced1cf442ef29334bda97149264b/"
               "ztan-NCCL-test-result",
        "hardware": "2 nodes of 8 H100 (NVSwitch) with 8 GPUDirect-TCPXO NICs of 200 Gb/s; NCCL's default algorithm",
        "rails": 8, "link_gbps": 200.0, "busbw_gbs": 338.82, "algorithm": "tree", "nodes": 2, "ranks": 16,
        "verdict": "healthy", "fixture": "a3mega_2x8_h100_v2.1x.txt",
    },
}

RING_HEALTHY_ROWS = ("nccl-tests-29", "nccl-412", "nccl-tests-160", "nccl-tests-119", "nccl-tests-252",
                     "nccl-tests-29-dgx1", "nccl-812-dgx-a100", "nccl-tests-290-ndr")
DEGRADED_ROWS = ("nccl-412-cpu-nic", "nccl-812-roce", "nccl-495")
TREE_ROWS = ("a3mega-2x8",)
TREE_EXPLANATION = ("on 2 nodes NCCL runs all-reduce as a tree (or NVLS tree, SHARP): each node reduces over NVLink "
                    "first and its rails move 2(N-1)/N of the data instead of a ring's 2(n-1)/n, so busbw may exceed "
                    "the rails' sum (NVIDIA/nccl-tests issue 196, NVIDIA/nccl issue 812)")
# Why a run is low: the causes the degraded rows and NCCL's own code give (nccl_pods.py cites NCCL's files).
LOW_CAUSES = ("a rail down, slower than the others or not listed in NCCL_IB_HCA: NCCL uses only active listed ports "
              "and the slowest node sets every rank's pace",
              "a NIC that reaches its GPU only through the CPU (no PCIe switch in common): no GPUDirect RDMA path "
              "(NVIDIA/nccl issue 412)",
              "GPUDirect RDMA off (nvidia-peermem or DMA-BUF missing) or RoCE without lossless settings (NVIDIA/nccl "
              "issues 812, 495)")


def rails_fraction(key):
    """busbw / the rails' sum of a row (ring rows) or / the tree bound of its nodes and ranks (tree rows)."""
    row = SOURCES[key]
    rails_gbs = row["rails"] * row["link_gbps"] / 8.0
    if row["algorithm"] == "tree":
        rails_gbs = hierarchical_bound(rails_gbs, row["ranks"], row["nodes"])
    return row["busbw_gbs"] / rails_gbs


def hierarchical_bound(rails_gbs, ranks, nodes):
    """Highest busbw an all-reduce reducing inside each node first can reach: rails x N(n-1)/(n(N-1)), or None."""
    try:
        ranks, nodes = int(ranks), int(nodes)
    except (TypeError, ValueError):
        return None
    if nodes < 2 or ranks < nodes:
        return None
    return round(rails_gbs * nodes * (ranks - 1) / float(ranks * (nodes - 1)), 2)


def ring_range():
    """(low, high) fraction of the rails' sum over the healthy ring rows, and their keys."""
    fractions = [rails_fraction(key) for key in RING_HEALTHY_ROWS]
    return min(fractions), max(fractions), list(RING_HEALTHY_ROWS)


def rails_payload_gbs(rail_rates_gbps, link_layer=None, mtu=None):
    """GB/s one node's rails carry: the sum of the link rates x the payload share of one path MTU
    (bandwidth_calibration.py)."""
    return sum(float(rate) for rate in rail_rates_gbps) * bandwidth_calibration.wire_efficiency(link_layer, mtu) / 8.0


def expected(rail_rates_gbps, ranks=None, nodes=None, link_layer=None, mtu=None):
    """Expected busbw of a healthy all-reduce of large messages across nodes with these rails.

    Returns {rails_gbs, low_fraction, high_fraction, low_gbs, high_gbs, tree_bound_gbs, sources, tree_sources,
    tree_explanation, low_causes}: low/high bound a ring's busbw; tree_bound_gbs (None with one rank per node or
    unknown ranks) is the most a tree/NVLS run can show.
    """
    rails_gbs = rails_payload_gbs(rail_rates_gbps, link_layer, mtu)
    low, high, sources = ring_range()
    return {
        "rails_gbs": round(rails_gbs, 3),
        "rails": len(rail_rates_gbps),
        "low_fraction": round(low, 4),
        "high_fraction": round(high, 4),
        "low_gbs": round(rails_gbs * low, 2),
        "high_gbs": round(rails_gbs * high, 2),
        "tree_bound_gbs": hierarchical_bound(rails_gbs, ranks, nodes),
        "sources": sources,
        "tree_sources": list(TREE_ROWS),
        "tree_explanation": TREE_EXPLANATION,
        "low_causes": list(LOW_CAUSES),
    }


def source_list(keys):
    """[{key, title, url}] for a report."""
    return [{"key": key, "title": SOURCES[key]["title"], "url": SOURCES[key]["url"]} for key in keys]


def table_rows():
    """(key, rails, link Gb/s, busbw GB/s, fraction, algorithm, verdict) of every row, for docs and tests."""
    return [(key, row["rails"], row["link_gbps"], row["busbw_gbs"], round(rails_fraction(key), 3), row["algorithm"],
             row["verdict"]) for key, row in SOURCES.items()]
