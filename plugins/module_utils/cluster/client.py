# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Thin helpers on top of kubernetes.core's API client.

kubernetes.core's ``get_api_client`` gives a cached ``K8SClient`` (auth, dry-run in check mode,
discovery cache). This module adds what the cluster-layer modules need on top of it: plain-dict
reads (get-or-none, list with selectors and the list resourceVersion), writes that honour dry-run,
read-modify-write with re-read on 409, a raw watch stream, resource lookup that asks for just the missing group
version on a miss, and one retry policy for transient API errors shared by every call (cluster/api_errors.py).
"""


import copy
import json
import time

try:
    from kubernetes.dynamic.discovery import ResourceGroup
    from kubernetes.dynamic.exceptions import ResourceNotFoundError, ResourceNotUniqueError
    from kubernetes.dynamic.resource import Resource
except ImportError:  # reported by the module through AnsibleK8SModule's requirement check
    ResourceNotFoundError = ResourceNotUniqueError = Resource = ResourceGroup = None

from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import (
    DEFAULT_RETRY,
    ClusterError,
    api_reason,
    api_status,
    not_processed,
)


DRY_RUN_ALL = "All"

# (connect, read) seconds for every request but watches (those end server-side): a request that stalls is cut and,
# being transient, retried. kube-apiserver itself ends non-long-running requests after 60 s (--request-timeout).
REQUEST_TIMEOUT = (10, 30)
# Seconds a "group version not served" (or "kind not in it") answer is believed: lookups in a burst cost one request,
# and a kind that an operator serves a moment later is still found by a task that looks again.
NOT_SERVED_TTL = 5.0
GROUP_LIST = "/apis"
# Fields of an APIResourceList entry that Resource() takes from the group version instead.
_RESOURCE_ARGS_OWN = ("prefix", "group", "api_version", "client", "preferred", "subresources")


# Objects per list request: client-go's pager default (k8s.io/client-go tools/pager/pager.go defaultPageSize).
PAGE_SIZE = 500
# Restarts of a list whose continue token expired (410) before the listing gives up.
LIST_RESTARTS = 3


def paged_list(request, path, query, page_size=PAGE_SIZE, on_page=None):
    """(items, list resourceVersion) of a collection read with limit + continue.

    ``request(method, path, **query)`` returns the decoded body. All pages are one snapshot (the server reads
    them at the first page's resourceVersion); when that snapshot has expired (410 on a continued page), the
    list starts over, so the result is never a mix of two revisions. ``on_page(items, first)`` receives each page
    instead of the result (``first`` again after a restart, so that the caller starts over): a caller that keeps
    a part of a large list never holds all of it; when it returns true, the pages after it are not read."""
    restarts = 0
    while True:
        items, token, list_rv = [], None, None
        try:
            while True:
                page_query = dict(query, limit=page_size)
                if token:
                    page_query["_continue"] = token
                body = request("get", path, **page_query)
                meta = body.get("metadata") or {}
                if list_rv is None:
                    list_rv = meta.get("resourceVersion")
                if on_page is not None:
                    if on_page(body.get("items") or [], token is None):
                        return items, list_rv  # the caller has what it needs: the rest is not read
                else:
                    items.extend(body.get("items") or [])
                token = meta.get("continue")
                if not token:
                    return items, list_rv
        except Exception as exc:  # pylint: disable=broad-except
            restarts += 1
            if not (token and api_status(exc) == 410) or restarts > LIST_RESTARTS:
                raise


def _decode(response):
    data = response.data
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    return json.loads(data) if data else {}


def _unique_kind(resources, kind):
    """The one resource of ``kind`` in a group version's {kind: [Resource]}; None when absent or ambiguous."""
    found = [r for r in resources.get(kind) or [] if getattr(r, "kind", None) == kind]
    return found[0] if len(found) == 1 else None


object_ref = vocabulary.object_ref


class ClusterClient:
    """Plain-dict access to the API through kubernetes.core's K8SClient.

    Every call goes through ``retry`` (transient errors). Writes carry ``dryRun=All`` when the
    kubernetes.core client is in dry-run mode (module check mode), so check mode never persists.
    """

    def __init__(self, k8s_client, retry=None, check_mode=False, rediscover_once=False, request_timeout=REQUEST_TIMEOUT,
                 not_served_ttl=NOT_SERVED_TTL, clock=time.monotonic):
        self.k8s = k8s_client
        self.request_timeout = request_timeout
        self.dynamic = k8s_client.client
        self.dry_run = bool(getattr(k8s_client, "dry_run", False))
        # Check mode on a client too old for server-side dry run: writes are not sent at all.
        self.skip_writes = bool(check_mode) and not self.dry_run
        self.retry = retry or DEFAULT_RETRY
        # Point-in-time readers (plan_status, cluster_info, diagnostics) believe a "not served" answer for the rest of
        # the run; other clients for not_served_ttl seconds, so that a kind installed meanwhile is found.
        self.not_served_ttl = None if rediscover_once else not_served_ttl
        self.clock = clock
        self.page_size = PAGE_SIZE
        self._asked = {}  # group version path -> clock() of our last GET of it

    def api_host(self):
        """URL of the API server this client talks to, or None."""
        host = getattr(getattr(getattr(self.dynamic, "client", None), "configuration", None), "host", None)
        return host if isinstance(host, str) else None

    # -- discovery ---------------------------------------------------------------------------

    def resource(self, api_version, kind):
        """The served resource for apiVersion/kind, or None.

        kubernetes.core's discoverer (LazyDiscoverer of kubernetes/dynamic/discovery.py) answers a miss by throwing
        its whole cache away and reading /version, /apis and then every group version again. Instead, a kind that is
        not in the cache costs one GET of its group version, whose answer goes into the discoverer's cache (and its
        file, shared by the run's later tasks); a "not served" answer is kept for ``not_served_ttl`` seconds.
        """
        prefix = "api" if api_version == "v1" else "apis"
        groups = self._discovery_cache()
        if groups is None:  # not a discoverer we know: let it search (and refresh) itself
            return self._search(prefix, api_version, kind)
        group, _sep, version = api_version.rpartition("/")
        cached = (groups.get(prefix) or {}).get(group, {}).get(version)
        if cached is not None and getattr(cached, "resources", None):
            found = _unique_kind(cached.resources, kind)
            if found is not None:
                return found
        if cached is None and prefix == "apis" and self.not_served_ttl is None:
            # A point-in-time reader misses several kinds of a bare cluster: one fresh group list answers for all of
            # them (and for the rest of the run), where asking each group version would cost one request per group.
            if not self._fresh(GROUP_LIST):
                self._list_groups(groups)
            cached = groups["apis"].get(group, {}).get(version)
            if cached is None:
                return None
        path = "/%s/%s" % (prefix, api_version)
        if self._fresh(path):
            return None
        resources = self._group_version_resources(prefix, group, version, path, groups)
        return _unique_kind(resources, kind) if resources else None

    def _fresh(self, path):
        """Whether we asked for ``path`` recently enough to believe the answer; notes the time otherwise."""
        asked = self._asked.get(path)
        if asked is not None and (self.not_served_ttl is None or self.clock() - asked < self.not_served_ttl):
            return True
        self._asked[path] = self.clock()
        return False

    def _discovery_cache(self):
        """The discoverer's {prefix: {group: {version: ResourceGroup}}}, or None when it is not readable."""
        cache = getattr(self.dynamic.resources, "_cache", None)
        if ResourceGroup is None or not isinstance(cache, dict) or not isinstance(cache.get("resources"), dict):
            return None
        return cache["resources"]

    def _search(self, prefix, api_version, kind):
        try:
            return self.retry.call(self.dynamic.resources.get, prefix=prefix, api_version=api_version, kind=kind)
        except (ResourceNotFoundError, ResourceNotUniqueError):
            return None

    def _list_groups(self, groups):
        """GET /apis into the discoverer's cache: new groups and versions come in (their resources read lazily),
        gone ones go, group versions already read keep their resources."""
        body = self._request("get", GROUP_LIST)
        listed = {"": groups.get("apis", {}).get("", {})}  # the discoverer's own "List" entry, served by no group
        for entry in body.get("groups") or []:
            preferred = (entry.get("preferredVersion") or {}).get("version")
            known = groups.get("apis", {}).get(entry.get("name"), {})
            versions = {}
            for item in entry.get("versions") or []:
                version = item.get("version")
                kept = known.get(version)
                versions[version] = kept if kept is not None else ResourceGroup(version == preferred)
            listed[entry.get("name")] = versions
        groups["apis"] = listed
        self._write_discovery_cache()

    def _write_discovery_cache(self):
        write = getattr(self.dynamic.resources, "_write_cache", None)
        if callable(write):
            write()  # the discoverer's cache file: later tasks of the run start from it

    def _group_version_resources(self, prefix, group, version, path, groups):
        """GET one group version and put it into the discoverer's cache; {kind: [Resource]}, or None if not served."""
        versions = (groups.get(prefix) or {}).get(group) or {}
        try:
            body = self._request("get", path)
        except Exception as exc:  # pylint: disable=broad-except
            # 404: not served (yet). 503 after the retries: an aggregated API that is down, which the discoverer
            # also takes as serving nothing.
            if api_status(exc) not in (404, 503):
                raise
            if api_status(exc) == 404:
                versions.pop(version, None)
            return None
        versions = groups.setdefault(prefix, {}).setdefault(group, versions)
        previous = versions.get(version)
        # A group version that /apis did not list when the cache was built is taken as preferred only if it is its
        # group's only one; our lookups always name the version, so this matters only to searches by kind alone.
        preferred = previous.preferred if previous is not None else prefix == "api" or not versions
        entries = [e for e in body.get("resources") or [] if isinstance(e, dict) and e.get("name") and e.get("kind")]
        subresources = {}
        for entry in entries:
            parent, sep, sub = entry["name"].partition("/")
            if sep:
                subresources.setdefault(parent, {})[sub] = entry
        resources = {}
        for entry in entries:
            if "/" in entry["name"]:
                continue
            fields = {k: v for k, v in entry.items() if k not in _RESOURCE_ARGS_OWN}
            resources.setdefault(entry["kind"], []).append(Resource(
                prefix=prefix, group=group, api_version=version, client=self.dynamic, preferred=preferred,
                subresources=subresources.get(entry["name"]), **fields))
        versions[version] = ResourceGroup(preferred, resources=resources)
        self._write_discovery_cache()
        return resources

    def require(self, api_version, kind):
        resource = self.resource(api_version, kind)
        if resource is None:
            raise ClusterError(
                "The API server does not serve %s %s (is the operator that owns it installed?)" % (api_version, kind))
        return resource

    # -- reads ---------------------------------------------------------------------------------

    def _request(self, method, path, **query):
        query.setdefault("_request_timeout", self.request_timeout)
        return _decode(self.retry.call(self.dynamic.request, method, path, serialize=False, **query))

    def raw_get(self, path, **query):
        """GET ``path`` (a URL path below the API server), decoded; retried and timed like every read."""
        return self._request("get", path, **query)

    def read_text(self, path, query_params=None):
        """GET ``path`` whose answer is text, not JSON (a pod's log); retried and timed like every read."""
        response = self.retry.call(self.dynamic.request, "get", path, serialize=False, query_params=query_params or [],
                                   _request_timeout=self.request_timeout)
        data = response.data
        return data.decode("utf-8", "replace") if isinstance(data, bytes) else (data or "")

    def ask(self, path, body):
        """POST a question whose answer is computed, never stored (an authorization.k8s.io review): sent in check mode
        too, without dryRun, and retried like a read."""
        return self._request("post", path, body=body)

    def probe(self, path, timeout):
        """Whether the API server answers at all: one GET with ``timeout``, no retries. Raises what the request raised;
        any HTTP status counts as an answer to the caller, which looks at api_status of the exception."""
        self.dynamic.request("get", path, serialize=False, _request_timeout=timeout)

    def get(self, resource, name, namespace=None):
        """The object as a dict, or None when it does not exist."""
        try:
            return self._request("get", resource.path(name=name, namespace=namespace))
        except Exception as exc:  # pylint: disable=broad-except
            if api_status(exc) == 404:
                return None
            raise

    def list(self, resource, namespace=None, label_selector=None, field_selector=None, page_size=None):
        """(items, list resourceVersion), read in pages of ``page_size`` (limit + continue, as client-go's pager
        does); items get apiVersion/kind filled in, as servers may omit them."""
        query = {}
        if label_selector:
            query["label_selector"] = label_selector
        if field_selector:
            query["field_selector"] = field_selector
        items, list_rv = paged_list(self._request, resource.path(namespace=namespace), query,
                                    page_size or self.page_size)
        for item in items:
            item.setdefault("apiVersion", resource.group_version)
            item.setdefault("kind", resource.kind)
        return items, list_rv

    def list_pages(self, resource, on_page, namespace=None, label_selector=None, field_selector=None):
        """The list resourceVersion; the items go to ``on_page(items, first)`` page by page (see paged_list),
        with apiVersion/kind filled in. When ``on_page`` returns true the rest is not read."""
        query = {}
        if label_selector:
            query["label_selector"] = label_selector
        if field_selector:
            query["field_selector"] = field_selector

        def page(items, first):
            for item in items:
                item.setdefault("apiVersion", resource.group_version)
                item.setdefault("kind", resource.kind)
            return on_page(items, first)
        return paged_list(self._request, resource.path(namespace=namespace), query, self.page_size, on_page=page)[1]

    # -- writes --------------------------------------------------------------------------------

    def _write_params(self):
        return {"dry_run": DRY_RUN_ALL} if self.dry_run else {}

    def create(self, resource, body):
        """POST is not idempotent: a create whose answer was lost (504, reset) may have been stored. A retry that
        then meets AlreadyExists reads the object instead of failing; a generateName create is retried only on 429 or
        a refused connection (the server did not process it), since a retry could create a second object."""
        if self.skip_writes:
            return copy.deepcopy(body)
        meta = body.get("metadata", {})
        namespace = meta.get("namespace") if resource.namespaced else None
        path = resource.path(namespace=namespace)
        query = dict(self._write_params(), _request_timeout=self.request_timeout)
        sent = []

        def post():
            if sent and not meta.get("name") and not not_processed(sent[-1]):
                raise sent[-1]
            try:
                return self.dynamic.request("post", path, body=body, serialize=False, **query)
            except Exception as exc:  # pylint: disable=broad-except
                sent.append(exc)
                raise

        try:
            return _decode(self.retry.call(post))
        except Exception as exc:  # pylint: disable=broad-except
            retried_after_unknown_outcome = any(not not_processed(e) for e in sent[:-1])
            if meta.get("name") and retried_after_unknown_outcome and api_status(exc) == 409 \
                    and api_reason(exc) == "AlreadyExists":
                found = self.get(resource, meta["name"], namespace)
                if found is not None:
                    return found
            raise

    def replace(self, resource, body):
        if self.skip_writes:
            return copy.deepcopy(body)
        meta = body["metadata"]
        path = resource.path(name=meta["name"], namespace=meta.get("namespace") if resource.namespaced else None)
        return self._request("put", path, body=body, **self._write_params())

    def merge_patch(self, resource, name, namespace, patch, conflict_attempts=5):
        """A JSON merge patch. It carries no resourceVersion, so a 409 (the server lost a race between concurrent
        writers) is answered by sending the same patch again: the result is the same whichever write won."""
        if self.skip_writes:
            return None
        path = resource.path(name=name, namespace=namespace if resource.namespaced else None)
        for attempt in range(conflict_attempts):
            try:
                return self._request("patch", path, body=patch, content_type="application/merge-patch+json",
                                     **self._write_params())
            except Exception as exc:  # pylint: disable=broad-except
                if api_status(exc) != 409 or attempt == conflict_attempts - 1 or \
                        ((patch or {}).get("metadata") or {}).get("resourceVersion"):
                    raise
        return None

    def server_side_apply(self, resource, body, field_manager, force=True, conflict_attempts=5):
        """Server-side apply (a PATCH of type application/apply-patch+yaml; JSON is YAML) under ``field_manager``;
        creates the object when it does not exist. ``force`` takes the fields whose value it changes from other
        managers instead of failing with a conflict. It carries no resourceVersion, so a 409 that is no field
        conflict (a lost race between writers) is answered by sending it again. Returns the resulting object
        (the one that would result, in dry-run); None when writes are skipped."""
        if self.skip_writes:
            return None
        meta = body["metadata"]
        path = resource.path(name=meta["name"], namespace=meta.get("namespace") if resource.namespaced else None)
        query = dict(self._write_params(), field_manager=field_manager)
        if force:
            query["force_conflicts"] = "true"
        for attempt in range(conflict_attempts):
            try:
                return self._request("patch", path, body=body, content_type="application/apply-patch+yaml", **query)
            except Exception as exc:  # pylint: disable=broad-except
                if api_status(exc) != 409 or attempt == conflict_attempts - 1 or not force or meta.get(
                        "resourceVersion"):
                    raise
        return None

    def json_patch(self, resource, name, namespace, operations, field_manager=None):
        """A JSON patch (RFC 6902), sent once: callers put a resourceVersion in it, so a 409 means a real conflict.
        Returns the resulting object; None when writes are skipped."""
        if self.skip_writes:
            return None
        path = resource.path(name=name, namespace=namespace if resource.namespaced else None)
        query = self._write_params()
        if field_manager:
            query["field_manager"] = field_manager
        return self._request("patch", path, body=operations, content_type="application/json-patch+json", **query)

    def delete(self, resource, name, namespace=None, propagation_policy="Background", grace_period_seconds=None):
        """Delete; returns the server's answer, or None when the object was already gone."""
        if self.skip_writes:
            return {}
        path = resource.path(name=name, namespace=namespace if resource.namespaced else None)
        query = self._write_params()
        if propagation_policy:
            query["propagation_policy"] = propagation_policy
        if grace_period_seconds is not None:
            query["grace_period_seconds"] = int(grace_period_seconds)
        try:
            return self._request("delete", path, **query)
        except Exception as exc:  # pylint: disable=broad-except
            if api_status(exc) == 404:
                return None
            raise

    def delete_collection(self, resource, namespace, label_selector, grace_period_seconds=None,
                          propagation_policy="Background"):
        """Delete every object matching label_selector in one request (deletecollection); returns the server's list of
        what it deleted. An empty selector is refused here: it would delete the whole collection."""
        if not label_selector:
            raise ClusterError("delete_collection needs a label selector")
        if self.skip_writes:
            return {"items": []}
        query = dict(self._write_params(), label_selector=label_selector)
        if grace_period_seconds is not None:
            query["grace_period_seconds"] = grace_period_seconds
        if propagation_policy:
            query["propagation_policy"] = propagation_policy
        return self._request("delete", resource.path(namespace=namespace if resource.namespaced else None), **query)

    def update(self, resource, name, namespace, mutate, conflict_attempts=5, current=None):
        """Read-modify-write with optimistic concurrency.

        ``mutate(obj)`` edits a copy in place and returns False when nothing needs to change (then
        no write happens). The PUT carries the resourceVersion that was read; on 409 Conflict the
        object is read again and ``mutate`` re-applied. ``current``, when the caller has just read
        the object, saves the first read. Returns (before, after, changed); ``after`` is None and
        ``before`` None when the object does not exist.
        """
        for attempt in range(conflict_attempts):
            if attempt or current is None:
                current = self.get(resource, name, namespace)
            if current is None:
                return None, None, False
            desired = copy.deepcopy(current)
            if mutate(desired) is False or desired == current:
                return current, current, False
            try:
                return current, self.replace(resource, desired), True
            except Exception as exc:  # pylint: disable=broad-except
                if api_status(exc) != 409 or attempt == conflict_attempts - 1:
                    raise
        raise ClusterError("unreachable")  # pragma: no cover

    # -- watch ---------------------------------------------------------------------------------

    def watch_stream(self, resource, resource_version, namespace=None, label_selector=None, field_selector=None,
                     server_timeout=60, read_timeout=None):
        """Open a watch and return the raw streaming response (urllib3), unread.

        ``server_timeout`` (whole seconds) makes the server end the stream; ``read_timeout`` bounds
        each socket read on the client, so a caller can wake up for a deadline without an event.
        """
        query = {
            "watch": "true",
            "allow_watch_bookmarks": "true",
            "timeout_seconds": max(1, int(server_timeout)),
        }
        if resource_version:
            query["resource_version"] = resource_version
        if label_selector:
            query["label_selector"] = label_selector
        if field_selector:
            query["field_selector"] = field_selector
        if read_timeout is not None:
            query["_request_timeout"] = (10, max(0.05, read_timeout))
        path = resource.path(namespace=namespace)
        return self.retry.call(self.dynamic.request, "get", path, serialize=False, **query)


def iter_stream_lines(response):
    """Yield decoded JSON events from a newline-delimited watch response as chunks arrive."""
    buffer = b""
    for chunk in response.stream(amt=None, decode_content=False):
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            line = line.strip()
            if line:
                yield json.loads(line.decode("utf-8"))
    if buffer.strip():
        yield json.loads(buffer.decode("utf-8"))


def close_stream(response):
    for action in ("close", "release_conn"):
        try:
            getattr(response, action)()
        except Exception:  # pylint: disable=broad-except
            pass
