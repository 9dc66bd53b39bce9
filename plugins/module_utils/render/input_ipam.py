# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The whereabouts ranges of the input model: one range, its bounds and excludes checked (check_ipam), and one range
per rail, given or split from one (assign_rail_ranges), so that two rails never hand out the same address."""


import ipaddress


def _parse_network(field, text, errors):
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        errors.add(field, "%s is not a valid CIDR" % text)
        return None


def _parse_address(field, text, errors):
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        errors.add(field, "%s is not a valid IP address" % text)
        return None


def check_range(field, text, values, errors):
    """One whereabouts range: a CIDR with room for pods, clear of the cluster and service networks. The network, or
    None when it is not a CIDR at all."""
    if "/" not in text:
        errors.add(field, "%s is not a valid CIDR (prefix length missing)" % text)
        return None
    network = _parse_network(field, text, errors)
    if network is None:
        return None
    if network.num_addresses < 4:
        errors.add(field, "%s leaves no room for pod addresses" % text)
    for cidr in values["cluster_network_cidrs"]:
        other = _parse_network("cluster_network_cidrs", cidr, errors)
        if other is not None and other.version == network.version and network.overlaps(other):
            errors.add(field, "%s overlaps the cluster or service network %s" % (text, cidr))
    return network


def check_ipam(values, errors):
    if values["ipam_ranges"] and not values.get("ipam_range"):
        return  # one range per rail, checked with the rails (assign_rail_ranges)
    if not values.get("ipam_range"):
        errors.add("ipam_range",
                   "required: the whereabouts CIDR for the secondary network (for example 192.168.2.0/24)")
        return
    text = values["ipam_range"]
    network = check_range("ipam_range", text, values, errors)
    if network is None:
        return
    bounds = {}
    for field in ("ipam_range_start", "ipam_range_end", "ipam_gateway"):
        if values.get(field):
            address = _parse_address(field, values[field], errors)
            if address is None:
                continue
            if address.version != network.version or address not in network:
                errors.add(field, "%s is outside gpudirect_rdma_ipam_range %s" % (address, network))
            bounds[field] = address
    start, end = bounds.get("ipam_range_start"), bounds.get("ipam_range_end")
    if start is not None and end is not None and start.version == end.version and start > end:
        errors.add("ipam_range_start", "%s is after gpudirect_rdma_ipam_range_end %s" % (start, end))
    excludes = []
    for cidr in values["ipam_exclude"]:
        if "/" not in str(cidr):
            errors.add("ipam_exclude", "%s is not a valid CIDR (prefix length missing)" % cidr)
            continue
        excluded = _parse_network("ipam_exclude", str(cidr), errors)
        if excluded is None:
            continue
        if excluded.version != network.version or not excluded.subnet_of(network):
            errors.add("ipam_exclude", "%s is outside gpudirect_rdma_ipam_range %s" % (cidr, network))
            continue
        for previous in excludes:
            if previous.overlaps(excluded):
                errors.add("ipam_exclude", "%s overlaps %s" % (excluded, previous))
        excludes.append(excluded)
    usable = network.num_addresses - sum(excluded.num_addresses for excluded in excludes)
    if excludes and usable <= 2:
        errors.add("ipam_exclude", "excludes every usable address of %s" % network)


def _split_range(network, count):
    """The first ``count`` of the equal, aligned subnets that ``network`` splits into (a power of two of them)."""
    extra_bits = max(0, (count - 1).bit_length())
    if network.prefixlen + extra_bits > network.max_prefixlen:
        return None
    return list(network.subnets(prefixlen_diff=extra_bits))[:count]


def assign_rail_ranges(values, errors):
    """One whereabouts range per rail, so that two rails never hand out the same address: given in
    gpudirect_rdma_ipam_ranges (rail order), else gpudirect_rdma_ipam_range split into equal subnets."""
    groups = (values.get("selection") or {}).get("groups") or []
    if not groups:
        return
    given = values["ipam_ranges"]
    if len(groups) == 1:
        if given:
            errors.add("ipam_ranges", "one range per rail, but there is one rail: use gpudirect_rdma_ipam_range")
            return
        groups[0]["ipam_range"] = values["ipam_range"]
        return
    for field in ("ipam_range_start", "ipam_range_end", "ipam_gateway"):
        if values.get(field):
            errors.add(field, "bounds one range, but the %d rails get one range each: leave it unset, and use "
                              "gpudirect_rdma_ipam_exclude for addresses to keep out" % len(groups))
    if given:
        if values.get("ipam_range"):
            errors.add("ipam_ranges", "given together with gpudirect_rdma_ipam_range: give one of them (the rails' "
                                      "ranges, or one range to split between the rails)")
            return
        if len(given) != len(groups):
            errors.add("ipam_ranges", "has %d ranges for %d rails (%s): give one per rail, in rail order"
                       % (len(given), len(groups), ", ".join(g["network_name"] for g in groups)))
            return
        ranges = []
        for text in given:
            network = check_range("ipam_ranges", str(text), values, errors)
            if network is None:
                continue
            for previous in ranges:
                if previous.overlaps(network):
                    errors.add("ipam_ranges",
                               "%s overlaps %s: two rails would hand out the same addresses" % (network, previous))
            ranges.append(network)
        if len(ranges) != len(groups):
            return
    else:
        whole = ipaddress.ip_network(values["ipam_range"], strict=False)
        ranges = _split_range(whole, len(groups))
        if ranges is None or ranges[0].num_addresses < 4:
            errors.add("ipam_range", "%s is too small to give each of the %d rails a range of its own: give a larger "
                                     "range, or gpudirect_rdma_ipam_ranges" % (values["ipam_range"], len(groups)))
            return
    for group, network in zip(groups, ranges):
        group["ipam_range"] = str(network)
        group["ipam_exclude"] = [str(cidr) for cidr in values["ipam_exclude"]
                                 if ipaddress.ip_network(str(cidr), strict=False).subnet_of(network)]
