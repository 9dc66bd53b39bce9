# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The one way the collection runs short-lived pods: facts pods (node_facts.py) and bandwidth-test pods
(bandwidth_run.py).

A ``PodRun`` labels every pod it creates with one run label, follows them all with one watch on that label,
tells one story of "pod failed" (``pod_failure``: a terminated container, a waiting reason that never clears,
or a scheduling or image problem that outlasts the grace period, quoting the kubelet's reason and message),
reads logs, and deletes the run's pods by label in one request (deletecollection), also when something fails.

What a pod state means is written once, in module_utils/verify/pod_states.py (pure, unit tested).
"""


import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import (
    ClusterError,
    api_message,
    api_status,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.verify.pod_states import pending_problem, pod_failure
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waiter import WaitTimeout, absent, wait_for

# -- the service -----------------------------------------------------------------------------------


class PodRun:
    """The pods of one run in one namespace: create, follow with one watch, read logs, delete by label.

    Every pod created through ``create`` must carry ``run_label: run_id``; ``selector`` selects them."""

    def __init__(self, cluster, namespace, run_label, run_id, grace=60, fail_at_once=(), clock=time.monotonic):
        self.cluster = cluster
        self.namespace = namespace
        self.run_label = run_label
        self.run_id = run_id
        self.grace = grace
        self.fail_at_once = tuple(fail_at_once)
        self.clock = clock
        self.resource = cluster.require("v1", "Pod")
        self.created = []
        self.problem_since = {}

    def selector(self, **labels):
        """The run's label selector, narrowed by more labels (label=value)."""
        return ",".join(["%s=%s" % (self.run_label, self.run_id)] + ["%s=%s" % item for item in sorted(labels.items())])

    def create(self, manifest):
        """Create a pod; returns None, or the API server's refusal (status, message): a 4xx answer is that pod's
        failure."""
        name = manifest["metadata"]["name"]
        try:
            self.cluster.create(self.resource, manifest)
        except Exception as exc:  # pylint: disable=broad-except
            status = api_status(exc)
            if status is None or status >= 500:
                raise
            return status, api_message(exc)
        self.created.append(name)
        return None

    def create_or_fail(self, manifest):
        """Create a pod; a refusal raises ClusterError with the API server's message. A missing service account gets
        the fix: the pods run in the networks' namespace (Multus isolation), so the account must exist there."""
        refused = self.create(manifest)
        if refused is None:
            return
        status, message = refused
        if status == 403 and "error looking up service account" in message:
            raise ClusterError(
                "service_account (verify_service_account): the account %r does not exist in namespace %s, where the "
                "test pods run because the network is there. Create it as deploy/rbac/workloads.yml does for default "
                "(the gpudirect-verify ServiceAccount and its gpudirect-verify-scc RoleBinding, with namespace: %s), "
                "or give an account of that namespace. The API server said: %s"
                % (manifest["spec"].get("serviceAccountName") or "default", self.namespace, self.namespace, message),
                status=403)
        raise ClusterError("The API server refused pod %s: %s" % (manifest["metadata"]["name"], message), status=status)

    def failure(self, pod, now=None):
        """pod_failure with the grace period measured from when this run first saw the pod's pending problem."""
        name = pod["metadata"]["name"]
        since = self.problem_since.get(name)
        problem_for = None if since is None else (self.clock() if now is None else now) - since
        return pod_failure(pod, problem_for, self.grace, self.fail_at_once)

    def _track(self, pod, now):
        name = pod["metadata"]["name"]
        if pending_problem(pod):
            self.problem_since.setdefault(name, now)
        else:
            self.problem_since.pop(name, None)

    def follow(self, on_change, done, timeout, selector=None, wake_at=None):
        """One watch on the run's pods (or ``selector``) until ``done(now)`` is true.

        on_change(pod, now) sees each pod once per new resourceVersion (not the whole list on every event), so a
        thousand pods cost a thousand calls per round of changes. wake_at() may return a monotonic time at which
        done must be asked again without an event (deadlines). Returns {name: pod} as last seen, and whether done."""
        seen = {}
        versions = {}

        def predicate(items):
            now = self.clock()
            for pod in items or []:
                name = pod["metadata"]["name"]
                version = pod["metadata"].get("resourceVersion")
                if versions.get(name) == version and version is not None:
                    continue
                versions[name] = version
                seen[name] = pod
                self._track(pod, now)
                on_change(pod, now)
            return done(now)

        def recheck_at():
            times = [since + self.grace for name, since in self.problem_since.items() if name in seen]
            extra = wake_at() if wake_at else None
            if extra is not None:
                times.append(extra)
            return min(times) if times else None

        try:
            wait_for(self.cluster, self.resource, predicate, namespace=self.namespace,
                     label_selector=selector or self.selector(), timeout=timeout, recheck_at=recheck_at,
                     clock=self.clock)
        except WaitTimeout:
            return seen, False
        return seen, True

    def log(self, name, container=None, tail=None, missing_ok=True):
        """The pod's log ('' when the container never started or the pod is gone and missing_ok)."""
        path = self.resource.path(name=name, namespace=self.namespace) + "/log"
        params = []
        if container:
            params.append(("container", container))
        if tail:
            params.append(("tailLines", tail))
        try:
            return self.cluster.read_text(path, params)
        except Exception as exc:  # pylint: disable=broad-except
            if missing_ok and api_status(exc) in (400, 404):
                return ""
            raise ClusterError("cannot read the log of pod %s/%s: %s" % (self.namespace, name, api_message(exc)),
                               status=api_status(exc))

    def delete_all(self, selector=None, wait_timeout=None):
        """Delete the pods matching ``selector`` (default: the run's) in one request (deletecollection, no grace period:
        they have finished or must stop); with wait_timeout, wait until they are gone. Returns the names deleted."""
        selector = selector or self.selector()
        answer = self.cluster.delete_collection(self.resource, self.namespace, selector, grace_period_seconds=0)
        names = sorted(item["metadata"]["name"] for item in (answer or {}).get("items") or [])
        if wait_timeout and names:
            wait_for(self.cluster, self.resource, absent, namespace=self.namespace, label_selector=selector,
                     timeout=wait_timeout)
        return names
