"""ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1): CEL checks that kube-apiserver runs on writes.

Written from kubernetes/kubernetes (release-1.30 and later, where the v1 API is served):

- staging/src/k8s.io/api/admissionregistration/v1/types.go: the policy (paramKind, matchConstraints, validations with
  expression / message / messageExpression / reason, failurePolicy defaulting to Fail, matchConditions, variables)
  and the binding (policyName, paramRef, matchResources, validationActions Deny / Warn / Audit);
- staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/matching/matching.go: a policy or binding applies when
  its namespaceSelector and objectSelector match, no excludeResourceRules rule does and a resourceRules rule does
  (operations, apiGroups, apiVersions, resources with subresources, scope, resourceNames); a binding without
  matchResources applies to everything its policy does (generic/policy_matcher.go BindingMatches);
- .../webhook/predicates/rules/rules.go (a rule), .../predicates/namespace/matcher.go (cluster-scoped objects other
  than Namespaces always pass the namespaceSelector) and .../predicates/object/matcher.go (either the new or the old
  object's labels may match the objectSelector);
- .../policy/validating/validator.go: matchConditions first (all true, else the policy does not apply; an error
  follows failurePolicy), then each validation; a false result denies with the messageExpression's string (trimmed;
  dropped when empty or multi-line), else the message, else "failed expression: <expression>"; an evaluation error
  denies unless failurePolicy is Ignore;
- .../policy/validating/dispatcher.go: Deny collects the decision, Warn adds the warning "Validation failed for
  ValidatingAdmissionPolicy '<policy>' with binding '<binding>': <message>", Audit only annotates the audit event;
  the first denial answers with admission.NewForbidden's text (staging/src/k8s.io/apiserver/pkg/admission/errors.go:
  `<resource>.<group> "<name>" is forbidden: ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied
  request: <message>`), whose reason is the validation's (Invalid by default) and whose code follows it
  (policy_decision.go reasonToCode: Invalid 422, Forbidden 403, Unauthorized 401, RequestEntityTooLarge 413);
- .../policy/generic/policy_dispatcher.go CollectParams: paramRef by name (and namespace) or selector; none found is
  "no params found for policy binding with Deny parameterNotFoundAction" unless the action is Allow;
- staging/src/k8s.io/apiserver/pkg/admission/plugin/cel/filter.go CreateAdmissionRequest and composition.go: the
  variables object, oldObject, request (kind, resource, subResource, name, namespace, operation, userInfo, dryRun),
  params, namespaceObject and variables (each evaluated once, in order; an error surfaces where it is used).

CEL itself is cel-python (module celpy), a maintained implementation of the CEL specification: has(), in,
all/exists, startsWith/endsWith/contains/matches and size() behave as in cel-go. Not simulated: type checking against
the OpenAPI schema (status.typeChecking), the cost budget, auditAnnotations, the authorizer variable and the
Kubernetes CEL library extensions (quantity, url, ip, lists/sets helpers, strings such as join). One difference of
cel-python 0.5.0: a comprehension over a boolean or a number raises instead of giving an error value, so
`true || flag.all(...)` fails here where cel-go gives true; such an expression is answered as an evaluation error
(failurePolicy), and the collection's policies guard comprehensions with the conditional operator instead.
"""

import threading

from .errors import ApiError

GROUP = "admissionregistration.k8s.io"
POLICIES = "validatingadmissionpolicies"
BINDINGS = "validatingadmissionpolicybindings"
# The v1 API is served from Kubernetes 1.30 (types.go: +k8s:prerelease-lifecycle-gen:introduced=1.30); OpenShift 4.16
# is Kubernetes 1.29, where only the beta API exists, off by default.
FIRST_KUBERNETES_MINOR = 30
# reasonToCode (staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/policy_decision.go)
REASON_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413, "Invalid": 422}
# A messageExpression result longer than this is dropped (staging/src/k8s.io/apiserver/pkg/apis/cel/config.go).
MAX_MESSAGE_BYTES = 5 * 1024

_compiled = {}
_compile_lock = threading.Lock()


class _Failure(Exception):
    """An expression that does not compile or evaluate (kube-apiserver's EvalError)."""


def _celpy():
    # Imported when a policy first applies, so that a simulator without policies never needs the library.
    import celpy  # pylint: disable=import-outside-toplevel

    return celpy


def _program(expression):
    with _compile_lock:
        program = _compiled.get(expression)
        if program is None:
            celpy = _celpy()
            environment = celpy.Environment()
            try:
                program = environment.program(environment.compile(expression))
            except Exception as exc:  # celpy raises CELParseError (and lark errors) for bad syntax
                raise _Failure("compilation failed: %s" % str(exc).strip().splitlines()[0]) from None
            _compiled[expression] = program
        return program


def _to_cel(value):
    return _celpy().json_to_cel(value)


def _to_python(value):
    celpy = _celpy()
    if isinstance(value, celpy.celtypes.BoolType):
        return bool(value)
    if isinstance(value, celpy.celtypes.StringType):
        return str(value)
    return value


def _evaluate(expression, activation):
    program = _program(expression)
    try:
        result = program.evaluate(activation)
    except Exception as exc:  # CELEvalError: no such key, type mismatch, division by zero...
        raise _Failure("expression '%s' resulted in error: %s" % (expression, _error_text(exc))) from None
    if isinstance(result, Exception):
        raise _Failure("expression '%s' resulted in error: %s" % (expression, _error_text(result)))
    return _to_python(result)


def _error_text(exc):
    args = getattr(exc, "args", ())
    return str(args[0]) if args else str(exc)


# ---------------------------------------------------------------------------------------------------------- matching
def _selector_matches(selector, labels):
    """metav1.LabelSelector: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist); empty matches all."""
    labels = labels or {}
    selector = selector or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for requirement in selector.get("matchExpressions") or []:
        key, operator, values = requirement.get("key"), requirement.get("operator"), requirement.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def _rule_matches(rule, attributes):
    """One NamedRuleWithOperations (webhook/predicates/rules/rules.go, matching.go for resourceNames)."""
    operations = rule.get("operations") or []
    if "*" not in operations and attributes["operation"] not in operations:
        return False
    rtype = attributes["rtype"]
    for field, value in (("apiGroups", rtype.group), ("apiVersions", rtype.version)):
        allowed = rule.get(field) or []
        if "*" not in allowed and value not in allowed:
            return False
    subresource = attributes.get("subresource") or ""
    found = False
    for entry in rule.get("resources") or []:
        resource, _slash, sub = entry.partition("/")
        if (resource in ("*", rtype.plural)) and (sub in ("*", subresource)):
            found = True
            break
    if not found:
        return False
    scope = rule.get("scope") or "*"
    if scope == "Cluster" and attributes.get("namespace"):
        return False
    if scope == "Namespaced" and not attributes.get("namespace"):
        return False
    names = rule.get("resourceNames") or []
    return not names or attributes.get("name") in names


def _resources_match(match_resources, attributes):
    """matching.go Matches: selectors, then excludeResourceRules, then resourceRules (none given: everything)."""
    if not _namespace_selected(match_resources.get("namespaceSelector"), attributes):
        return False
    new, old = attributes.get("object") or {}, attributes.get("old_object") or {}
    selector = match_resources.get("objectSelector")
    if not (_selector_matches(selector, (new.get("metadata") or {}).get("labels"))
            or (old and _selector_matches(selector, (old.get("metadata") or {}).get("labels")))):
        return False
    if any(_rule_matches(rule, attributes) for rule in match_resources.get("excludeResourceRules") or []):
        return False
    rules = match_resources.get("resourceRules") or []
    return not rules or any(_rule_matches(rule, attributes) for rule in rules)


def _namespace_selected(selector, attributes):
    rtype = attributes["rtype"]
    if rtype.key == ("", "namespaces"):
        obj = attributes.get("object") or attributes.get("old_object") or {}
        return _selector_matches(selector, (obj.get("metadata") or {}).get("labels"))
    if not attributes.get("namespace"):
        return True  # cluster-scoped: never exempted by a namespaceSelector
    namespace = attributes.get("namespace_object") or {}
    return _selector_matches(selector, (namespace.get("metadata") or {}).get("labels"))


# -------------------------------------------------------------------------------------------------------- evaluation
def admission_request(attributes):
    """The `request` variable (cel/filter.go CreateAdmissionRequest), as the unstructured AdmissionRequest."""
    rtype, user = attributes["rtype"], attributes["user"]
    kind = {"group": rtype.group, "version": rtype.version, "kind": rtype.kind}
    resource = {"group": rtype.group, "version": rtype.version, "resource": rtype.plural}
    request = {"kind": kind, "resource": resource, "requestKind": dict(kind), "requestResource": dict(resource),
               "name": attributes.get("name") or "", "namespace": attributes.get("namespace") or "",
               "operation": attributes["operation"],
               "userInfo": {"username": user.name, "groups": list(user.groups)},
               "dryRun": bool(attributes.get("dry_run"))}
    if attributes.get("subresource"):
        request["subResource"] = request["requestSubResource"] = attributes["subresource"]
    return request


def _namespace_variable(namespace):
    """cel/filter.go CreateNamespaceObject: the namespace's metadata (no managedFields), spec and status."""
    if not namespace:
        return None
    metadata = dict(namespace.get("metadata") or {})
    metadata.pop("managedFields", None)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata, "spec": namespace.get("spec") or {},
            "status": namespace.get("status") or {}}


def _activation(attributes, params):
    values = {"object": attributes.get("object"), "oldObject": attributes.get("old_object"),
              "request": admission_request(attributes), "params": params,
              "namespaceObject": _namespace_variable(attributes.get("namespace_object"))}
    return {key: _to_cel(value) for key, value in values.items()}


def _with_variables(policy, activation):
    """composition.go: each variable sees the ones before it; an error is kept and raised where it is used."""
    celpy = _celpy()
    variables = {}
    activation = dict(activation, variables=celpy.celtypes.MapType({}))
    for variable in (policy.get("spec") or {}).get("variables") or []:
        name = celpy.celtypes.StringType(variable["name"])
        try:
            value = _program(variable["expression"]).evaluate(activation)
        except Exception as exc:  # kept as CEL's error value (a compile error too): only an expression reading it fails
            value = celpy.CELEvalError(_error_text(exc))
        variables[name] = value
        activation = dict(activation, variables=celpy.celtypes.MapType(variables))
    return activation


def _decisions(policy, attributes, params):
    """validator.go Validate: [(denied, message, reason)] for one (policy, binding, params)."""
    spec = policy.get("spec") or {}
    fail = (spec.get("failurePolicy") or "Fail") != "Ignore"
    try:
        activation = _with_variables(policy, _activation(attributes, params))
        for condition in spec.get("matchConditions") or []:
            if _evaluate(condition["expression"], activation) is not True:
                return []
    except _Failure as failure:
        return [(True, str(failure), "Invalid")] if fail else []
    decisions = []
    for validation in spec.get("validations") or []:
        try:
            admitted = _evaluate(validation["expression"], activation) is True
        except _Failure as failure:
            if fail:
                decisions.append((True, str(failure), "Invalid"))
            continue
        if admitted:
            continue
        message = ""
        if validation.get("messageExpression"):
            try:
                result = _evaluate(validation["messageExpression"], activation)
            except _Failure:
                result = None  # logged by kube-apiserver, then the static message is used
            if isinstance(result, str):
                message = result.strip()
                if len(message.encode("utf-8")) > MAX_MESSAGE_BYTES or "\n" in message:
                    message = ""
        if not message and validation.get("message"):
            message = validation["message"].strip()
        if not message:
            message = "failed expression: %s" % validation["expression"].strip()
        decisions.append((True, message, validation.get("reason") or "Invalid"))
    return decisions


def _params(store, policy, binding, attributes):
    """CollectParams: [params] (None when the policy has no paramKind); raises _Failure for a configuration error."""
    param_kind = (policy.get("spec") or {}).get("paramKind")
    if not param_kind:
        return [None]
    ref = (binding.get("spec") or {}).get("paramRef") or {}
    try:
        rtype = store.find_kind(param_kind["apiVersion"], param_kind["kind"])
    except ApiError:
        raise _Failure("failed to configure policy: paramKind %s %s is not served" % (param_kind["apiVersion"], param_kind["kind"])) from None
    namespace = ref.get("namespace") or (attributes.get("namespace") if rtype.namespaced else None)
    if ref.get("name"):
        found = store.try_get(rtype, namespace if rtype.namespaced else None, ref["name"])
        items = [found] if found is not None else []
    else:
        listed, _rv = store.list(rtype, namespace if rtype.namespaced else None, None, None)
        items = [i for i in listed if _selector_matches(ref.get("selector"), (i.get("metadata") or {}).get("labels"))]
    if not items:
        if ref.get("parameterNotFoundAction") == "Allow":
            return []
        raise _Failure("failed to configure binding: no params found for policy binding with Deny parameterNotFoundAction")
    return items


def served(kubernetes_minor):
    return kubernetes_minor is None or kubernetes_minor >= FIRST_KUBERNETES_MINOR


def evaluate(store, attributes):
    """Run every policy bound to this request; return the warnings; raise the first denial as kube-apiserver does.

    attributes: operation (CREATE, UPDATE, DELETE), rtype, namespace, name, subresource, object, old_object, user,
    dry_run, namespace_object (the Namespace of a namespaced request)."""
    try:
        policy_type = store.find_type(GROUP, "v1", POLICIES)
        binding_type = store.find_type(GROUP, "v1", BINDINGS)
    except ApiError:
        return []
    if attributes["rtype"].key in (policy_type.key, binding_type.key):
        # Policies never apply to the admission configuration kinds themselves (webhook/predicates/rules/rules.go
        # IsExemptAdmissionConfigurationResource, called by the policy plugin before dispatching).
        return []
    policies, _rv = store.list(policy_type, None, None, None)
    if not policies:
        return []
    bindings, _rv = store.list(binding_type, None, None, None)
    denials, warnings = [], []
    for policy in sorted(policies, key=lambda p: p["metadata"]["name"]):
        spec = policy.get("spec") or {}
        if not _resources_match(spec.get("matchConstraints") or {}, attributes):
            continue
        for binding in sorted(bindings, key=lambda b: b["metadata"]["name"]):
            bspec = binding.get("spec") or {}
            if bspec.get("policyName") != policy["metadata"]["name"]:
                continue
            if bspec.get("matchResources") and not _resources_match(bspec["matchResources"], attributes):
                continue
            try:
                all_params = _params(store, policy, binding, attributes)
            except _Failure as failure:
                if (spec.get("failurePolicy") or "Fail") != "Ignore":
                    denials.append((policy, binding, str(failure), "Invalid"))
                continue
            for params in all_params:
                for denied, message, reason in _decisions(policy, attributes, params):
                    actions = bspec.get("validationActions") or []
                    if denied and "Deny" in actions:
                        denials.append((policy, binding, message, reason))
                    if denied and "Warn" in actions:
                        warnings.append("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s"
                                        % (policy["metadata"]["name"], binding["metadata"]["name"], message))
    if denials:
        policy, binding, message, reason = denials[0]
        raise denial_error(attributes, policy, binding, message, reason)
    return warnings


def denial_error(attributes, policy, binding, message, reason):
    text = "ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s" % (
        policy["metadata"]["name"], binding["metadata"]["name"], message)
    rtype = attributes["rtype"]
    obj = attributes.get("object") or {}
    # admission/errors.go extractResourceName: the request's name, else the object's name or generateName.
    name = attributes.get("name") or (obj.get("metadata") or {}).get("name") or \
        (obj.get("metadata") or {}).get("generateName") or "Unknown"
    resource = rtype.plural if not rtype.group else "%s.%s" % (rtype.plural, rtype.group)
    return ApiError(REASON_CODES.get(reason, 422), reason, '%s "%s" is forbidden: %s' % (resource, name, text),
                    causes=[{"message": text}], details={"name": name, "group": rtype.group, "kind": rtype.plural})
