"""Test helpers: drive a SimulatedCluster through the real kubernetes client, as a playbook would."""

import time

from kubernetes import client, config
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

OLM = "operators.coreos.com"


class Kube:
    def __init__(self, sim, cache_file):
        self.sim = sim
        self.api = config.new_client_from_config(config_file=sim.kubeconfig)
        self.dyn = DynamicClient(self.api, cache_file=cache_file)
        self.core = client.CoreV1Api(self.api)

    def res(self, api_version, kind):
        return self.dyn.resources.get(api_version=api_version, kind=kind)

    def served(self, api_version, kind):
        """Whether discovery knows the kind (refreshing the client's cache on a miss, as kubernetes.core does)."""
        try:
            self.res(api_version, kind)
            return True
        except ResourceNotFoundError:
            return False

    def create(self, obj):
        res = self.res(obj["apiVersion"], obj["kind"])
        return res.create(body=obj, namespace=obj["metadata"].get("namespace")).to_dict()

    def get(self, api_version, kind, name, namespace=None):
        try:
            return self.res(api_version, kind).get(name=name, namespace=namespace).to_dict()
        except NotFoundError:
            return None

    def list(self, api_version, kind, namespace=None, label_selector=None):
        return self.res(api_version, kind).get(namespace=namespace, label_selector=label_selector).to_dict()["items"]

    def patch(self, api_version, kind, name, body, namespace=None):
        return self.res(api_version, kind).patch(name=name, namespace=namespace, body=body,
                                                 content_type="application/merge-patch+json").to_dict()

    def delete(self, api_version, kind, name, namespace=None):
        return self.res(api_version, kind).delete(name=name, namespace=namespace)

    def node(self, name):
        return self.get("v1", "Node", name)

    def namespace(self, name, labels=None):
        if self.get("v1", "Namespace", name) is None:
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}})

    def operator_group(self, namespace, name=None, targets=None):
        spec = {} if targets == "all" else {"targetNamespaces": targets or [namespace]}
        return self.create({"apiVersion": OLM + "/v1", "kind": "OperatorGroup",
                            "metadata": {"name": name or namespace, "namespace": namespace}, "spec": spec})

    def subscribe(self, package, namespace, channel=None, source=None, approval="Automatic", starting_csv=None, name=None):
        from simulator.catalog import PACKAGES

        pkg = PACKAGES.get(package, {})
        spec = {"name": package, "source": source or (pkg.get("catalogs") or ["redhat-operators"])[0],
                "sourceNamespace": "openshift-marketplace", "installPlanApproval": approval}
        if channel is not False:
            spec["channel"] = channel or pkg.get("defaultChannel", "stable")
        if starting_csv:
            spec["startingCSV"] = starting_csv
        return self.create({"apiVersion": OLM + "/v1alpha1", "kind": "Subscription",
                            "metadata": {"name": name or package, "namespace": namespace}, "spec": spec})

    def csv_phase(self, namespace, name=None):
        items = self.list(OLM + "/v1alpha1", "ClusterServiceVersion", namespace)
        items = [c for c in items if name is None or c["metadata"]["name"] == name]
        return (items[0].get("status") or {}).get("phase") if items else None

    def install(self, package, namespace=None, **kwargs):
        """Namespace + OperatorGroup + Subscription, then wait for the CSV to succeed. Returns the CSV."""
        from simulator.catalog import PACKAGES

        namespace = namespace or PACKAGES[package]["suggestedNamespace"]
        self.namespace(namespace)
        self.operator_group(namespace)
        self.subscribe(package, namespace, **kwargs)
        wait(lambda: self.csv_phase(namespace) == "Succeeded", what="%s CSV Succeeded" % package)
        return self.list(OLM + "/v1alpha1", "ClusterServiceVersion", namespace)[0]


def wait(fn, timeout=60.0, interval=0.02, what="condition"):
    """Poll fn until it returns a truthy value; return that value or fail naming what was awaited."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError("timed out after %.1fs waiting for %s (last value: %r)" % (timeout, what, last))
