# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ClusterClient.resource: how often a missing kind makes the discoverer rediscover the API."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from kubernetes.dynamic.exceptions import ResourceNotFoundError

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterClient


class FakeDiscoverer:
    """Serves the kinds in ``served``; every miss counts as a rediscovery, as LazyDiscoverer's search does."""

    def __init__(self, served, cache=True):
        self.served = dict((k, list(v)) for k, v in served.items())
        self.rediscoveries = 0
        if cache:
            groups = {}
            for api_version in served:
                group, _sep, version = api_version.rpartition("/")
                groups.setdefault(group, {})[version] = object()
            self._cache = {"resources": {"apis": {g: v for g, v in groups.items() if g}, "api": {"": groups.get("", {})}}}

    def get(self, prefix, api_version, kind):
        if kind in self.served.get(api_version, ()):
            return (api_version, kind)
        self.rediscoveries += 1
        raise ResourceNotFoundError("No matches found")


class FakeK8s:
    def __init__(self, discoverer):
        self.client = type("Dynamic", (), {"resources": discoverer})()
        self.dry_run = False


MISSING = [("mellanox.com/v1alpha1", "NicClusterPolicy"), ("mellanox.com/v1alpha1", "MacvlanNetwork"),
           ("nvidia.com/v1", "ClusterPolicy"), ("sriovnetwork.openshift.io/v1", "SriovNetwork")]
SERVED = {"v1": ["Node"], "operators.coreos.com/v1alpha1": ["Subscription"]}


def test_point_in_time_readers_rediscover_once_for_any_number_of_missing_kinds():
    discoverer = FakeDiscoverer(SERVED)
    cluster = ClusterClient(FakeK8s(discoverer), rediscover_once=True)
    assert [cluster.resource(v, k) for v, k in MISSING] == [None] * len(MISSING)
    assert discoverer.rediscoveries == 1
    # served kinds are still found, and a missing kind of a served group version is still looked up
    assert cluster.resource("v1", "Node") == ("v1", "Node")
    assert cluster.resource("operators.coreos.com/v1alpha1", "InstallPlan") is None
    assert discoverer.rediscoveries == 2


def test_other_clients_rediscover_on_every_miss_so_new_kinds_are_found():
    discoverer = FakeDiscoverer(SERVED)
    cluster = ClusterClient(FakeK8s(discoverer))
    assert [cluster.resource(v, k) for v, k in MISSING] == [None] * len(MISSING)
    assert discoverer.rediscoveries == len(MISSING)
    discoverer.served["mellanox.com/v1alpha1"] = ["NicClusterPolicy"]  # an operator installed its CRDs
    assert cluster.resource("mellanox.com/v1alpha1", "NicClusterPolicy") == ("mellanox.com/v1alpha1", "NicClusterPolicy")


def test_an_unreadable_discovery_cache_falls_back_to_asking():
    discoverer = FakeDiscoverer(SERVED, cache=False)
    cluster = ClusterClient(FakeK8s(discoverer), rediscover_once=True)
    assert [cluster.resource(v, k) for v, k in MISSING] == [None] * len(MISSING)
    assert discoverer.rediscoveries == len(MISSING)
