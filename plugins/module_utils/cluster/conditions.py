# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""JMESPath conditions over one object or a list of objects, for resource_wait.

Operator CRs report readiness in places kubernetes.core's ``wait_condition`` cannot express
(``status.state`` strings, CSV phases, counts of labelled nodes), so waits take JMESPath
expressions instead. A single object is the document itself; a list is ``{"items": [...]}``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    import jmespath
    from jmespath.exceptions import JMESPathError
    HAS_JMESPATH = True
    JMESPATH_IMPORT_ERROR = None
except ImportError as exc:  # pragma: no cover - reported by the module
    HAS_JMESPATH = False
    JMESPATH_IMPORT_ERROR = exc
    JMESPathError = Exception


class ConditionError(Exception):
    """An expression that does not compile; raised before any request is made."""


class ConditionFailed(Exception):
    """The failure condition held (longer than the grace period)."""

    def __init__(self, msg, state=None):
        super(ConditionFailed, self).__init__(msg)
        self.state = state


def compile_expression(option, expression):
    if not expression:
        return None
    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        raise ConditionError("%s is not a valid JMESPath expression (%s): %s" % (option, expression, exc))


def document(state, single):
    """What expressions see: the object (or {} while it does not exist), or {"items": [...]}."""
    if single:
        return state or {}
    return {"items": state or []}


def truthy(value):
    """JMESPath truth: false, null, empty strings, lists and objects are false."""
    return value not in (None, False, "", [], {})


def render_text(compiled, doc):
    if compiled is None:
        return None
    value = compiled.search(doc)
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


class Condition:
    """The predicate for cluster.waiter.wait_for: success, fail fast, progress reporting.

    ``failure`` must hold for ``grace`` seconds in a row before the wait fails, because
    operators often pass through an error state while they start (as OLM does with Failed).
    """

    def __init__(self, success, failure=None, failure_message=None, progress=None, grace=0.0, single=True, clock=None):
        self.success = success
        self.failure = failure
        self.failure_message = failure_message
        self.progress = progress
        self.grace = float(grace)
        self.single = single
        self.clock = clock
        self.failing_since = None
        self.history = []

    def _note_progress(self, doc):
        text = render_text(self.progress, doc)
        if text is not None and (not self.history or self.history[-1] != text):
            self.history.append(text)

    def __call__(self, state):
        doc = document(state, self.single)
        self._note_progress(doc)
        if truthy(self.success.search(doc)):
            return True
        if self.failure is not None and truthy(self.failure.search(doc)):
            now = self.clock()
            if self.failing_since is None:
                self.failing_since = now
            if now - self.failing_since >= self.grace:
                detail = render_text(self.failure_message, doc)
                raise ConditionFailed(detail or "the failure condition holds", state=state)
        else:
            self.failing_since = None
        return False

    def recheck_at(self):
        """When a pending failure's grace period ends, so the wait re-evaluates without an event."""
        if self.failing_since is None:
            return None
        return self.failing_since + self.grace
