"""wait_for against the simulated API server: a grace period ends on time even while the watch is never quiet.

The real API server sends BOOKMARK events on a watch (about once a minute; the simulator every
watch_bookmark_interval_s). Each one resets the client's socket read timeout, so a wait must check its wake time
on bookmarks too, or a failure's grace period only ends when the watch happens to be silent for a while."""

import time

import pytest

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterClient
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waiter import wait_for
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client


class FailedForLong(Exception):
    pass


def test_grace_period_ends_while_bookmarks_keep_arriving(sim_factory):
    sim = sim_factory(profile=None, controllers=False, config={"watch_bookmark_interval_s": 0.2})
    cluster = ClusterClient(get_api_client(kubeconfig=sim.kubeconfig))
    configmaps = cluster.resource("v1", "ConfigMap")
    cluster.create(configmaps, {"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": "broken", "namespace": "default"}, "data": {"state": "error"}})
    grace, timeout = 1.0, 60.0
    first_failure = []

    def predicate(state):
        if state and state["data"]["state"] == "error":
            first_failure.append(time.monotonic())
            if time.monotonic() - first_failure[0] >= grace:
                raise FailedForLong()
        return False

    def recheck_at():
        return first_failure[0] + grace if first_failure else None

    start = time.monotonic()
    with pytest.raises(FailedForLong):
        wait_for(cluster, configmaps, predicate, name="broken", namespace="default", timeout=timeout,
                 recheck_at=recheck_at)
    # The failure is reported once its grace period is over, far before the wait's own timeout (60 s), although
    # bookmarks arrived every 0.2 s all along.
    assert time.monotonic() - start < timeout / 2
    watches = [r for r in sim.request_log if r["verb"] == "watch" and r["plural"] == "configmaps"]
    assert watches, "the wait must have watched (and received bookmarks)"
