"""Server-side printing: the meta.k8s.io/v1 Table a client gets when it asks for one
(`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, what `kubectl get` sends).

Written from Kubernetes v1.32:
- the request: staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go (transformObject / asTable: the media
  type parameters as=Table, g=meta.k8s.io, v=v1 or v1beta1; the `includeObject` query parameter None, Metadata (the
  default: a PartialObjectMetadata per row) or Object) and the Table's ListMeta (resourceVersion, continue);
  the server always prints the wide columns (printers.GenerateOptions{Wide: true}); the client hides those whose
  priority is above 0 unless `-o wide` (staging/src/k8s.io/cli-runtime/pkg/printers/tablegenerator.go);
- built-in kinds: pkg/printers/internalversion/printers.go (AddHandlers: column definitions, printNode, printPod,
  printNamespace, printConfigMap, printSecret, printServiceAccount, printService, printDeployment, printDaemonSet,
  printEvent, printRoleBinding, printClusterRoleBinding); kinds without a printer get
  staging/src/k8s.io/apiserver/pkg/registry/rest/table.go (defaultTableConvertor: Name and "Created At", RFC 3339);
- custom resources: staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor/
  tableconvertor.go (Name, then every additionalPrinterColumn: a JSONPath evaluated with missing keys allowed, a
  missing value is a null cell, strings printed as JSONPath prints them, integer/number/boolean as JSON values,
  date as the elapsed time), and apiserver/customresource_handler.go (a version without columns gets the default
  Age column on .metadata.creationTimestamp);
- elapsed times: staging/src/k8s.io/apimachinery/pkg/util/duration/duration.go (HumanDuration).
"""

import datetime
import json
import re

NAME_DESCRIPTION = ("Name must be unique within a namespace. Is required when creating resources, although some "
                    "resources may allow a client to request the generation of an appropriate name automatically. "
                    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
                    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
AGE_DESCRIPTION = ("CreationTimestamp is a timestamp representing the server time when this object was created. It "
                   "is not guaranteed to be set in happens-before order across separate operations. Clients may not "
                   "set this value. It is represented in RFC3339 form and is in UTC.")
TEMPLATE_CONTAINERS = "Names of each container in the template."
TEMPLATE_IMAGES = "Images referenced by each container in the template."


def wants_table(accept):
    """(group version of Table) when the Accept header asks for a Table, else None (response.go)."""
    for part in (accept or "").split(","):
        params = dict(p.strip().partition("=")[::2] for p in part.split(";")[1:])
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            return "meta.k8s.io/" + params["v"]
    return None


def human_duration(seconds):
    """duration.HumanDuration."""
    seconds = int(seconds)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return "%ds" % seconds
    minutes = seconds // 60
    if minutes < 10:
        rest = seconds % 60
        return "%dm" % minutes if rest == 0 else "%dm%ds" % (minutes, rest)
    if minutes < 180:
        return "%dm" % minutes
    hours = seconds // 3600
    if hours < 8:
        rest = minutes % 60
        return "%dh" % hours if rest == 0 else "%dh%dm" % (hours, rest)
    if hours < 48:
        return "%dh" % hours
    if hours < 24 * 8:
        rest = hours % 24
        return "%dd" % (hours // 24) if rest == 0 else "%dd%dh" % (hours // 24, rest)
    if hours < 24 * 365 * 2:
        return "%dd" % (hours // 24)
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        return "%dy" % (hours // 24 // 365) if rest == 0 else "%dy%dd" % (hours // 24 // 365, rest)
    return "%dy" % (hours // 24 // 365)


def _parse_time(text):
    try:
        return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    except (TypeError, ValueError):
        return None


def age(timestamp):
    """translateTimestampSince: <unknown> for a missing time."""
    when = _parse_time(timestamp)
    if when is None:
        return "<unknown>"
    return human_duration((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds())


def _col(name, ctype="string", description="", priority=0, fmt=""):
    return {"name": name, "type": ctype, "format": fmt, "description": description, "priority": priority}


NAME_COLUMN = _col("Name", fmt="name", description=NAME_DESCRIPTION)
AGE_COLUMN = _col("Age", description=AGE_DESCRIPTION)


def _meta(obj):
    return obj.get("metadata") or {}


def _format_labels(labels):
    """labels.FormatLabels: k=v joined by commas in key order, <none> when empty."""
    if not labels:
        return "<none>"
    return ",".join("%s=%s" % (k, labels[k]) for k in sorted(labels))


def _format_selector(selector):
    """metav1.FormatLabelSelector: <none> for none, matchLabels then matchExpressions."""
    if selector is None:
        return "<none>"
    parts = ["%s=%s" % (k, v) for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        op, values = expr.get("operator"), expr.get("values") or []
        if op == "In":
            parts.append("%s in (%s)" % (expr["key"], ",".join(values)))
        elif op == "NotIn":
            parts.append("%s notin (%s)" % (expr["key"], ",".join(values)))
        elif op == "Exists":
            parts.append(expr["key"])
        elif op == "DoesNotExist":
            parts.append("!" + expr["key"])
    text = ",".join(parts)
    return text if text else "<none>"


def _template_containers(obj):
    containers = ((((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")) or []
    return ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)


# ---------------------------------------------------------------------------------------------- built-in printers
NODE_COLUMNS = [NAME_COLUMN, _col("Status", description="The status of the node"),
                _col("Roles", description="The roles of the node"), AGE_COLUMN,
                _col("Version", description="Kubelet Version reported by the node."),
                _col("Internal-IP", priority=1, description="List of addresses reachable to the node."),
                _col("External-IP", priority=1, description="List of addresses reachable to the node."),
                _col("OS-Image", priority=1, description="OS Image reported by the node from /etc/os-release "
                     "(e.g. Debian GNU/Linux 7 (wheezy))."),
                _col("Kernel-Version", priority=1, description="Kernel Version reported by the node from 'uname -r' "
                     "(e.g. 3.16.0-0.bpo.4-amd64)."),
                _col("Container-Runtime", priority=1, description="ContainerRuntime Version reported by the node "
                     "through runtime remote API (e.g. containerd://1.4.2).")]


def _node_row(node):
    status = node.get("status") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    states = []
    if ready is None:
        states.append("Unknown")
    elif ready.get("status") == "True":
        states.append("Ready")
    else:
        states.append("NotReady")
    if (node.get("spec") or {}).get("unschedulable"):
        states.append("SchedulingDisabled")
    labels = _meta(node).get("labels") or {}
    prefix = "node-role.kubernetes.io/"
    roles = {k[len(prefix):] for k in labels if k.startswith(prefix) and k[len(prefix):]}
    if labels.get("kubernetes.io/role"):
        roles.add(labels["kubernetes.io/role"])
    roles = sorted(roles)
    info = status.get("nodeInfo") or {}

    def address(kind):
        return next((a.get("address") for a in status.get("addresses") or [] if a.get("type") == kind), "<none>")

    return [_meta(node).get("name"), ",".join(states), ",".join(roles) or "<none>",
            age(_meta(node).get("creationTimestamp")), info.get("kubeletVersion", ""), address("InternalIP"),
            address("ExternalIP"), info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


POD_COLUMNS = [NAME_COLUMN,
               _col("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
               _col("Status", description="The aggregate status of the containers in this pod."),
               _col("Restarts", description="The number of times the containers in this pod have been restarted "
                    "and when the last container in this pod has restarted."),
               AGE_COLUMN,
               _col("IP", priority=1, description="podIP is the IP address allocated to the pod."),
               _col("Node", priority=1, description="NodeName indicates in which node this pod is scheduled."),
               _col("Nominated Node", priority=1, description="nominatedNodeName is set only when this pod preempts "
                    "other pods on the node."),
               _col("Readiness Gates", priority=1, description="If specified, all readiness gates will be evaluated "
                    "for pod readiness.")]


def _pod_row(pod):
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or ""
    restarts = ready = 0
    initializing = False
    init_specs = spec.get("initContainers") or []
    for index, container in enumerate(status.get("initContainerStatuses") or []):
        restarts += int(container.get("restartCount") or 0)
        state = container.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated is not None and terminated.get("exitCode", 0) == 0:
            continue
        if terminated is not None:
            reason = "Init:" + terminated["reason"] if terminated.get("reason") else (
                "Init:Signal:%d" % terminated["signal"] if terminated.get("signal") else
                "Init:ExitCode:%d" % terminated.get("exitCode", 0))
        elif waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = "Init:%d/%d" % (index, len(init_specs))
        initializing = True
        break
    if not initializing:
        restarts = 0
        has_running = False
        for container in reversed(status.get("containerStatuses") or []):
            restarts += int(container.get("restartCount") or 0)
            state = container.get("state") or {}
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated is not None and terminated.get("reason"):
                reason = terminated["reason"]
            elif terminated is not None:
                reason = "Signal:%d" % terminated["signal"] if terminated.get("signal") else \
                    "ExitCode:%d" % terminated.get("exitCode", 0)
            elif container.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            conditions = status.get("conditions") or []
            reason = "Running" if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions) \
                else "NotReady"
    if _meta(pod).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    gates = spec.get("readinessGates") or []
    return [_meta(pod).get("name"), "%d/%d" % (ready, len(spec.get("containers") or [])), reason, str(restarts),
            age(_meta(pod).get("creationTimestamp")), status.get("podIP") or "<none>", spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>",
            "<none>" if not gates else "%d/%d" % (sum(
                1 for g in gates for c in status.get("conditions") or []
                if c.get("type") == g.get("conditionType") and c.get("status") == "True"), len(gates))]


NAMESPACE_COLUMNS = [NAME_COLUMN, _col("Status", description="The status of the namespace"), AGE_COLUMN]
CONFIGMAP_COLUMNS = [NAME_COLUMN, _col("Data", description="Data contains the configuration data."), AGE_COLUMN]
SECRET_COLUMNS = [NAME_COLUMN, _col("Type", description="Used to facilitate programmatic handling of secret data."),
                  _col("Data", description="Data contains the secret data."), AGE_COLUMN]
SERVICEACCOUNT_COLUMNS = [NAME_COLUMN, _col("Secrets", description="Secrets is a list of the secrets in the same "
                                            "namespace that pods running using this ServiceAccount are allowed to use."),
                          AGE_COLUMN]
SERVICE_COLUMNS = [NAME_COLUMN, _col("Type", description="type determines how the Service is exposed."),
                   _col("Cluster-IP", description="clusterIP is the IP address of the service."),
                   _col("External-IP", description="externalIPs is a list of IP addresses for which nodes in the "
                        "cluster will also accept traffic for this service."),
                   _col("Port(s)", description="The list of ports that are exposed by this service."), AGE_COLUMN,
                   _col("Selector", priority=1, description="Route service traffic to pods with label keys and "
                        "values matching this selector.")]
DEPLOYMENT_COLUMNS = [NAME_COLUMN, _col("Ready", description="Number of the pod with ready state"),
                      _col("Up-to-date", "integer", "Total number of non-terminated pods targeted by this deployment "
                           "that have the desired template spec."),
                      _col("Available", "integer", "Total number of available pods (ready for at least "
                           "minReadySeconds) targeted by this deployment."), AGE_COLUMN,
                      _col("Containers", priority=1, description=TEMPLATE_CONTAINERS),
                      _col("Images", priority=1, description=TEMPLATE_IMAGES),
                      _col("Selector", priority=1, description="Label selector for pods.")]
DAEMONSET_COLUMNS = [NAME_COLUMN,
                     _col("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
                     _col("Current", "integer", "The number of nodes that are running at least 1 daemon pod and are "
                          "supposed to run the daemon pod."),
                     _col("Ready", "integer", "numberReady is the number of nodes that should be running the daemon "
                          "pod and have one or more of the daemon pod running with a Ready Condition."),
                     _col("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod"),
                     _col("Available", "integer", "The number of nodes that should be running the daemon pod and have "
                          "one or more of the daemon pod running and available (ready for at least "
                          "spec.minReadySeconds)"),
                     _col("Node Selector", description="NodeSelector is a selector which must be true for the pod to "
                          "fit on a node."), AGE_COLUMN,
                     _col("Containers", priority=1, description=TEMPLATE_CONTAINERS),
                     _col("Images", priority=1, description=TEMPLATE_IMAGES),
                     _col("Selector", priority=1, description="A label query over pods that are managed by the "
                          "daemon set.")]
BINDING_COLUMNS = [NAME_COLUMN, _col("Role", description="RoleRef can only reference the current namespace."),
                   AGE_COLUMN,
                   _col("Users", priority=1, description="Users in the roleBinding"),
                   _col("Groups", priority=1, description="Groups in the roleBinding"),
                   _col("ServiceAccounts", priority=1, description="ServiceAccounts in the roleBinding")]
EVENT_COLUMNS = [_col("Last Seen", description="The time at which the most recent occurrence of this event was "
                      "recorded."),
                 _col("Type", description="Type of this event (Normal, Warning), new types could be added in the "
                      "future"),
                 _col("Reason", description="This should be a short, machine understandable string that gives the "
                      "reason for the transition into the object's current status."),
                 _col("Object", description="The object that this event is about."),
                 _col("Subobject", priority=1, description="If referring to a piece of an object instead of an entire "
                      "object, this string should contain a valid JSON/Go field access statement."),
                 _col("Source", priority=1, description="The component reporting this event. Should be a short "
                      "machine understandable string."),
                 _col("Message", description="A human-readable description of the status of this operation."),
                 _col("First Seen", priority=1, description="The time at which the event was first recorded."),
                 _col("Count", priority=1, description="The number of times this event has occurred."),
                 _col("Name", priority=1, fmt="name", description=NAME_DESCRIPTION)]
DEFAULT_COLUMNS = [NAME_COLUMN, _col("Created At", "date", AGE_DESCRIPTION)]


def _ports(service):
    ports = (service.get("spec") or {}).get("ports") or []
    if not ports:
        return "<none>"
    out = []
    for port in ports:
        text = "%s/%s" % (port.get("port"), port.get("protocol") or "TCP")
        if port.get("nodePort"):
            text = "%s:%s/%s" % (port.get("port"), port["nodePort"], port.get("protocol") or "TCP")
        out.append(text)
    return ",".join(out)


def _service_row(svc):
    spec = svc.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    external = ",".join(spec.get("externalIPs") or [])
    if kind == "ExternalName":
        external = spec.get("externalName") or ""
    elif kind == "LoadBalancer":
        ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        external = ",".join([i.get("ip") or i.get("hostname") or "" for i in ingress] + (spec.get("externalIPs") or [])) \
            or "<pending>"
    return [_meta(svc).get("name"), kind, spec.get("clusterIP") or "<none>", external or "<none>", _ports(svc),
            age(_meta(svc).get("creationTimestamp")), _format_labels(spec.get("selector"))]


def _deployment_row(dep):
    spec, status = dep.get("spec") or {}, dep.get("status") or {}
    containers, images = _template_containers(dep)
    replicas = spec.get("replicas", 1)
    return [_meta(dep).get("name"), "%d/%d" % (status.get("readyReplicas") or 0, replicas),
            status.get("updatedReplicas") or 0, status.get("availableReplicas") or 0,
            age(_meta(dep).get("creationTimestamp")), containers, images, _format_selector(spec.get("selector"))]


def _daemonset_row(ds):
    spec, status = ds.get("spec") or {}, ds.get("status") or {}
    containers, images = _template_containers(ds)
    node_selector = (((spec.get("template") or {}).get("spec")) or {}).get("nodeSelector")
    return [_meta(ds).get("name"), status.get("desiredNumberScheduled") or 0, status.get("currentNumberScheduled") or 0,
            status.get("numberReady") or 0, status.get("updatedNumberScheduled") or 0, status.get("numberAvailable") or 0,
            _format_labels(node_selector), age(_meta(ds).get("creationTimestamp")), containers, images,
            _format_selector(spec.get("selector"))]


def _binding_row(binding):
    ref = binding.get("roleRef") or {}
    subjects = binding.get("subjects") or []

    def names(kind):
        return ",".join(("%s/%s" % (s.get("namespace", ""), s.get("name")) if kind == "ServiceAccount" else s.get("name"))
                        for s in subjects if s.get("kind") == kind)

    return [_meta(binding).get("name"), "%s/%s" % (ref.get("kind"), ref.get("name")),
            age(_meta(binding).get("creationTimestamp")), names("User"), names("Group"), names("ServiceAccount")]


def _event_row(event):
    involved = event.get("involvedObject") or {}
    first = event.get("firstTimestamp") or event.get("eventTime") or _meta(event).get("creationTimestamp")
    last = event.get("lastTimestamp") or first
    source = event.get("source") or {}
    source_text = source.get("component") or event.get("reportingComponent") or ""
    if source.get("host"):
        source_text = "%s, %s" % (source_text, source["host"])
    return [age(last), event.get("type", ""), event.get("reason", ""),
            "%s/%s" % (str(involved.get("kind", "")).lower(), involved.get("name", "")),
            involved.get("fieldPath", ""), source_text, (event.get("message") or "").strip(), age(first),
            int(event.get("count") or 1), _meta(event).get("name")]


def _named(obj, *cells):
    """Name, the cells, then Age: the row of the printers whose columns are only that."""
    return [_meta(obj).get("name")] + list(cells) + [age(_meta(obj).get("creationTimestamp"))]


BUILTIN_PRINTERS = {
    ("", "nodes"): (NODE_COLUMNS, _node_row),
    ("", "pods"): (POD_COLUMNS, _pod_row),
    ("", "namespaces"): (NAMESPACE_COLUMNS, lambda o: _named(o, (o.get("status") or {}).get("phase", ""))),
    ("", "configmaps"): (CONFIGMAP_COLUMNS, lambda o: _named(o, len(o.get("data") or {}) + len(o.get("binaryData") or {}))),
    ("", "secrets"): (SECRET_COLUMNS, lambda o: _named(o, o.get("type", ""), len(o.get("data") or {}))),
    ("", "serviceaccounts"): (SERVICEACCOUNT_COLUMNS, lambda o: _named(o, len(o.get("secrets") or []))),
    ("", "services"): (SERVICE_COLUMNS, _service_row),
    ("", "events"): (EVENT_COLUMNS, _event_row),
    ("apps", "deployments"): (DEPLOYMENT_COLUMNS, _deployment_row),
    ("apps", "daemonsets"): (DAEMONSET_COLUMNS, _daemonset_row),
    ("rbac.authorization.k8s.io", "rolebindings"): (BINDING_COLUMNS, _binding_row),
    ("rbac.authorization.k8s.io", "clusterrolebindings"): (BINDING_COLUMNS, _binding_row),
}


def _default_row(obj):
    return [_meta(obj).get("name"), _meta(obj).get("creationTimestamp")]


# ---------------------------------------------------------------------------------------------- custom resources
_STEP = re.compile(r"""\.((?:\\.|[^.\[\\])+)|\[(\d+)\]|\[\?\(@\.((?:\\.|[^=!\]])+?)\s*(==|!=)\s*["']([^"']*)["']\)\]""")


def parse_jsonpath(path):
    """The steps of the JSONPath subset printer columns use: .field (dots escaped with \\), [n], [?(@.f=="v")].
    ValueError on anything else (the apiserver refuses such a CRD column)."""
    steps, pos = [], 0
    while pos < len(path):
        found = _STEP.match(path, pos)
        if not found:
            raise ValueError("unsupported JSONPath %r at %d" % (path, pos))
        field, index, filter_field, op, value = found.groups()
        if field is not None:
            steps.append(("field", field.replace("\\.", ".")))
        elif index is not None:
            steps.append(("index", int(index)))
        else:
            steps.append(("filter", filter_field.replace("\\.", "."), op, value))
        pos = found.end()
    return steps


def evaluate_jsonpath(steps, obj):
    """Every value the path reaches (client-go jsonpath with AllowMissingKeys: missing keys yield nothing)."""
    current = [obj]
    for step in steps:
        after = []
        for value in current:
            if step[0] == "field":
                if isinstance(value, dict) and step[1] in value:
                    after.append(value[step[1]])
            elif step[0] == "index":
                if isinstance(value, list) and -len(value) <= step[1] < len(value):
                    after.append(value[step[1]])
            else:
                _kind, field, op, wanted = step
                for item in value if isinstance(value, list) else []:
                    got = item.get(field) if isinstance(item, dict) else None
                    if got is None:
                        continue
                    same = str(got) == wanted
                    if same == (op == "=="):
                        after.append(item)
        current = after
    return current


def _jsonpath_text(value):
    """How client-go's JSONPath prints one value: strings bare, others as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, separators=(",", ":"))


def _cell(ctype, value):
    """tableconvertor.go cellForJSONValue."""
    if ctype == "integer":
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if ctype == "number":
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if ctype == "boolean":
        return value if isinstance(value, bool) else None
    if ctype == "date":
        return age(value) if isinstance(value, str) and _parse_time(value) else None
    return value if isinstance(value, str) else None


def crd_printer(crd, version):
    """(columns, row function) for a custom resource version, from its additionalPrinterColumns."""
    spec_version = next((v for v in (crd.get("spec") or {}).get("versions") or [] if v.get("name") == version), {})
    wanted = spec_version.get("additionalPrinterColumns")
    if not wanted:
        wanted = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]
    columns, paths = [NAME_COLUMN], []
    for col in wanted:
        columns.append(_col(col["name"], col.get("type", "string"), col.get("description") or
                            "Custom resource definition column (in JSONPath format): %s" % col["jsonPath"],
                            int(col.get("priority") or 0), col.get("format", "")))
        paths.append((col.get("type", "string"), parse_jsonpath(col["jsonPath"])))

    def row(obj):
        cells = [_meta(obj).get("name")]
        for ctype, steps in paths:
            found = evaluate_jsonpath(steps, obj)
            if not found:
                cells.append(None)
            elif ctype == "string":
                cells.append(_jsonpath_text(found[0]))
            else:
                cells.append(_cell(ctype, found[0]))
        return cells

    return columns, row


def printer_for(rtype, crd=None):
    if crd is not None:
        return crd_printer(crd, rtype.version)
    return BUILTIN_PRINTERS.get(rtype.key, (DEFAULT_COLUMNS, _default_row))


def _row_object(obj, include, table_version):
    if include == "None":
        return None
    if include == "Object":
        return obj
    meta = dict(_meta(obj))
    meta.pop("managedFields", None)  # PartialObjectMetadata as the metadata-only transform gives it
    return {"kind": "PartialObjectMetadata", "apiVersion": table_version, "metadata": meta}


def to_table(objects, printer, table_version, list_meta=None, include="Metadata", headers=True):
    """A Table of objects; list_meta is the ListMeta of a list (resourceVersion, continue, remainingItemCount)."""
    if include not in ("None", "Metadata", "Object"):
        raise ValueError('includeObject: Unsupported value: "%s": supported values: "None", "Metadata", "Object"'
                         % include)
    columns, row = printer
    rows = []
    for obj in objects:
        entry = {"cells": row(obj)}
        # printPod marks finished pods (RowCompleted), which the client hides without --show-all.
        if obj.get("kind") == "Pod" and (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            phase = obj["status"]["phase"]
            entry["conditions"] = [{"type": "Completed", "status": "True", "reason": phase,
                                    "message": "The pod has completed successfully." if phase == "Succeeded"
                                    else "The pod failed."}]
        embedded = _row_object(obj, include, table_version)
        if embedded is not None:
            entry["object"] = embedded
        rows.append(entry)
    table = {"kind": "Table", "apiVersion": table_version, "metadata": dict(list_meta or {}), "rows": rows}
    if headers:
        table["columnDefinitions"] = columns
    return table
