# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Readiness waits given as data: the entries of the roles' ``<role>_waits`` variables.

The same entries feed resource_wait (one wait), apply_manifests (waits after applying, in the same
task) and plan_status (whether they already hold), so their options are defined once here.
"""


import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.verify import pod_states
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import (
    ClusterError,
    api_message,
    api_status,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.conditions import (
    Condition,
    CountCondition,
    ConditionError,
    ConditionFailed,
    compile_expression,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waiter import WaitTimeout, wait_for

# Suboptions of a wait entry (timeout and failure_grace_period get their defaults in run_wait, so that
# plan_status, which ignores them, does not show defaults it does not use). resource_wait adds api_missing_ok.
WAIT_OPTIONS = dict(
    title=dict(type="str"),
    api_version=dict(type="str", required=True),
    kind=dict(type="str", required=True),
    name=dict(type="str"),
    namespace=dict(type="str"),
    label_selectors=dict(type="list", elements="str", default=[]),
    condition=dict(type="str"),
    count=dict(type="list", elements="dict", options=dict(
        each=dict(type="str", required=True),
        at_least=dict(type="int", default=1),
        all=dict(type="bool", default=False),
        at_most=dict(type="int"),
    )),
    each_failure_condition=dict(type="str"),
    each_failure_message=dict(type="str"),
    each_progress=dict(type="str"),
    each_busy=dict(type="str"),
    return_resources=dict(type="bool"),
    failure_condition=dict(type="str"),
    failure_message=dict(type="str"),
    progress=dict(type="str"),
    timeout=dict(type="int"),
    failure_grace_period=dict(type="int"),
    operand_pods=dict(type="dict", options=dict(
        namespace=dict(type="str", required=True),
        label_selectors=dict(type="list", elements="str", default=[]),
        images=dict(type="list", elements="str", default=[]),
    )),
)
DEFAULT_TIMEOUT = 600
# Lines of a failing operand container's log quoted in the failure.
OPERAND_LOG_LINES = 5
# Names of not yet counted objects a counted wait reports (a sample, not the whole selection).
SAMPLE_NAMES = 20
# The options of a wait entry that are JMESPath expressions.
EXPRESSIONS = ("condition", "failure_condition", "failure_message", "progress", "each_failure_condition",
               "each_failure_message", "each_progress", "each_busy")
# The options over one object of a counted wait, and the list options they stand for.
EACH_OPTIONS = (("each_failure_condition", "failure_condition"), ("each_failure_message", "failure_message"),
                ("each_progress", "progress"))


class WaitFailed(ClusterError):
    """A wait ended without its condition: failure condition, timeout, unserved kind or bad expression.
    ``details`` holds what the task returns beside the message (resources, progress, elapsed)."""

    def __init__(self, msg, **details):
        super().__init__(msg)
        self.details = details


def describe_wait(spec):
    """The subject of the wait's messages, as troubleshooting.md lists them: kind and name, or "objects"."""
    return "%s %s" % (spec["kind"], spec.get("name") or "objects")


def wait_title(spec):
    """What results call the wait: its title, else its subject."""
    return spec.get("title") or describe_wait(spec)


def compile_condition(spec, option="", clock=time.monotonic):
    """The Condition (a CountCondition for a ``count`` entry) of a wait entry; ConditionError names ``option`` +
    the expression's option when one does not compile (for example ``waits[2].condition``)."""
    if spec.get("count"):
        return CountCondition(
            [(compile_expression("%scount[%d].each" % (option, index), counter["each"]),
              1 if counter.get("at_least") is None else counter["at_least"], counter.get("all"), counter.get("at_most"))
             for index, counter in enumerate(spec["count"])],
            label=wait_title(spec),
            failure=compile_expression(option + "each_failure_condition", spec.get("each_failure_condition")),
            failure_message=compile_expression(option + "each_failure_message", spec.get("each_failure_message")),
            progress=compile_expression(option + "each_progress", spec.get("each_progress")),
            grace=spec.get("failure_grace_period") or 0,
            keep_objects=bool(spec.get("return_resources")),
            clock=clock,
            busy=compile_expression(option + "each_busy", spec.get("each_busy")))
    return Condition(
        success=compile_expression(option + "condition", spec["condition"]),
        failure=compile_expression(option + "failure_condition", spec.get("failure_condition")),
        failure_message=compile_expression(option + "failure_message", spec.get("failure_message")),
        progress=compile_expression(option + "progress", spec.get("progress")),
        grace=spec.get("failure_grace_period") or 0,
        single=bool(spec.get("name")),
        clock=clock,
    )


def wait_problems(waits, option="waits"):
    """One sentence per expression of ``waits`` that does not compile, or entry that has not exactly one of
    condition and count, naming its option; checked before any write so that a typo in a condition does not
    leave applied objects behind a failed task."""
    problems = []
    for index, spec in enumerate(waits):
        where = "%s[%d]" % (option, index)
        problems.extend(_entry_problems(spec, where))
        for key in EXPRESSIONS:
            try:
                compile_expression("%s.%s" % (where, key), spec.get(key))
            except ConditionError as exc:
                problems.append(str(exc))
        for number, counter in enumerate(spec.get("count") or []):
            try:
                compile_expression("%s.count[%d].each" % (where, number), counter.get("each"))
            except ConditionError as exc:
                problems.append(str(exc))
    return problems


def _entry_problems(spec, where):
    if bool(spec.get("condition")) == bool(spec.get("count")):
        return ["%s needs exactly one of condition (over the listed objects) and count (per object)" % where]
    if spec.get("count"):
        unused = [key for key in ("name", "failure_condition", "failure_message", "progress") if spec.get(key)]
        if unused:
            return ["%s.count counts many objects, one event at a time; drop %s" % (where, ", ".join(unused))]
        if any((counter.get("at_least") or 0) < 0 for counter in spec["count"]):
            return ["%s.count: at_least must be 0 or more" % where]
        for index, counter in enumerate(spec["count"]):
            at_least = 1 if counter.get("at_least") is None else counter["at_least"]
            if counter.get("at_most") is not None and counter["at_most"] < at_least:
                return ["%s.count[%d]: at_most (%d) is below at_least (%d); give at_least: 0 for a maximum alone" % (
                    where, index, counter["at_most"], at_least)]
        if spec.get("each_failure_message") and not spec.get("each_failure_condition"):
            return ["%s.each_failure_message needs each_failure_condition" % where]
        return []
    if spec.get("each_busy"):
        return ["%s.each_busy goes with count (it is over one object)" % where]
    used = [key for key, _list_option in EACH_OPTIONS + (("return_resources", None),) if spec.get(key)]
    if used:
        return ["%s.%s goes with count (it is over one object); with condition use %s" % (
            where, used[0], dict(EACH_OPTIONS).get(used[0]) or "the resources every condition wait returns")]
    return []


def _as_list(state, single):
    if single:
        return [state] if state else []
    return list(state or [])


def take_baseline(cluster, spec):
    """(items, resourceVersion) of the objects a wait with ``each_busy`` follows, listed before the writes it waits
    for, or None when the kind is not served yet (then every object that appears is new). run_wait starts from it."""
    if not spec.get("each_busy") or not spec.get("count"):
        return None
    resource = cluster.resource(spec["api_version"], spec["kind"])
    if resource is None:
        return None
    return cluster.list(resource, namespace=spec.get("namespace"),
                        label_selector=",".join(spec.get("label_selectors") or []) or None)


def run_wait(cluster, spec, clock=time.monotonic, baseline=None):
    """Wait, by watch, until ``spec`` (a wait entry) holds. Returns the task's result fields; raises WaitFailed.

    ``baseline`` (take_baseline's result, taken before the writes) is the wait's starting point: with ``each_busy``
    an object changed since then counts only once its controller was seen busy on it (conditions.CountCondition).

    ClusterError from the API (other than a timeout) propagates unchanged, for the caller's usual handling.
    """
    single = bool(spec.get("name"))
    what = describe_wait(spec)
    timeout = spec.get("timeout") or DEFAULT_TIMEOUT
    problems = _entry_problems(spec, "the wait")
    if problems:
        raise WaitFailed(problems[0])
    try:
        condition = compile_condition(spec, clock=clock)
    except ConditionError as exc:
        raise WaitFailed(str(exc))
    counted = isinstance(condition, CountCondition)
    pods = OperandPods(cluster, spec["operand_pods"], spec.get("failure_grace_period") or 0,
                       clock) if spec.get("operand_pods") else None
    resource = cluster.resource(spec["api_version"], spec["kind"])
    if resource is None:
        if not spec.get("api_missing_ok"):
            raise WaitFailed("The API server does not serve %s %s; is the operator that owns it installed?" % (
                spec["api_version"], spec["kind"]))
        if counted:
            condition.reset([])  # no object at all: a counted wait that needs none (a maximum alone) holds
        if condition(None):
            return dict(title=wait_title(spec), resources=[], elapsed=0.0, events=0, progress=condition.history)
        raise WaitFailed("%s %s is not served, so %s cannot become ready" % (spec["api_version"], spec["kind"], what))
    predicate, recheck_at = condition, condition.recheck_at
    started = clock()
    if pods is not None:
        def predicate(state):
            if condition(state):
                return pods.rolled_out()
            return pods.check()

        def recheck_at():
            times = [t for t in (condition.recheck_at(), pods.next_check()) if t is not None]
            return min(times) if times else None
    try:
        result = wait_for(
            cluster, resource, predicate, name=spec.get("name"), namespace=spec.get("namespace"),
            label_selector=",".join(spec.get("label_selectors") or []) or None, timeout=timeout,
            recheck_at=recheck_at, clock=clock, view=condition if counted else None,
            resume_from=_resume_from(condition, baseline) if counted else None)
    except OperandFailed as exc:
        raise WaitFailed("%s is not ready: %s" % (what, exc), resources=[], operand_problems=exc.problems,
                         elapsed=round(clock() - started, 3), progress=condition.history)
    except ConditionFailed as exc:
        raise WaitFailed("%s reports a failure: %s" % (what, exc), resources=_as_list(exc.state, single),
                         progress=condition.history)
    except WaitTimeout as exc:
        last = (" Last progress: %s." % condition.history[-1]) if condition.history else ""
        if counted:
            raise WaitFailed("%s did not satisfy %s within %d s.%s" % (what, _count_text(spec["count"]), timeout, last),
                             resources=condition.objects(), count=_count_result(condition), elapsed=exc.elapsed,
                             progress=condition.history)
        raise WaitFailed("%s did not satisfy %s within %d s.%s" % (what, spec["condition"], timeout, last),
                         resources=_as_list(exc.state, single), elapsed=exc.elapsed, progress=condition.history)
    done = dict(title=wait_title(spec), elapsed=round(result.elapsed, 3), events=result.events,
                progress=condition.history)
    if counted:
        return dict(done, resources=condition.objects(), count=_count_result(condition))
    return dict(done, resources=_as_list(result.state, single))


def _resume_from(condition, baseline):
    if baseline is None:
        return None
    condition.set_baseline(baseline[0])
    return baseline


ROLLOUT_FIRST_STEP = 0.25  # seconds between the first two rollout checks of OperandPods.rolled_out


class OperandFailed(ClusterError):
    """An operand pod's container kept failing (crash loop, image pull, container creation) past the grace period."""

    def __init__(self, msg, problems):
        super().__init__(msg)
        self.problems = problems


class OperandPods:
    """While a wait on an operator's custom resource is not satisfied, the pods of its operands (``operand_pods``:
    namespace and label selectors) are listed every few seconds: a container that waits CrashLoopBackOff,
    ImagePullBackOff or cannot be created for longer than the grace period fails the wait, quoting pod, node,
    container, reason, the last termination and the last log lines. An operator's status does not carry this: the
    Network Operator reports a driver that never becomes ready as notReady without a message (pkg/state/state_skel.go
    getSyncState), the GPU Operator as OperandNotReady."""

    def __init__(self, cluster, options, grace, clock=time.monotonic):
        self.cluster = cluster
        self.namespace = options["namespace"]
        self.selector = ",".join(options.get("label_selectors") or []) or None
        self.grace = float(grace or 0)
        # Often enough to fail within the grace period plus a few seconds, rarely enough to cost little.
        self.interval = max(0.5, min(5.0, self.grace / 2.0 or 1.0))
        self.clock = clock
        self.images = list(options.get("images") or [])
        self.first_seen = {}
        self.last_check = None
        self.resource = None
        self.rollout = None  # why the operands have not rolled out yet, as last seen
        # Rollout checks start as soon as the custom resource reads ready and back off from ROLLOUT_FIRST_STEP to the
        # interval: the operator marks its resource ready only after its DaemonSets report ready (network-operator
        # pkg/state/state_skel.go getSyncState; gpu-operator controllers/object_controls.go isDaemonSetReady), so
        # the first check usually ends the wait; one spaced by the interval cost up to 5 s on every converge.
        self.rollout_step = None
        self.rollout_next = None

    def rolled_out(self):
        """Whether the DaemonSets of the namespace run what was applied, the way `kubectl rollout status` judges a
        DaemonSet (kubectl pkg/polymorphichelpers/rollout_status.go: observedGeneration caught up, every desired pod
        updated and available; OnDelete ones too, since the operators' upgrade controllers replace their pods) and
        every image of ``images`` is in a pod template (image + ':' + tag prefix): a custom resource that still reads
        ready from before a change of driver version or plugin image does not end the wait. Lists at most once per
        first check once the custom resource reads ready, then checks spaced from ROLLOUT_FIRST_STEP doubling up to
        the interval; a failing operand still fails the wait meanwhile."""
        now = self.clock()
        if self.rollout_next is not None and now < self.rollout_next:
            return False
        self.rollout_step = (ROLLOUT_FIRST_STEP if self.rollout_step is None
                             else min(self.interval, self.rollout_step * 2))
        self.rollout_next = now + self.rollout_step
        if self.check_problems(now):
            return False
        sets, _rv = self.cluster.list(self.cluster.resource("apps/v1", "DaemonSet"), namespace=self.namespace,
                                      label_selector=self.selector)
        templates = [c.get("image") or "" for ds in sets for c in ((((ds.get("spec") or {}).get("template") or {})
                                                                    .get("spec") or {}).get("containers") or [])]
        missing = [image for image in self.images if not any(t.startswith(image) for t in templates)]
        if missing:
            self.rollout = "no DaemonSet runs %s yet" % ", ".join(missing)
            return False
        for ds in sets:
            status = ds.get("status") or {}
            meta = ds.get("metadata") or {}
            desired = status.get("desiredNumberScheduled") or 0
            if (status.get("observedGeneration") or 0) < (meta.get("generation") or 0) or \
                    (status.get("updatedNumberScheduled")
                     or 0) < desired or (status.get("numberAvailable") or 0) < desired:
                self.rollout = "DaemonSet %s: %d of %d pods updated, %d available" % (
                    meta.get("name"), status.get("updatedNumberScheduled") or 0, desired,
                    status.get("numberAvailable") or 0)
                return False
        self.rollout = None
        return True

    def next_check(self):
        if self.last_check is None:
            return self.clock()
        if self.rollout_next is not None:
            return min(self.last_check + self.interval, self.rollout_next)
        return self.last_check + self.interval

    def check(self):
        """False, or raises OperandFailed; lists the pods at most once per interval."""
        now = self.clock()
        if self.last_check is not None and now < self.last_check + self.interval:
            return False
        return self.check_problems(now)

    def check_problems(self, now):
        self.last_check = now
        if self.resource is None:
            self.resource = self.cluster.resource("v1", "Pod")
        pods, _rv = self.cluster.list(self.resource, namespace=self.namespace, label_selector=self.selector)
        problems = pod_states.operand_problems(pods)
        current = {(p["pod"], p["container"]) for p in problems}
        self.first_seen = {key: since for key, since in self.first_seen.items() if key in current}
        for key in current:
            self.first_seen.setdefault(key, now)
        failing = [p for p in problems if now - self.first_seen[(p["pod"], p["container"])] >= self.grace]
        if not failing:
            return False
        texts = [pod_states.describe_operand_problem(p, self._log_tail(p)) for p in failing[:3]]
        if len(failing) > 3:
            texts.append("and %d more" % (len(failing) - 3))
        raise OperandFailed("; ".join(texts), failing)

    def _log_tail(self, problem):
        path = "/api/v1/namespaces/%s/pods/%s/log" % (problem["namespace"], problem["pod"])
        params = [("container", problem["container"]), ("tailLines", OPERAND_LOG_LINES)]
        if problem["reason"] == "CrashLoopBackOff":
            params.append(("previous", "true"))
        try:
            return self.cluster.read_text(path, params).splitlines()[-OPERAND_LOG_LINES:]
        except Exception as exc:  # pylint: disable=broad-except
            if api_status(exc) in (400, 404):
                return []
            raise


def _count_text(count):
    def bounds(counter):
        at_least = 1 if counter.get("at_least") is None else counter["at_least"]
        if counter.get("all"):
            text = ["every selected object"]
        elif counter.get("at_most") is not None and not at_least:
            text = []
        else:
            text = ["at least %d objects" % at_least]
        if counter.get("at_most") is not None:
            text.append("at most %d objects" % counter["at_most"])
        return " and ".join(text)
    return " and ".join("%s for %s" % (c["each"], bounds(c)) for c in count)


def _count_result(condition):
    """What a counted wait returns instead of the objects: counts and a sample of the objects that do not count."""
    return dict(condition.state(), not_counted_sample=condition.not_counted(SAMPLE_NAMES))


def wait_error_message(spec, exc):
    """Message for an unexpected exception while waiting on ``spec``."""
    return "Waiting for %s failed: %s" % (describe_wait(spec), api_message(exc))
