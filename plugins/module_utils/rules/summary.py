# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The last lines of site.yml (and of an AWX job): which cluster, what the run did, which operators run, which RDMA
configuration on which NICs. Pure: the facts of the run in, sentences out."""


from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import unique as _unique


def outcome_line(check_mode, in_sync):
    """What the run did to the cluster."""
    if check_mode:
        return "Check mode: nothing was written."
    return "Nothing written: the cluster already matched the plan." if in_sync else "Installed and configured."


def operators_line(check_mode, operator_results):
    """The operators' CSVs. In check mode an operator that is not installed has a wanted CSV too, so it says which
    run (phase Succeeded) and which a run would install or change."""
    results = [r for r in operator_results or [] if isinstance(r, dict)]
    if check_mode and results:
        running = [r.get("csv", "") for r in results if r.get("phase") == "Succeeded"]
        changing = [r.get("csv", "?") for r in results if r.get("changed")]
        return "Operators running: %s; a run would install or change: %s" % (
            ", ".join(str(c) for c in running) or "none", ", ".join(str(c) for c in changing) or "none")
    return "Operators: %s" % (", ".join(str(r["csv"]) for r in results if "csv" in r)
                              or "as they were (already in place)")


def shown_nics(nic_interfaces=None, nic_pci_addresses=None, nic_facts=None, fabric="roce", plan_summary=None):
    """The NICs the configuration uses, as the user gave them: the interfaces, else the PCI addresses, else the ports
    of the fabric the facts found (NIC selection auto), else the plan's NIC selection. Lists may arrive as text (AWX
    survey answers): they are shown as given."""
    link_layer = "InfiniBand" if fabric == "infiniband" else "Ethernet"
    from_facts = [f.get("netdev", "?") for f in nic_facts or [] if isinstance(f, dict)
                  and f.get("link_layer") == link_layer]
    groups = ((plan_summary or {}).get("nic_selection") or {}).get("groups") or []
    return nic_interfaces or nic_pci_addresses or from_facts or [i for g in groups for i in g.get("interfaces") or []]


def rdma_line(plan_summary, method, fabric, nics):
    """The RDMA configuration and its NICs."""
    summary = plan_summary or {}
    what = ("node groups %s" % summary.get("configuration")) if "node_groups" in summary else "%s over %s" % (
        method, fabric)
    shown = nics if isinstance(nics, str) else ", ".join(str(n) for n in _unique(nics or []))
    return "RDMA: %s on %s" % (what, shown or "no NIC")


def run_summary(host, cluster_source, cluster, check_mode, in_sync, operator_results, plan_summary=None,
                method="shared_device", fabric="roce", nic_interfaces=None, nic_pci_addresses=None, nic_facts=None):
    """The four lines site.yml ends with."""
    version = ((cluster or {}).get("openshift") or {}).get("version") or "unknown"
    nics = shown_nics(nic_interfaces, nic_pci_addresses, nic_facts, fabric, plan_summary)
    return ["Cluster %s: %s, OpenShift %s" % (host, cluster_source, version),
            outcome_line(check_mode, in_sync),
            operators_line(check_mode, operator_results),
            rdma_line(plan_summary, method, fabric, nics)]
