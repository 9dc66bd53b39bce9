"""Fault injection: failing or slowing matching requests, dropping watches, and operator faults for controllers.

A rule (dict or FaultRule) matches requests by verb, group, plural (alias: resource), namespace, name and
subresource; any field left out matches everything. When it fires it answers `code` (with `reason`,
`message`, `retry_after` for 429/503) or, with code 0/None, only adds `latency_ms`; with `reset: true` the server
closes the connection without answering (a connection reset, as a restarting apiserver or load balancer does).
`count`: fires for the next N matching requests, then expires. `rate`: probability 0..1 per matching request
(seeded by FaultInjector(seed=...)). Watch rules: `drop_after_events` / `drop_after_seconds` close a matching
watch stream early (as a load balancer or apiserver restart does). `kill: true`: the API server process dies on the
matching request (connection reset, then refused; SimulatedCluster.kill), and comes back after `down_seconds` if given
(else at SimulatedCluster.restart()); with `after_handler` it dies after storing the write, before answering.

`operator_faults` is a free-form dict that the simulated operators (controllers) read, e.g.
{"csv_failure": {"nfd": "InstallComponentFailed"}}, or {"olm_resolution_hold": ["nvidia-gpu-operator"]}: OLM creates no
InstallPlan in those namespaces until the hold is lifted (a test control that makes "the plan does not exist yet"
certain instead of a race).
"""

import dataclasses
import json
import random
import threading

import yaml

REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
           409: "Conflict", 410: "Gone", 415: "UnsupportedMediaType", 422: "Invalid", 429: "TooManyRequests",
           500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout"}


@dataclasses.dataclass
class FaultRule:
    verb: str = None  # get, list, watch, create, update, patch, delete, deletecollection; or a list of them
    group: str = None
    plural: str = None
    namespace: str = None
    name: str = None
    subresource: str = None
    path: str = None  # exact request path (without the per-instance prefix), e.g. /version or /apis
    code: int = None
    reason: str = None
    message: str = None
    retry_after: int = None
    rate: float = None
    count: int = None
    latency_ms: float = 0
    drop_after_events: int = None
    drop_after_seconds: float = None
    reset: bool = False
    kill: bool = False
    down_seconds: float = None
    # Apply the fault after the request was handled (and a write stored): a 504 or reset whose request took effect,
    # as when kube-apiserver's request timeout fires after the storage write (k8s.io/apiserver filters/timeout.go).
    after_handler: bool = False
    include_dry_run: bool = True
    fired: int = 0

    @classmethod
    def from_dict(cls, data):
        data = dict(data)
        if "resource" in data and "plural" not in data:
            data["plural"] = data.pop("resource")
        data.pop("resource", None)
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - fields
        if unknown:
            raise ValueError("unknown fault rule field(s): %s" % ", ".join(sorted(unknown)))
        return cls(**data)

    def to_dict(self):
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    def matches(self, req):
        if self.path is not None and req.get("path") != self.path:
            return False
        for attr in ("group", "plural", "namespace", "name", "subresource"):
            want = getattr(self, attr)
            if want is not None and want != (req.get(attr) or ("" if attr in ("group",) else None)):
                return False
        if self.verb is not None:
            verbs = self.verb if isinstance(self.verb, (list, tuple)) else [self.verb]
            if req.get("verb") not in verbs:
                return False
        if not self.include_dry_run and req.get("dry_run"):
            return False
        return bool(self.after_handler) == bool(req.get("after_handler"))

    @property
    def expired(self):
        return self.count is not None and self.fired >= self.count


class FaultInjector:
    def __init__(self, rules=None, operator_faults=None, seed=None):
        self._lock = threading.Lock()
        self.rules = []
        self.operator_faults = dict(operator_faults or {})
        self.random = random.Random(seed)
        # Called with no argument after operator_faults change at run time, so the simulated operators
        # reconcile at once (a fault such as a failing component must show without waiting for an event).
        self.operator_faults_listeners = []
        for rule in rules or []:
            self.add(rule)

    @classmethod
    def from_spec(cls, spec, seed=None):
        """spec: None, a dict {rules: [...], operator_faults: {...}, seed: N}, a list of rules, or a file path."""
        if spec is None:
            return cls(seed=seed)
        if isinstance(spec, FaultInjector):
            return spec
        if isinstance(spec, str):
            with open(spec, encoding="utf-8") as fh:
                text = fh.read()
            spec = json.loads(text) if text.lstrip().startswith(("{", "[")) else yaml.safe_load(text)
        if isinstance(spec, list):
            spec = {"rules": spec}
        return cls(spec.get("rules"), spec.get("operator_faults"), spec.get("seed", seed))

    def add(self, rule=None, **kwargs):
        """Add a rule (FaultRule, dict, or keyword fields). Returns the FaultRule."""
        if rule is None:
            rule = kwargs
        if isinstance(rule, dict):
            rule = FaultRule.from_dict(rule)
        with self._lock:
            self.rules.append(rule)
        return rule

    def remove(self, rule):
        with self._lock:
            if rule in self.rules:
                self.rules.remove(rule)

    def clear(self, operator_faults=True):
        with self._lock:
            self.rules.clear()
            if operator_faults:
                self.operator_faults.clear()
        if operator_faults:
            self._operator_faults_changed()

    def _operator_faults_changed(self):
        for listener in list(self.operator_faults_listeners):
            listener()

    def seed(self, value):
        with self._lock:
            self.random.seed(value)

    def update(self, spec):
        """Apply a POST /_sim/faults body: {rules: [...], operator_faults: {...}, seed: N, replace: bool}."""
        if spec.get("replace"):
            self.clear(operator_faults="operator_faults" in spec)
        if "seed" in spec:
            self.seed(spec["seed"])
        for rule in spec.get("rules") or []:
            self.add(rule)
        if "operator_faults" in spec:
            with self._lock:
                self.operator_faults.update(spec["operator_faults"] or {})
            self._operator_faults_changed()

    def snapshot(self):
        with self._lock:
            return {"rules": [r.to_dict() for r in self.rules], "operator_faults": dict(self.operator_faults)}

    def pick(self, req):
        """The rule that fires for this request (counts it), or None. Watch-drop rules are picked separately."""
        with self._lock:
            for rule in self.rules:
                if rule.drop_after_events is not None or rule.drop_after_seconds is not None:
                    continue
                if rule.expired or not rule.matches(req):
                    continue
                if rule.rate is not None and self.random.random() >= rule.rate:
                    continue
                rule.fired += 1
                return rule
        return None

    def watch_drop(self, req):
        """(drop_after_events, drop_after_seconds) for a watch request, or None."""
        with self._lock:
            for rule in self.rules:
                if rule.drop_after_events is None and rule.drop_after_seconds is None:
                    continue
                if rule.expired or not rule.matches(dict(req, verb="watch")):
                    continue
                if rule.rate is not None and self.random.random() >= rule.rate:
                    continue
                rule.fired += 1
                return rule.drop_after_events, rule.drop_after_seconds
        return None
