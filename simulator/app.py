"""HTTP layer of the simulated API server (aiohttp): auth, request log, faults, discovery, CRUD, patch, watch."""

import asyncio
import copy
import json
import logging
import time
import uuid
from urllib.parse import unquote

import yaml
from aiohttp import web

from . import admission_policy, authorization, openapi, protobuf, rbac, scc, ssa, tables
from .controllers import network_operator, sriov
from .builtins import CRD_TYPE, INITIAL_NAMESPACES
from .errors import ApiError, bad_request, conflict, not_found, resource_ref
from .patching import json_patch, merge_patch, strategic_merge_patch
from .requestlog import WRITE_VERBS
from .selectors import Selector
from .store import now_rfc3339
from .validation import validate_object

log = logging.getLogger("simulator.http")

VERSION_INFO = {
    "major": "1", "minor": "31", "gitVersion": "v1.31.6+openshift", "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean", "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.22.9", "compiler": "gc",
    "platform": "linux/amd64",
}
PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json",
               "application/apply-patch+yaml")
TRUE = ("1", "true", "True", "TRUE")
INFO = web.RequestKey("info", object)
LOG_ENTRY = web.RequestKey("log_entry", dict)
LOGGED = web.RequestKey("logged", bool)
USER = web.RequestKey("user", object)
POLICY_WARNINGS = web.RequestKey("policy_warnings", list)
STATUS_RESET_ON_CREATE_KEEP = {("", "nodes")}


def _json(data, status=200, headers=None):
    return web.Response(body=json.dumps(data, separators=(",", ":")).encode(), status=status,
                        content_type="application/json", headers=headers)


def _status_response(err):
    headers = dict(err.headers)
    return _json(err.to_status(), err.code, headers)


def _bool(value):
    return value in TRUE


class RequestInfo:
    """What a request addresses, parsed from its path (as the apiserver's RequestInfo)."""

    __slots__ = ("is_resource", "group", "version", "plural", "namespace", "name", "subresource", "verb", "path",
                 "dry_run", "rtype")

    def __init__(self):
        self.is_resource = False
        self.group = self.version = self.plural = self.namespace = self.name = self.subresource = None
        self.verb = None
        self.dry_run = False
        self.rtype = None


def parse_request(request):
    info = RequestInfo()
    path = request.path
    info.path = path
    parts = [unquote(p) for p in path.strip("/").split("/") if p]
    method = request.method
    if len(parts) >= 2 and parts[0] == "api":
        info.group, info.version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        info.group, info.version, rest = parts[1], parts[2], parts[3:]
    else:
        info.verb = method.lower()
        return info
    if not rest:
        info.verb = "get"
        return info
    info.is_resource = True
    if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in ("status", "finalize"):
        info.namespace, rest = rest[1], rest[2:]
    info.plural = rest[0]
    if len(rest) >= 2:
        info.name = rest[1]
    if len(rest) >= 3:
        info.subresource = "/".join(rest[2:])
    if info.plural == "namespaces" and info.name:
        info.namespace = None
    q = request.query
    if method == "GET":
        if info.name:
            info.verb = "get"
        else:
            info.verb = "watch" if _bool(q.get("watch", "")) else "list"
    elif method == "POST":
        info.verb = "create"
    elif method == "PUT":
        info.verb = "update"
    elif method == "PATCH":
        info.verb = "patch"
    elif method == "DELETE":
        info.verb = "delete" if info.name else "deletecollection"
    else:
        info.verb = method.lower()
    info.dry_run = "dryRun" in q
    return info


class ApiServer:
    def __init__(self, sim):
        self.sim = sim
        self.store = sim.store
        self.watch_queues = set()
        self.shutting_down = False
        self.crd_created = {}
        self.authorizer = rbac.Authorizer(sim.store)
        self.openapi = openapi.OpenAPI()
        self.namespace_index = len(INITIAL_NAMESPACES)

    # ------------------------------------------------------------------ app
    def make_app(self):
        app = web.Application(middlewares=[self.middleware], client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self.dispatch)
        return app

    @web.middleware
    async def middleware(self, request, handler):
        start = time.perf_counter()
        prefix = self.sim.path_prefix
        if prefix and (request.path == prefix or request.path.startswith(prefix + "/")):
            raw = request.raw_path[len(prefix):]
            request = request.clone(rel_url=raw if raw.startswith("/") else "/" + raw)
        info = parse_request(request)
        request[INFO] = info
        entry = {
            "verb": info.verb, "method": request.method, "path": request.path, "query": dict(request.query),
            "group": info.group, "version": info.version, "plural": info.plural, "namespace": info.namespace,
            "name": info.name, "subresource": info.subresource, "dry_run": info.dry_run,
            "user_agent": request.headers.get("User-Agent", ""), "content_type": request.content_type
            if request.body_exists else None, "code": None, "latency_ms": None,
            "time": time.time(), "mutated": False,
        }
        request[LOG_ENTRY] = entry
        try:
            user = self._authenticate(request)
            if user is None:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            request[USER] = user
            entry["user"] = user.name
            if not request.path.startswith("/_sim/"):
                self._authorize(user, info)
                await self._inject_fault(request, info)
            response = await handler(request)
            for warning in request.get(POLICY_WARNINGS) or ():
                # dispatcher.go: a Warn action's text goes back as a warning header (warning.AddWarning, code 299).
                response.headers.add("Warning", '299 - "%s"' % warning.replace('"', '\\"'))
            if not request.path.startswith("/_sim/"):
                await self._inject_fault(request, info, after_handler=True)
        except ConnectionResetFault:
            entry["code"], entry["latency_ms"] = 0, round((time.perf_counter() - start) * 1000.0, 3)
            self.sim.requests.append(entry)
            if request.transport is not None:
                request.transport.abort()
            raise web.HTTPServiceUnavailable()  # never sent: the connection is gone
        except ApiError as err:
            response = _status_response(err)
        except web.HTTPException:
            raise
        except Exception as exc:  # a bug in the simulator must still look like an apiserver error
            log.exception("internal error on %s %s", request.method, request.path)
            response = _status_response(ApiError(500, "InternalError", "Internal error occurred: %s" % exc))
        if not request.get(LOGGED):
            entry["code"] = response.status
            entry["latency_ms"] = round((time.perf_counter() - start) * 1000.0, 3)
            if not request.path.startswith("/_sim/"):
                self.sim.requests.append(entry)
        else:  # a watch stream: logged when it opened, its latency is the stream's duration
            entry["latency_ms"] = round((time.perf_counter() - start) * 1000.0, 3)
        return response

    def _authenticate(self, request):
        """The user of the request's bearer token; anonymous for the health and version endpoints; else None."""
        if request.path in ("/version", "/healthz", "/readyz", "/livez") or request.path.startswith("/version/"):
            return rbac.User("system:anonymous", ("system:unauthenticated",))
        header = request.headers.get("Authorization", "")
        if not header.startswith("Bearer "):
            return None
        return self.sim.users.get(header[len("Bearer "):])

    def _authorize(self, user, info):
        """RBAC for resource requests (discovery stays open: system:discovery is bound to every authenticated user)."""
        if not info.is_resource or user.privileged:
            return
        verb = info.verb
        if self.authorizer.allowed(user, verb, info.group or "", info.plural, info.subresource, info.namespace, info.name):
            return
        reason = rbac.forbidden_reason(user, verb, info.group or "", info.plural, info.subresource, info.namespace)
        raise ApiError(403, "Forbidden", rbac.forbidden_message(info.group or "", info.plural, info.name, reason),
                       details={"name": info.name or "", "group": info.group or "", "kind": info.plural})

    def admit(self, request, rtype, info, obj, creating):
        """Admission of a create or update, after validation and before the store: the built-in plugins (mutating
        and validating), then the ValidatingAdmissionPolicies, which kube-apiserver runs in the validating phase
        after the mutating one (staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/plugin.go)."""
        obj = self._admit_kinds(request, rtype, info, obj, creating)
        old = None if creating else self.store.try_get(rtype, info.namespace, info.name)
        self.admit_policies(request, rtype, info, "CREATE" if creating else "UPDATE", obj, old)
        return obj

    def admit_policies(self, request, rtype, info, operation, obj, old):
        namespace = info.namespace if rtype.namespaced else None
        ns_object = self.store.try_get(self.store.find_type("", "v1", "namespaces"), None, namespace) if namespace else None
        name = info.name or ((obj or {}).get("metadata") or {}).get("name")
        warnings = admission_policy.evaluate(self.store, {
            "operation": operation, "rtype": rtype, "namespace": namespace, "name": name,
            "subresource": info.subresource, "object": obj, "old_object": old, "user": request.get(USER) or rbac.admin_user(),
            "dry_run": info.dry_run, "namespace_object": ns_object})
        if warnings:
            request.setdefault(POLICY_WARNINGS, []).extend(warnings)

    def _admit_kinds(self, request, rtype, info, obj, creating):
        """The built-in admission plugins of one kind (RBAC escalation, SCC, namespace, the operators' webhooks)."""
        user = request.get(USER) or rbac.admin_user()
        key = rtype.key
        if key == ("", "namespaces") and creating:
            self._annotate_namespace(obj)
        elif key in (("rbac.authorization.k8s.io", "rolebindings"), ("rbac.authorization.k8s.io", "clusterrolebindings")):
            reason = self.authorizer.check_binding(user, obj, info.namespace)
            if reason:
                raise ApiError(403, "Forbidden", rbac.forbidden_message(rtype.group, rtype.plural, obj["metadata"].get("name"), reason))
        elif key in (("rbac.authorization.k8s.io", "roles"), ("rbac.authorization.k8s.io", "clusterroles")):
            reason = self.authorizer.check_role(user, obj, info.namespace, rtype.plural)
            if reason:
                raise ApiError(403, "Forbidden", rbac.forbidden_message(rtype.group, rtype.plural, obj["metadata"].get("name"), reason))
        elif key == ("", "pods") and creating:
            return self._admit_pod(user, rtype, info, obj)
        elif key == ("mellanox.com", "nicclusterpolicies") and self._operator_running("nvidia-network-operator"):
            # OLM registers the CSV's validating webhook with the operator's deployment (controllers/network_operator.py).
            denial = network_operator.webhook_denial(obj)
            if denial:
                raise ApiError(422, "Invalid", denial)
        elif key in (("sriovnetwork.openshift.io", "sriovnetworknodepolicies"), ("sriovnetwork.openshift.io", "sriovoperatorconfigs"),
                     ("sriovnetwork.openshift.io", "sriovnetworkpoolconfigs")):
            namespace = self._sriov_webhook_namespace()
            unreachable = namespace and sriov.webhook_unreachable(rtype.plural, namespace, self._sriov_webhook_ready(namespace))
            if unreachable:
                raise ApiError(500, "InternalError", "Internal error occurred: %s" % unreachable, causes=[{"message": unreachable}])
            denial = namespace and sriov.webhook_denial(rtype.kind, obj, namespace, self._list_as_webhook)
            if denial:
                # The webhook's text is the Status reason; the API server prefixes the message (see sriov.WEBHOOK_NAME).
                raise ApiError(400, denial, 'admission webhook "%s" denied the request: %s' % (sriov.WEBHOOK_NAME, denial))
        return obj

    def _sriov_webhook_ready(self, namespace):
        """Whether a pod of the operator-webhook DaemonSet is ready (the Service has an endpoint)."""
        try:
            ds_type = self.store.find_type("apps", "v1", "daemonsets")
        except ApiError:
            return False
        ds = self.store.try_get(ds_type, namespace, sriov.WEBHOOK_DAEMONSET)
        return bool(ds) and int((ds.get("status") or {}).get("numberReady") or 0) > 0

    def _list_as_webhook(self, group, plural, namespace):
        rtype = self.store.find_type(group, "v1", plural)  # nodes and the SR-IOV kinds are all v1
        items, _rv = self.store.list(rtype, namespace if rtype.namespaced else None, None, None)
        return [i for i in items if not i["metadata"].get("deletionTimestamp")]

    def _sriov_webhook_namespace(self):
        """The SR-IOV operator's namespace while its webhook is registered (the operator runs and its `default`
        SriovOperatorConfig enables it), else None."""
        namespace = self._operator_running("sriov-network-operator")
        if not namespace:
            return None
        config_type = self.store.find_type("sriovnetwork.openshift.io", "v1", "sriovoperatorconfigs")
        config = self.store.try_get(config_type, namespace, "default")
        if config is None or config["metadata"].get("deletionTimestamp") or \
                not (config.get("spec") or {}).get("enableOperatorWebhook"):
            return None
        return namespace

    def _operator_running(self, package):
        """The namespace of the package's succeeded CSV: its webhooks are served (OLM installs them with the
        deployment); None while it is not."""
        try:
            csv_type = self.store.find_type("operators.coreos.com", "v1alpha1", "clusterserviceversions")
        except ApiError:
            return None
        csvs, _rv = self.store.list(csv_type, None, None, None)
        for csv in csvs:
            labels = csv["metadata"].get("labels") or {}
            if any(k.startswith("operators.coreos.com/%s." % package) for k in labels) and \
                    (csv.get("status") or {}).get("phase") == "Succeeded" and not csv["metadata"].get("deletionTimestamp"):
                return csv["metadata"]["namespace"]
        return None

    def apply_as_admin(self, path):
        """Create the objects of a YAML file (a List or documents) as the cluster administrator, before serving."""
        with open(path, encoding="utf-8") as handle:
            docs = [d for d in yaml.safe_load_all(handle) if d]
        items = [i for d in docs for i in (d.get("items") if d.get("kind") == "List" else [d])]
        for item in items:
            rtype = self.store.find_kind(item["apiVersion"], item["kind"])
            obj = copy.deepcopy(item)
            if rtype.key == ("", "namespaces"):
                self._annotate_namespace(obj)
            if self.store.try_get(rtype, obj["metadata"].get("namespace") if rtype.namespaced else None,
                                  obj["metadata"]["name"]) is None:
                self.store.create(rtype, obj)

    def _annotate_namespace(self, namespace):
        """The UID range and MCS level every namespace gets (scc.namespace_annotations), unless already given."""
        meta = namespace.setdefault("metadata", {})
        annotations = meta.get("annotations") or {}
        meta["annotations"] = annotations
        self.namespace_index += 1
        for name, value in scc.namespace_annotations(self.namespace_index).items():
            annotations.setdefault(name, value)

    def _admit_pod(self, user, rtype, info, pod):
        namespace = info.namespace
        ns = self.store.try_get(self.store.find_type("", "v1", "namespaces"), None, namespace)
        account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        # kubernetes plugin/pkg/admission/serviceaccount/admission.go: a pod whose service account does not exist is
        # Forbidden ("error looking up service account NS/NAME: ..."). "default" always exists: kube-controller-manager's
        # serviceaccounts controller creates it in every namespace (pkg/controller/serviceaccount), which the simulator
        # has no controller for.
        account_object = self.store.try_get(self.store.find_type("", "v1", "serviceaccounts"), namespace, account)
        if account != "default" and account_object is None:
            reason = 'error looking up service account %s/%s: serviceaccount "%s" not found' % (namespace, account, account)
            raise ApiError(403, "Forbidden", rbac.forbidden_message("", "pods", pod["metadata"].get("name"), reason))
        pod = scc.mount_service_account_token(copy.deepcopy(pod), account_object, scc.random_suffix())
        account_user = rbac.service_account_user(namespace, account)
        sccs, _rv = self.store.list(self.store.find_type(scc.SCC_GROUP, "v1", scc.SCC_PLURAL), None, None, None)

        def usable(constraint):
            for who in (user, account_user):
                if who.name in (constraint.get("users") or []) or set(who.groups) & set(constraint.get("groups") or []):
                    return True
                if self.authorizer.allowed(who, "use", scc.SCC_GROUP, scc.SCC_PLURAL, None, namespace,
                                           constraint["metadata"]["name"]):
                    return True
            return False

        admitted, refusal = scc.admit(sccs, pod, ns, usable)
        if refusal:
            raise ApiError(403, "Forbidden", rbac.forbidden_message("", "pods", pod["metadata"].get("name"), refusal))
        return admitted

    async def _inject_fault(self, request, info, after_handler=False):
        req = {"verb": info.verb, "group": info.group, "plural": info.plural, "namespace": info.namespace,
               "name": info.name, "subresource": info.subresource, "dry_run": info.dry_run, "path": request.path,
               "after_handler": after_handler}
        rule = self.sim.faults.pick(req)
        if rule is None:
            return
        if rule.latency_ms:
            await asyncio.sleep(rule.latency_ms / 1000.0)
        if rule.kill:
            self.sim._kill_now(rule.down_seconds)  # pylint: disable=protected-access
            raise ConnectionResetFault()
        if rule.reset:
            raise ConnectionResetFault()
        if rule.code:
            reason = rule.reason or _default_reason(rule.code)
            message = rule.message or _default_message(rule.code, info)
            headers = {}
            if rule.retry_after is not None or rule.code == 429:
                headers["Retry-After"] = str(rule.retry_after if rule.retry_after is not None else 1)
            details = {}
            if info.name:
                details["name"] = info.name
            if info.plural:
                details.update({"group": info.group, "kind": info.plural})
            if "Retry-After" in headers:
                details["retryAfterSeconds"] = int(headers["Retry-After"])
            raise ApiError(rule.code, reason, message, details=details, headers=headers)

    def version_info(self):
        """/version: the Kubernetes release of the profile's OpenShift version (4.20 -> 1.33), 1.31 without a profile."""
        profile = self.sim.profile
        if profile is None:
            return VERSION_INFO
        release = profile.cluster.kubernetes_version  # e.g. "1.33.5"
        major, minor = release.split(".")[:2]
        return dict(VERSION_INFO, major=major, minor=minor, gitVersion="v%s" % release)

    # ------------------------------------------------------------------ routing
    async def dispatch(self, request):
        path = request.path.rstrip("/") or "/"
        info = request[INFO]
        if path.startswith("/_sim/"):
            return await self.sim_endpoint(request, path)
        if request.method == "GET":
            if path == "/version":
                return _json(self.version_info())
            if path in ("/healthz", "/readyz", "/livez"):
                return web.Response(text="ok")
            if path == "/api":
                return _json({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": request.host}]})
            if path == "/apis":
                return _json(self.api_group_list())
            if path == "/":
                return _json({"paths": ["/api", "/api/v1", "/apis", "/openapi/v2", "/openapi/v3", "/version"]})
            if path == "/openapi/v2" or path == "/openapi/v3" or path.startswith("/openapi/v3/"):
                return self.openapi_response(request, path)
        parts = path.strip("/").split("/")
        if request.method == "GET" and parts[0] == "apis" and len(parts) == 2:
            group = self.api_group(parts[1])
            if group is None:
                raise _page_not_found()
            return _json(group)
        if request.method == "GET" and ((parts[0] == "api" and len(parts) == 2) or (parts[0] == "apis" and len(parts) == 3)):
            return _json(self.api_resource_list(info.group, info.version))
        if not info.is_resource:
            raise _page_not_found()
        return await self.resource(request, info)

    # ------------------------------------------------------------------ discovery
    def _served_types(self):
        return [t for t in self.store.resource_types() if t.served]

    def _groups(self):
        groups = {}
        for t in self._served_types():
            if t.group:
                groups.setdefault(t.group, []).append(t)
        return groups

    @staticmethod
    def _group_entry(group, types):
        versions = sorted({t.version for t in types}, key=_version_priority)
        pref = versions[0]
        return {"name": group, "versions": [{"groupVersion": "%s/%s" % (group, v), "version": v} for v in versions],
                "preferredVersion": {"groupVersion": "%s/%s" % (group, pref), "version": pref}}

    def api_group_list(self):
        groups = self._groups()
        return {"kind": "APIGroupList", "apiVersion": "v1",
                "groups": [self._group_entry(g, ts) for g, ts in sorted(groups.items())]}

    def api_group(self, group):
        types = self._groups().get(group)
        if not types:
            return None
        entry = self._group_entry(group, types)
        entry.update({"kind": "APIGroup", "apiVersion": "v1"})
        return entry

    def api_resource_list(self, group, version):
        types = [t for t in self._served_types() if t.group == group and t.version == version]
        if not types:
            raise _page_not_found()
        resources = []
        for t in sorted(types, key=lambda t: t.plural):
            entry = {"name": t.plural, "singularName": t.singular or t.kind.lower(), "namespaced": t.namespaced,
                     "kind": t.kind, "verbs": list(t.verbs)}
            if t.short_names:
                entry["shortNames"] = list(t.short_names)
            if t.categories:
                entry["categories"] = list(t.categories)
            resources.append(entry)
            for sub in t.subresources:
                if sub == "log":
                    resources.append({"name": "%s/log" % t.plural, "singularName": "", "namespaced": t.namespaced,
                                      "kind": t.kind, "verbs": ["get"]})
                else:
                    resources.append({"name": "%s/%s" % (t.plural, sub), "singularName": "", "namespaced": t.namespaced,
                                      "kind": t.kind, "verbs": ["get", "patch", "update"]})
        return {"kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": version if not group else "%s/%s" % (group, version), "resources": resources}

    def openapi_response(self, request, path):
        """/openapi/v2, the /openapi/v3 index and the per group-version documents (openapi.py)."""
        self.openapi.refresh(self._served_types(), self.sim.crds, self.version_info()["gitVersion"])
        if path == "/openapi/v3":
            return _json(self.openapi.index())
        if path == "/openapi/v2":
            if not openapi.accepts_json(request.headers.get("Accept")):
                raise ApiError(406, "NotAcceptable", "only the following media types are accepted: application/json")
            return web.Response(body=self.openapi.v2_bytes(), content_type="application/json")
        found = self.openapi.document_bytes(path[len("/openapi/v3/"):])
        if found is None:
            raise _page_not_found()
        raw, digest = found
        headers = {"Etag": '"%s"' % digest}
        # handler3.go: a request naming the current hash may be cached for good; one naming another hash is sent on.
        wanted = request.query.get("hash")
        if wanted and wanted != digest:
            raise web.HTTPMovedPermanently("%s%s?hash=%s" % (self.sim.path_prefix or "", path, digest))
        if wanted:
            headers["Cache-Control"] = "public, immutable"
        return web.Response(body=raw, content_type="application/json", headers=headers)

    # ------------------------------------------------------------------ simulator endpoints
    async def sim_endpoint(self, request, path):
        if path == "/_sim/requests":
            if request.method == "GET":
                since = int(request.query.get("since", "0"))
                return _json({"requests": self.sim.requests.entries(since), "total": len(self.sim.requests)})
            if request.method in ("DELETE", "POST"):
                self.sim.requests.reset()
                return _json({"reset": True})
        if path == "/_sim/faults":
            if request.method == "GET":
                return _json(self.sim.faults.snapshot())
            if request.method == "POST":
                body = await self._read_body(request)
                if isinstance(body, list):
                    body = {"rules": body}
                try:
                    self.sim.faults.update(body or {})
                except (TypeError, ValueError) as exc:
                    raise bad_request(str(exc)) from None
                return _json(self.sim.faults.snapshot())
            if request.method == "DELETE":
                self.sim.faults.clear()
                return _json(self.sim.faults.snapshot())
        if path == "/_sim/catalog" and request.method == "POST":
            body = await self._read_body(request) or {}
            controllers = getattr(self.sim, "controllers", None)
            if controllers is None:
                raise bad_request("this simulated cluster runs without operators (no catalog)")
            try:
                controllers.update_catalog(body.get("publish") or [], body.get("default_channels") or {})
            except (KeyError, TypeError, ValueError) as exc:
                raise bad_request("catalog update refused: %s" % exc) from None
            return _json({"updated": True})
        if path == "/_sim/info" and request.method == "GET":
            return _json({"url": self.sim.url, "resourceVersion": self.store.current_resource_version,
                          "config": self.sim.config})
        raise _page_not_found()

    # ------------------------------------------------------------------ resources
    async def resource(self, request, info):
        rtype = self.store.find_type(info.group, info.version, info.plural)
        info.rtype = rtype
        verb = info.verb
        if verb not in rtype.verbs and not (info.subresource and verb in ("get", "update", "patch")):
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource",
                           details={"name": info.name or "", "group": rtype.group, "kind": rtype.plural})
        if info.subresource:
            if info.subresource not in rtype.subresources:
                raise _unknown_resource()
            if info.subresource == "log":
                return await self.pod_log(request, rtype, info)
        if rtype.namespaced and not info.namespace and verb not in ("list", "watch", "deletecollection"):
            raise _unknown_resource()
        if not rtype.namespaced and info.namespace:
            raise _unknown_resource()
        dry_run = self._dry_run(request)
        if verb in WRITE_VERBS:
            await request.read()  # the body is cached; from here on the write runs without yielding the loop
            before = self.store.current_resource_version
            try:
                return await self._dispatch_verb(request, rtype, info, verb, dry_run)
            finally:
                request[LOG_ENTRY]["mutated"] = self.store.current_resource_version != before
        return await self._dispatch_verb(request, rtype, info, verb, dry_run)

    async def _dispatch_verb(self, request, rtype, info, verb, dry_run):
        if rtype.key == CRD_TYPE.key:
            return self.crd_read(request, info, rtype, dry_run)
        if rtype.group == authorization.GROUP:
            body = authorization.answer(self.authorizer, request.get(USER) or rbac.admin_user(), rtype.plural,
                                        info.namespace, await self._read_body(request))
            return _json(body, 201)
        if verb == "get":
            obj = self.store.get(rtype, info.namespace, info.name)
            table = self.table(request, rtype, [obj])
            return _json(table if table is not None else obj)
        if verb == "list":
            return self.list(request, rtype, info)
        if verb == "watch":
            return await self.watch(request, rtype, info)
        if verb == "create":
            return await self.create(request, rtype, info, dry_run)
        if verb == "update":
            return await self.update(request, rtype, info, dry_run)
        if verb == "patch":
            return await self.patch(request, rtype, info, dry_run)
        if verb == "delete":
            return await self.delete(request, rtype, info, dry_run)
        if verb == "deletecollection":
            return await self.delete_collection(request, rtype, info, dry_run)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    @staticmethod
    def _dry_run(request):
        values = request.query.getall("dryRun", [])
        for v in values:
            if v != "All":
                raise ApiError(400, "BadRequest", 'dryRun: Unsupported value: "%s": supported values: "All"' % v)
        return bool(values)

    async def _read_body(self, request, allow_yaml=True):
        raw = await request.read()
        if not raw:
            return None
        ctype = request.content_type or ""
        if ctype == protobuf.CONTENT_TYPE and request[INFO].rtype is not None and \
                protobuf.decodable(request[INFO].rtype.kind):
            return protobuf.decode(raw, request[INFO].rtype.kind)
        if ctype == protobuf.CONTENT_TYPE:
            # The simulator decodes no protobuf. It answers as kube-apiserver does for a kind without a protobuf
            # serializer (custom resources: apiextensions-apiserver's codec offers JSON and YAML only), with 415, on
            # which client-go sends the request again as JSON (staging/src/k8s.io/client-go/rest/request.go,
            # UnsupportedMediaType on the client's content configuration).
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted "
                           "media types include: application/json, application/yaml")
        try:
            if "yaml" in ctype and allow_yaml:
                return yaml.safe_load(raw.decode("utf-8"))
            return json.loads(raw)
        except (ValueError, yaml.YAMLError) as exc:
            raise ApiError(400, "BadRequest", "error decoding request body: %s" % exc) from None

    def _check_body(self, rtype, body, info, for_name=None):
        if not isinstance(body, dict):
            raise bad_request("the body of the request was in an unknown format - expected an object")
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if api_version and api_version != rtype.api_version:
            raise bad_request("the API version in the data (%s) does not match the expected API version (%s)"
                              % (api_version, rtype.api_version))
        if kind and kind != rtype.kind:
            raise bad_request("%s in version \"%s\" cannot be handled as a %s: the kind in the data (%s) does not match "
                              "the expected kind" % (kind, rtype.version, rtype.kind, kind))
        meta = body.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if rtype.namespaced:
            ns = meta.get("namespace")
            if ns and info.namespace and ns != info.namespace:
                raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
            meta["namespace"] = info.namespace
        if for_name is not None and meta.get("name") and meta["name"] != for_name:
            raise bad_request("the name of the object (%s) does not match the name on the URL (%s)"
                              % (meta["name"], for_name))
        if for_name is not None:
            meta["name"] = for_name
        body["apiVersion"], body["kind"] = rtype.api_version, rtype.kind
        return body

    @staticmethod
    def _field_manager(request, required=False):
        manager = request.query.get("fieldManager")
        if manager:
            return manager
        if required:
            return None
        ua = request.headers.get("User-Agent", "")
        return ua.split("/")[0] if ua else "unknown"

    @staticmethod
    def _warning_headers(warnings):
        if not warnings:
            return None
        from multidict import CIMultiDict

        headers = CIMultiDict()
        for w in warnings:
            headers.add("Warning", '299 - "%s"' % w.replace('"', '\\"'))
        return headers

    def list(self, request, rtype, info):
        q = request.query
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise ApiError(400, "BadRequest", 'limit: Invalid value: "%s": must be an integer' % q.get("limit")) from None
        items, rv, next_token, remaining = self.store.list_page(
            rtype, info.namespace, q.get("labelSelector"), q.get("fieldSelector"), limit=limit,
            continue_token=q.get("continue", ""), resource_version=q.get("resourceVersion", ""))
        meta = {"resourceVersion": rv}
        if next_token:  # ListMeta: continue, then remainingItemCount (apimachinery pkg/apis/meta/v1/types.go)
            meta["continue"] = next_token
            if remaining is not None:
                meta["remainingItemCount"] = remaining
        table = self.table(request, rtype, items, meta)
        if table is not None:
            return _json(table)
        body = {"kind": rtype.kind + "List", "apiVersion": rtype.api_version, "metadata": meta, "items": items}
        return _json(body)

    def table_printer(self, rtype):
        """(columns, row function) of rtype's server-side printing (tables.py)."""
        crd = None if rtype.builtin else self.sim.crds.get(rtype.key)
        return tables.printer_for(rtype, crd)

    def table(self, request, rtype, objects, list_meta=None, headers=True):
        """The Table of objects when the request asks for one (tables.wants_table), else None."""
        version = tables.wants_table(request.headers.get("Accept"))
        if version is None:
            return None
        try:
            return tables.to_table(objects, self.table_printer(rtype), version, list_meta,
                                   request.query.get("includeObject") or "Metadata", headers)
        except ValueError as exc:
            raise bad_request(str(exc)) from None

    async def create(self, request, rtype, info, dry_run):
        body = self._check_body(rtype, await self._read_body(request), info)
        if info.subresource:
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        if rtype.has_status and rtype.key not in STATUS_RESET_ON_CREATE_KEEP:
            body.pop("status", None)
        if rtype.key == ("", "pods"):
            body["status"] = {"phase": "Pending"}
        warnings = validate_object(rtype, body, request.query.get("fieldValidation"))
        body["metadata"].pop("managedFields", None)
        body = self.admit(request, rtype, info, body, creating=True)
        ssa.record_update(rtype, None, body, self._field_manager(request))
        obj = self.store.create(rtype, body, dry_run=dry_run)
        request[LOG_ENTRY]["created_name"] = obj["metadata"]["name"]  # generateName resolved: for the RBAC generator
        return _json(obj, 201, self._warning_headers(warnings))

    async def update(self, request, rtype, info, dry_run):
        body = self._check_body(rtype, await self._read_body(request), info, for_name=info.name)
        manager = self._field_manager(request)
        if info.subresource == "status":
            current = self.store.get(rtype, info.namespace, info.name)
            candidate = copy.deepcopy(current)
            if "status" in body:
                candidate["status"] = body["status"]
            else:
                candidate.pop("status", None)
            rv = body["metadata"].get("resourceVersion")
            warnings = validate_object(rtype, candidate, request.query.get("fieldValidation"), subresource="status")
            ssa.record_update(rtype, current, candidate, manager, part="status")
            obj = self._commit_status(rtype, info, current, candidate, rv, dry_run)
            return _json(obj, 200, self._warning_headers(warnings))
        warnings = validate_object(rtype, body, request.query.get("fieldValidation"))
        current = self.store.get(rtype, info.namespace, info.name)
        if rtype.has_status:
            body.pop("status", None)
            if "status" in current:
                body["status"] = copy.deepcopy(current["status"])
        body = self.admit(request, rtype, info, body, creating=False)
        ssa.record_update(rtype, current, body, manager)
        obj = self.store.update(rtype, body, dry_run=dry_run)
        return _json(obj, 200, self._warning_headers(warnings))

    def _commit_status(self, rtype, info, current, candidate, rv, dry_run):
        with self.store.lock:
            latest = self.store.get(rtype, info.namespace, info.name)
            if rv and rv != latest["metadata"]["resourceVersion"]:
                raise conflict(rtype, info.name)
            if not rv and latest["metadata"]["resourceVersion"] != current["metadata"]["resourceVersion"]:
                raise _RetryPatch()
            return self.store.update_status(rtype, info.namespace, info.name, candidate.get("status"), dry_run=dry_run,
                                            managed_fields=candidate["metadata"].get("managedFields"))

    async def patch(self, request, rtype, info, dry_run):
        ctype = (request.content_type or "").split(";")[0].strip()
        accepted = [t for t in PATCH_TYPES if rtype.builtin or "strategic" not in t]
        if ctype not in accepted:
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media "
                           "types include: %s" % ", ".join(accepted))
        raw = await request.read()
        try:
            patch = yaml.safe_load(raw.decode("utf-8")) if ctype == "application/apply-patch+yaml" else json.loads(raw)
        except (ValueError, yaml.YAMLError) as exc:
            raise ApiError(400, "BadRequest", "error decoding patch: %s" % exc) from None
        part = "status" if info.subresource == "status" else "main"
        q = request.query
        for _attempt in range(10):
            try:
                return self._patch_once(request, rtype, info, dry_run, ctype, patch, part, q)
            except _RetryPatch:
                continue
        raise ApiError(409, "Conflict", "Operation cannot be fulfilled on %s \"%s\": too many concurrent writes"
                       % (resource_ref(rtype), info.name))

    def _patch_once(self, request, rtype, info, dry_run, ctype, patch, part, q):
        current = self.store.try_get(rtype, info.namespace, info.name)
        if ctype == "application/apply-patch+yaml":
            manager = q.get("fieldManager")
            if not isinstance(patch, dict):
                raise bad_request("error decoding YAML: the applied configuration must be an object")
            patch = self._check_body(rtype, copy.deepcopy(patch), info, for_name=info.name)
            if current is not None and patch["metadata"].get("resourceVersion") and \
                    patch["metadata"]["resourceVersion"] != current["metadata"]["resourceVersion"]:
                raise conflict(rtype, info.name)
            patch["metadata"].pop("resourceVersion", None)
            new = ssa.apply(rtype, current, patch, manager, force=_bool(q.get("force", "")), part=part)
            if current is None:
                if part == "status":
                    raise not_found(rtype, info.name)
                new["apiVersion"], new["kind"] = rtype.api_version, rtype.kind
                new["metadata"]["name"] = info.name
                if rtype.namespaced:
                    new["metadata"]["namespace"] = info.namespace
                warnings = validate_object(rtype, new, q.get("fieldValidation"))
                # An apply that creates is authorized as a create as well (handlers/patch.go, createAuthorizerAttributes).
                self._authorize(request.get(USER) or rbac.admin_user(), _as_create(info))
                new = self.admit(request, rtype, info, new, creating=True)
                obj = self.store.create(rtype, new, dry_run=dry_run)
                request[LOG_ENTRY]["created_name"] = obj["metadata"]["name"]
                return _json(obj, 201, self._warning_headers(warnings))
        else:
            if current is None:
                raise not_found(rtype, info.name)
            base = copy.deepcopy(current)
            if ctype == "application/merge-patch+json":
                if not isinstance(patch, dict):
                    raise bad_request("json: cannot unmarshal into an object: the merge patch must be a JSON object")
                new = merge_patch(base, patch)
            elif ctype == "application/strategic-merge-patch+json":
                if not isinstance(patch, dict):
                    raise bad_request("the strategic merge patch must be a JSON object")
                new = strategic_merge_patch(base, patch)
            else:
                new = json_patch(base, patch)
            if not isinstance(new, dict):
                raise bad_request("the patch did not produce an object")
            meta = new.setdefault("metadata", {})
            if meta.get("name") != info.name or (rtype.namespaced and meta.get("namespace") != info.namespace):
                raise bad_request("metadata.name and metadata.namespace cannot be changed by a patch")
            ssa.record_update(rtype, current, new, self._field_manager(request), part=part)
        warnings = validate_object(rtype, new, q.get("fieldValidation"), subresource=info.subresource)
        rv = new["metadata"].get("resourceVersion")
        if part == "status":
            sent_rv = rv if rv != current["metadata"]["resourceVersion"] else None
            obj = self._commit_status(rtype, info, current, new, sent_rv, dry_run)
            return _json(obj, 200, self._warning_headers(warnings))
        with self.store.lock:
            latest = self.store.get(rtype, info.namespace, info.name)
            if latest["metadata"]["resourceVersion"] != current["metadata"]["resourceVersion"]:
                if rv and rv != current["metadata"]["resourceVersion"]:
                    raise conflict(rtype, info.name)
                raise _RetryPatch()
            if not rv:
                new["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            new = self.admit(request, rtype, info, new, creating=False)
            if rtype.has_status:
                new.pop("status", None)
                if "status" in current:
                    new["status"] = current["status"]
            obj = self.store.update(rtype, new, dry_run=dry_run)
        return _json(obj, 200, self._warning_headers(warnings))

    async def _delete_options(self, request):
        body = await self._read_body(request) if request.can_read_body else None
        opts = body if isinstance(body, dict) else {}
        policy = request.query.get("propagationPolicy") or opts.get("propagationPolicy")
        if _bool(request.query.get("orphanDependents", "")) or opts.get("orphanDependents"):
            policy = "Orphan"
        pre = opts.get("preconditions") or {}
        if "dryRun" in opts and opts["dryRun"]:
            return policy, pre, True
        return policy, pre, False

    async def delete(self, request, rtype, info, dry_run):
        policy, pre, body_dry_run = await self._delete_options(request)
        if body_dry_run:
            info.dry_run = True
            request[LOG_ENTRY]["dry_run"] = True
        # A delete is admitted with the stored object as oldObject and no object (cel/filter.go).
        self.admit_policies(request, rtype, info, "DELETE", None, self.store.get(rtype, info.namespace, info.name))
        obj = self.store.delete(rtype, info.namespace, info.name, dry_run=dry_run or body_dry_run,
                                propagation_policy=policy, resource_version=pre.get("resourceVersion"),
                                uid=pre.get("uid"))
        if obj["metadata"].get("deletionTimestamp") and self.store.try_get(rtype, info.namespace, info.name) is not None:
            return _json(obj, 200)
        if rtype.builtin and rtype.plural not in ("namespaces", "pods", "services"):
            # Built-in kinds without graceful deletion answer a finished delete with a Success Status.
            return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                          "details": {"name": info.name, "kind": rtype.plural, "uid": obj["metadata"]["uid"]}})
        return _json(obj, 200)

    async def delete_collection(self, request, rtype, info, dry_run):
        policy, _pre, body_dry_run = await self._delete_options(request)
        q = request.query
        items, rv = self.store.list(rtype, info.namespace, q.get("labelSelector"), q.get("fieldSelector"))
        deleted = []
        for obj in items:
            meta = obj["metadata"]
            try:
                deleted.append(self.store.delete(rtype, meta.get("namespace"), meta["name"],
                                                 dry_run=dry_run or body_dry_run, propagation_policy=policy))
            except ApiError as err:
                if err.code != 404:
                    raise
        return _json({"kind": rtype.kind + "List", "apiVersion": rtype.api_version,
                      "metadata": {"resourceVersion": self.store.current_resource_version}, "items": deleted})

    async def pod_log(self, request, rtype, info):
        if info.verb != "get":
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        pod = self.store.get(rtype, info.namespace, info.name)
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        container = request.query.get("container")
        if container and containers and container not in containers:
            raise bad_request("container %s is not valid for pod %s" % (container, info.name))
        if not container and len(containers) > 1:
            raise bad_request("a container name must be specified for pod %s, choose one of: [%s]"
                              % (info.name, " ".join(containers)))
        logs = self.sim.pod_logs
        text = logs.get((info.namespace, info.name, container)) if container else None
        if text is None:
            text = logs.get((info.namespace, info.name))
        if callable(text):
            text = text(container)
        if text is None:
            text = ""
        if isinstance(text, dict):
            text = text.get(container or (containers[0] if containers else ""), "")
        tail = request.query.get("tailLines")
        if tail:
            lines = text.splitlines(keepends=True)
            text = "".join(lines[-int(tail):]) if int(tail) > 0 else ""
        return web.Response(text=text, content_type="text/plain")

    # ------------------------------------------------------------------ CRDs (view of the loaded CRDs; delete unserves)
    def crd_read(self, request, info, rtype, dry_run=False):
        served = {(t.group, t.plural) for t in self._served_types()}
        items = []
        for key, crd in sorted(self.sim.crds.items()):
            if key not in served:
                continue
            obj = copy.deepcopy(crd)
            meta = obj.setdefault("metadata", {})
            uid, created = self.crd_created.setdefault(crd["metadata"]["name"],
                                                       (str(uuid.uuid5(uuid.NAMESPACE_URL, crd["metadata"]["name"])),
                                                        VERSION_INFO["buildDate"]))
            meta.update({"uid": uid, "creationTimestamp": created, "generation": 1,
                         "resourceVersion": self.store.current_resource_version})
            obj["status"] = {"acceptedNames": crd["spec"]["names"], "storedVersions":
                             [v["name"] for v in crd["spec"]["versions"] if v.get("storage")],
                             "conditions": [{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
                                            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"}]}
            obj["apiVersion"], obj["kind"] = rtype.api_version, rtype.kind
            items.append(obj)
        if info.verb == "get":
            for obj in items:
                if obj["metadata"]["name"] == info.name:
                    table = self.table(request, rtype, [obj])
                    return _json(table if table is not None else obj)
            raise not_found(rtype, info.name)
        if info.verb == "delete":
            obj = next((o for o in items if o["metadata"]["name"] == info.name), None)
            if obj is None:
                raise not_found(rtype, info.name)
            if not dry_run:
                self._remove_crd(obj)
            obj["metadata"]["deletionTimestamp"] = now_rfc3339()
            return _json(obj)
        if info.verb == "list":
            sel = Selector(request.query.get("labelSelector"), request.query.get("fieldSelector"), rtype.group,
                           rtype.plural)
            meta = {"resourceVersion": self.store.current_resource_version}
            selected = [i for i in items if sel.matches(i)]
            table = self.table(request, rtype, selected, meta)
            if table is not None:
                return _json(table)
            return _json({"kind": "CustomResourceDefinitionList", "apiVersion": rtype.api_version,
                          "metadata": meta, "items": selected})
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def _remove_crd(self, crd):
        """As the apiserver does for a deleted CRD: every object of the kind goes, then the kind leaves discovery."""
        group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
        for served in [t for t in self._served_types() if (t.group, t.plural) == (group, plural)]:
            objects, _rv = self.store.list(served)
            for obj in objects:
                try:
                    self.store.delete(served, obj["metadata"].get("namespace"), obj["metadata"]["name"])
                except ApiError as err:
                    if err.code != 404:
                        raise
        self.store.set_served(group, plural, False)

    # ------------------------------------------------------------------ watch
    async def watch(self, request, rtype, info):
        from .watch import serve_watch

        return await serve_watch(self, request, rtype, info)


class ConnectionResetFault(Exception):
    """A fault rule with reset: the connection is closed without an answer."""


class _RetryPatch(Exception):
    """The object changed between read and write of a patch without a precondition: retry like the apiserver."""


def _as_create(info):
    created = RequestInfo()
    for slot in RequestInfo.__slots__:
        setattr(created, slot, getattr(info, slot))
    created.verb, created.name = "create", None
    return created


def _version_priority(version):
    """Kubernetes version priority: GA > beta > alpha, higher numbers first."""
    import re

    m = re.match(r"^v(\d+)(?:(alpha|beta)(\d+))?$", version)
    if not m:
        return (3, 0, 0, version)
    major, stage, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -major, -minor, version)


def _default_reason(code):
    from .faults import REASONS

    return REASONS.get(code, "InternalError" if code >= 500 else "BadRequest")


def _default_message(code, info):
    if code == 429:
        return "Too many requests, please try again later."
    if code == 503:
        return "the server is currently unable to handle the request"
    if code == 409:
        return "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please apply your changes " \
               "to the latest version and try again" % (info.plural, info.name or "")
    if code == 404:
        return '%s "%s" not found' % (info.plural, info.name or "")
    return "Internal error occurred: injected fault"


def _page_not_found():
    return ApiError(404, "NotFound", "the server could not find the requested resource",
                    details={"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]})


def _unknown_resource():
    return _page_not_found()
