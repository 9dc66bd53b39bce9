# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ManifestApplier by server-side apply: when no request is needed, and the one-time move from client-side apply."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.apply import (
    FIELD_MANAGER,
    LAST_APPLIED_CONFIG_ANNOTATION,
    ManifestApplier,
    in_sync,
    migrated,
    migration_patch,
    upgraded_managed_fields,
)

LABEL = {"app.kubernetes.io/managed-by": "gpudirect.openshift"}
OURS = {"f:metadata": {"f:labels": {"f:app.kubernetes.io/managed-by": {}}},
        "f:spec": {"f:master": {}, "f:mode": {}, "f:mtu": {}}}


def desired(**spec):
    return {"apiVersion": "mellanox.com/v1alpha1", "kind": "MacvlanNetwork",
            "metadata": {"name": "net", "labels": dict(LABEL)},
            "spec": dict({"master": "ens8f0np0", "mode": "bridge", "mtu": 9000}, **spec)}


def live(fields=None, manager=FIELD_MANAGER, operation="Apply", annotations=None, **spec):
    obj = desired(**spec)
    obj["metadata"].update(resourceVersion="7", uid="u", managedFields=[
        {"manager": manager, "operation": operation, "apiVersion": "mellanox.com/v1alpha1", "fieldsType": "FieldsV1",
         "fieldsV1": copy.deepcopy(OURS if fields is None else fields)},
        {"manager": "manager", "operation": "Update", "apiVersion": "mellanox.com/v1alpha1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:annotations": {"f:operator.macvlannetwork.mellanox.com/last-network-namespace": {}}}}},
    ])
    obj["metadata"]["annotations"] = annotations or {"operator.macvlannetwork.mellanox.com/last-network-namespace": "default"}
    obj["status"] = {"state": "ready"}
    return obj


def test_in_sync_when_we_own_exactly_the_desired_fields_with_our_values():
    # The operator's annotations (and status) are someone else's: no reason to write.
    assert in_sync(live(), desired())


def test_not_in_sync_when_a_value_differs_a_field_is_missing_or_one_is_left_to_prune():
    assert not in_sync(live(mtu=1500), desired())  # another manager changed our value
    assert not in_sync(live(), desired(ipam="{}"))  # a new field
    without_mtu = desired()
    del without_mtu["spec"]["mtu"]
    assert not in_sync(live(), without_mtu)  # we still own mtu: the apply must prune it
    assert not in_sync(live(manager="someone-else"), desired())  # never applied by us
    moved = live()
    moved["metadata"]["managedFields"][0]["apiVersion"] = "mellanox.com/v1"
    assert not in_sync(moved, desired())


def test_in_sync_follows_list_items_by_the_keys_managed_fields_record():
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    fields = copy.deepcopy(OURS)
    fields["f:spec"]["f:env"] = {'k:{"name":"A"}': {".": {}, "f:name": {}, "f:value": {}},
                                 'k:{"name":"B"}': {".": {}, "f:name": {}, "f:value": {}}}
    obj = live(fields=fields, env=list(reversed(env)) + [{"name": "C", "value": "from another manager"}])
    assert in_sync(obj, desired(env=env))
    assert not in_sync(obj, desired(env=env[:1]))  # B is ours and would be removed
    assert not in_sync(obj, desired(env=[{"name": "A", "value": "9"}, env[1]]))
    fields["f:spec"]["f:env"] = {}  # an atomic list is one field: compared whole
    assert not in_sync(live(fields=fields, env=env + [{"name": "C"}]), desired(env=env))
    assert in_sync(live(fields=fields, env=env), desired(env=env))


def csa_object():
    """What client-side apply left: the annotation, every field owned by the client's Update entry."""
    obj = live(fields=dict(OURS, **{"f:metadata": {"f:labels": {"f:app.kubernetes.io/managed-by": {}}, "f:annotations": {
        "f:" + LAST_APPLIED_CONFIG_ANNOTATION: {}}}}), manager="OpenAPI-Generator", operation="Update",
        annotations={LAST_APPLIED_CONFIG_ANNOTATION: json.dumps(desired()),
                     "operator.macvlannetwork.mellanox.com/last-network-namespace": "default"})
    obj["metadata"]["managedFields"].insert(0, {"manager": "OpenAPI-Generator", "operation": "Update", "subresource": "status",
                                                "apiVersion": "mellanox.com/v1alpha1", "fieldsType": "FieldsV1",
                                                "fieldsV1": {"f:status": {"f:state": {}}}})
    return obj


def test_migration_moves_the_client_side_appliers_fields_to_our_apply_entry_and_drops_the_annotation():
    obj = csa_object()
    operations = migration_patch(obj)
    assert operations[-2:] == [
        {"op": "remove", "path": "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"},
        {"op": "replace", "path": "/metadata/resourceVersion", "value": "7"}]
    entries = operations[0]["value"]
    assert [(e["manager"], e["operation"], e.get("subresource")) for e in entries] == [
        ("OpenAPI-Generator", "Update", "status"), (FIELD_MANAGER, "Apply", None), ("manager", "Update", None)]
    assert entries[1]["fieldsV1"]["f:spec"] == OURS["f:spec"]
    after = migrated(obj, operations)
    assert LAST_APPLIED_CONFIG_ANNOTATION not in after["metadata"].get("annotations", {})
    # What the server does with the annotation's removal (the field leaves every manager) makes it in sync.
    del after["metadata"]["managedFields"][1]["fieldsV1"]["f:metadata"]["f:annotations"]
    assert in_sync(after, desired())
    assert migration_patch(after) is None
    # The annotation alone: the map goes, no empty one is left.
    del obj["metadata"]["annotations"]["operator.macvlannetwork.mellanox.com/last-network-namespace"]
    assert migration_patch(obj)[-2] == {"op": "remove", "path": "/metadata/annotations"}


def test_migration_merges_into_an_existing_apply_entry_as_csaupgrade_does():
    entries = [{"manager": FIELD_MANAGER, "operation": "Apply", "apiVersion": "v1", "fieldsV1": {"f:data": {"f:a": {}}}},
               {"manager": "old", "operation": "Update", "apiVersion": "v1", "fieldsV1": {"f:data": {"f:b": {}}}},
               {"manager": "old", "operation": "Update", "apiVersion": "v0", "fieldsV1": {"f:data": {"f:c": {}}}}]
    assert upgraded_managed_fields(entries, "old") == [
        {"manager": FIELD_MANAGER, "operation": "Apply", "apiVersion": "v1", "fieldsV1": {"f:data": {"f:a": {}, "f:b": {}}}}]
    assert upgraded_managed_fields(entries[1:], "nobody") == entries[1:]


class FakeCluster:
    """Records the requests; answers an apply with the desired object, as far as these tests look."""

    dry_run = False
    skip_writes = False

    def __init__(self, items):
        self.items = items
        self.requests = []

    def resource(self, api_version, kind):
        return type("Resource", (), {"namespaced": False, "group_version": api_version, "kind": kind})()

    require = resource

    def list(self, resource, namespace=None, label_selector=None):
        self.requests.append(("list", resource.kind))
        return copy.deepcopy(self.items), "1"

    def json_patch(self, resource, name, namespace, operations, field_manager=None):
        self.requests.append(("json_patch", name, field_manager))
        return None

    def server_side_apply(self, resource, body, field_manager, force=True):
        self.requests.append(("apply", body["metadata"]["name"], field_manager, force))
        return copy.deepcopy(body)


def test_applier_makes_no_request_for_an_object_in_sync_and_one_apply_otherwise():
    cluster = FakeCluster([live()])
    applier = ManifestApplier(cluster)
    applier.apply(desired())
    assert cluster.requests == [("list", "MacvlanNetwork")] and not applier.changed
    applier.apply(desired(mtu=1500))
    assert cluster.requests[-1] == ("apply", "net", FIELD_MANAGER, True)
    assert [r["action"] for r in applier.results] == ["unchanged", "patched"]


def test_applier_migrates_once_then_applies_only_when_the_input_changed():
    cluster = FakeCluster([csa_object()])
    applier = ManifestApplier(cluster)
    applier.apply(desired())
    assert [r[0] for r in cluster.requests] == ["list", "json_patch", "apply"]  # our entry still owns the annotation
    cluster = FakeCluster([csa_object()])
    ManifestApplier(cluster).apply(desired(mtu=1500))
    assert [r[0] for r in cluster.requests] == ["list", "json_patch", "apply"]


# A write an admission webhook cannot judge yet (its pod is starting): kube-apiserver's 500, retried within the grace
# (rules/webhooks.py), at both ends of the documented start range of a webhook pod.

import pytest  # noqa: E402
from kubernetes.client.exceptions import ApiException  # noqa: E402

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import ClusterError  # noqa: E402
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import api_errors  # noqa: E402
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import webhooks  # noqa: E402

NOT_SERVING = ('failed calling webhook "operator-webhook.sriovnetwork.openshift.io": failed to call webhook: Post '
               '"https://operator-webhook-service.openshift-sriov-network-operator.svc:443/mutating-custom-resource?timeout=10s": '
               'no endpoints available for service "operator-webhook-service"')


def api_exception(status, reason, message):
    exc = ApiException(status=status, reason=reason)
    exc.body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": status, "reason": reason,
                           "message": message})
    return exc


class WebhookStarting(FakeCluster):
    """Answers the first ``failures`` applies as kube-apiserver does while the webhook has no ready pod."""

    def __init__(self, failures, answer=None):
        super(WebhookStarting, self).__init__([])
        self.failures, self.answer = failures, answer or api_exception(500, "InternalError", "Internal error occurred: " + NOT_SERVING)

    def server_side_apply(self, resource, body, field_manager, force=True):
        self.requests.append(("apply", body["metadata"]["name"], field_manager, force))
        if self.failures:
            self.failures -= 1
            raise self.answer
        return copy.deepcopy(body)


class Clock:
    def __init__(self):
        self.now, self.sleeps = 0.0, []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds + 1.0  # each try itself takes a second (the client's own retries of the 500)


@pytest.mark.parametrize("start", webhooks.WEBHOOK_START_SECONDS)
def test_a_write_is_retried_while_the_webhook_pod_starts(start):
    clock = Clock()
    tries = -(-start // (webhooks.RETRY_SECONDS + 1))  # the tries before the pod is ready, ``start`` seconds in
    cluster = WebhookStarting(failures=tries)
    applier = ManifestApplier(cluster, webhook_grace_period=webhooks.DEFAULT_WEBHOOK_GRACE_SECONDS, sleep=clock.sleep, clock=clock)
    applier.apply(desired())
    assert [r[0] for r in cluster.requests].count("apply") == tries + 1
    assert [r["action"] for r in applier.results] == ["created"]
    assert all(0 < s <= webhooks.RETRY_SECONDS for s in clock.sleeps)


def test_a_webhook_that_stays_down_fails_within_the_grace_quoting_the_api_server():
    clock = Clock()
    cluster = WebhookStarting(failures=10 ** 6)
    applier = ManifestApplier(cluster, webhook_grace_period=150, sleep=clock.sleep, clock=clock)
    with pytest.raises(ClusterError) as failed:
        applier.apply(desired())
    assert 150 <= clock.now <= 150 + webhooks.RETRY_SECONDS + 1
    text = str(failed.value)
    assert text.startswith("MacvlanNetwork net: the admission webhook operator-webhook.sriovnetwork.openshift.io was not serving")
    assert NOT_SERVING in text and "(HTTP 500 InternalError)" in text


def test_a_webhook_that_denies_fails_at_once_and_other_errors_are_not_retried_here():
    for answer in (api_exception(400, "no supported NIC is selected", 'admission webhook "x" denied the request: no NIC'),
                   api_exception(500, "InternalError", "Internal error occurred: etcdserver: request timed out")):
        clock = Clock()
        cluster = WebhookStarting(failures=1, answer=answer)
        with pytest.raises(ApiException):
            ManifestApplier(cluster, sleep=clock.sleep, clock=clock).apply(desired())
        assert clock.sleeps == []


def test_the_webhook_rule_at_both_ends_of_its_range():
    assert webhooks.retry_delay(0, 0, webhooks.WEBHOOK_START_SECONDS[0]) == webhooks.RETRY_SECONDS
    assert webhooks.retry_delay(0, 4, webhooks.WEBHOOK_START_SECONDS[0]) == 2
    assert webhooks.retry_delay(0, 6, webhooks.WEBHOOK_START_SECONDS[0]) is None
    assert webhooks.retry_delay(0, 149, webhooks.WEBHOOK_START_SECONDS[1]) == 1
    assert webhooks.retry_delay(0, 150, webhooks.WEBHOOK_START_SECONDS[1]) is None
    assert webhooks.webhook_call_failure(503, "failed calling webhook \"a\"") is None


def test_the_client_does_not_retry_a_webhook_call_failure_itself():
    """The client's quick retries (api_errors.RetryPolicy, about 6 s in all) would run inside each of the applier's
    tries and stretch its grace period; a 500 that names a failed webhook call is left to the applier. Any other 500
    is still retried by the client."""
    webhook_down = api_exception(500, "InternalError", "Internal error occurred: " + NOT_SERVING)
    assert api_errors.is_transient(webhook_down) is False
    assert api_errors.is_transient(api_exception(500, "InternalError", "Internal error occurred: etcdserver: request timed out"))
    sleeps = []
    policy = api_errors.RetryPolicy(sleep=sleeps.append)

    def write():
        raise webhook_down

    with pytest.raises(ApiException):
        policy.call(write)
    assert sleeps == []
