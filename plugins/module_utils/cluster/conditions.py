# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""JMESPath conditions over one object or a list of objects, for resource_wait.

Operator CRs report readiness in places kubernetes.core's ``wait_condition`` cannot express
(``status.state`` strings, CSV phases, counts of labelled nodes), so waits take JMESPath
expressions instead. A single object is the document itself; a list is ``{"items": [...]}``.
"""


import bisect

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
        super().__init__(msg)
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


# Progress texts a wait keeps: the first and the latest ones (a 1000-node wait changes its text on every event).
HISTORY_LIMIT = 20


def note_progress(history, text):
    """Append ``text`` to ``history`` unless it repeats the last entry; keep the first and the latest entries."""
    if text is None or (history and history[-1] == text):
        return
    history.append(text)
    if len(history) > HISTORY_LIMIT:
        del history[1]


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
        note_progress(self.history, render_text(self.progress, doc))

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


def object_key(obj):
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


def _generation(obj):
    return int((obj.get("metadata") or {}).get("generation") or 0)


class CountCondition:
    """A wait over many objects that counts them with one or more counters, each a JMESPath expression over one
    object (``counters``: [(compiled expression, at_least, require_all, at_most)]).

    It is also the waiter's view (reset/apply/state): each event evaluates the counters on the one object it
    carries and moves their numbers, so the work per event does not grow with the number of watched objects, where
    a list condition re-reads every object. A counter holds when at least ``at_least`` objects count, with
    ``require_all`` when every selected object counts (and at least one is selected), and with ``at_most`` (None:
    no limit) when no more than that many count; the wait holds when every counter holds. ``evaluations`` counts the
    expression evaluations (what tests measure).

    The per-object verdicts of a list condition come the same way: ``failure`` (over one object) marks a failing
    object, and the wait fails once some object has been failing for ``grace`` seconds in a row, quoting the
    ``failure_message`` of each failing object (joined with "; ", in namespace/name order, as the list expression
    did); ``progress`` (over one object) gives each object's text, joined with ", " in the same order. Each verdict
    and text is kept by object and recomputed only when that object's event comes. With ``keep_objects`` the
    objects themselves are kept too (``objects()``), for a caller that reads them once at the end.

    ``busy`` (over one object) guards against a status older than the spec. Some controllers write nothing that ties
    their status to a generation, and read the world before they say they started (the SR-IOV config daemon): right
    after a spec change the object still shows the previous result. With ``busy``, an object whose
    metadata.generation is above its generation in the baseline (the objects before the change: ``set_baseline``,
    else the generation the wait first saw it at) is pending until ``busy`` was seen true on it at its current
    generation or later. A pending object counts for no minimum and counts for every maximum alone (it blocks,
    whatever its status). When the history between the baseline and now is lost (the waiter lists again after a 410
    Gone), pending objects are judged from their status alone."""

    single = False

    def __init__(self, counters, label="objects", failure=None, failure_message=None, progress=None, grace=0.0,
                 keep_objects=False, clock=None, busy=None):
        self.counters = [(each, int(at_least), bool(require_all), None if at_most is None else int(at_most))
                         for each, at_least, require_all, at_most in (tuple(c) + (None,) * (4 - len(c))
                                                                      for c in counters)]
        self.label = label
        self.failure = failure
        self.failure_message = failure_message
        self.progress = progress
        self.grace = float(grace or 0)
        self.keep_objects = keep_objects
        self.clock = clock
        self.failing_since = None
        self.counted = {}  # (namespace, name) -> tuple of booleans, one per counter
        self.matching = [0] * len(self.counters)
        self.failing = {}  # (namespace, name) -> (object, failure text) of the objects whose failure holds
        self.texts = {}  # (namespace, name) -> progress text of the object
        self.order = []  # the keys of texts, sorted: the order of the joined progress
        self.joined = None  # the joined progress, rebuilt when a text changes
        self.objects_by_key = {}
        self.evaluations = 0
        self.history = []
        self.busy = busy
        self.baseline = None  # (namespace, name) -> metadata.generation before the change
        self.busy_at = {}  # (namespace, name) -> the highest generation at which busy was seen
        self.first_seen = {}  # (namespace, name) -> generation when first seen (the baseline when none is given)
        self.resets = 0
        self.history_lost = False
        # Per counter, what a pending object counts as: blocking for a maximum alone, not counted for a minimum.
        self.pending_counts = tuple(at_most is not None and not at_least and not require_all
                                    for _each, at_least, require_all, at_most in self.counters)

    def set_baseline(self, items):
        """The objects as they were before the change the wait follows (see the class docstring)."""
        self.baseline = {object_key(item): _generation(item) for item in items}

    def pending(self, key, obj):
        """True while ``obj`` changed since the baseline and ``busy`` was not yet seen on it (records busy)."""
        if self.busy is None:
            return False
        generation = _generation(obj)
        self.evaluations += 1
        if truthy(self.busy.search(obj)):
            self.busy_at[key] = max(self.busy_at.get(key, 0), generation)
        if self.baseline is None:
            # No baseline given: the wait's first sight of each object is its baseline. The waiter reads its first
            # list page by page into an emptied view, so "the objects of the first reset" would be none at all.
            base = self.first_seen.setdefault(key, generation)
        else:
            base = self.baseline.get(key, 0)
        if self.history_lost or generation <= base:
            return False
        return self.busy_at.get(key, -1) < generation

    def reset(self, items):
        self.resets += 1
        if self.busy is not None and self.resets > 1:
            self.history_lost = True  # a relist: what happened since the baseline or the last event is unknown
        self.counted = {}
        self.matching = [0] * len(self.counters)
        self.failing = {}
        self.texts = {}
        self.order = []
        self.joined = None
        self.objects_by_key = {}
        for item in items:
            self.apply("ADDED", item)

    def apply(self, event_type, obj):
        key = object_key(obj)
        before = self.counted.pop(key, None)
        if before:
            self.matching = [m - int(b) for m, b in zip(self.matching, before)]
        self.failing.pop(key, None)
        if event_type == "DELETED":
            self.objects_by_key.pop(key, None)
            if key in self.texts:
                del self.texts[key]
                self._forget_text(key)
            return
        pending = self.pending(key, obj)
        if pending:
            now = self.pending_counts
        else:
            self.evaluations += len(self.counters)
            now = tuple(truthy(each.search(obj)) for each, _at_least, _all, _at_most in self.counters)
        self.counted[key] = now
        self.matching = [m + int(b) for m, b in zip(self.matching, now)]
        if self.keep_objects:
            self.objects_by_key[key] = obj
        if self.failure is not None:
            self.evaluations += 1
            if truthy(self.failure.search(obj)):
                self.evaluations += 1 if self.failure_message is not None else 0
                self.failing[key] = (obj, render_text(self.failure_message, obj))
        if self.progress is not None:
            self.evaluations += 1
            text = render_text(self.progress, obj)
            if pending and text is not None:
                # Its status is the previous spec's: say so, or a stale "Succeeded" reads as done.
                text += " (spec changed to generation %d; its controller has not started on it yet)" % _generation(obj)
            self._set_text(key, text)

    def _set_text(self, key, text):
        if key not in self.texts:
            bisect.insort(self.order, key)
        elif self.texts[key] == text:
            return
        self.texts[key] = text
        self.joined = None

    def _forget_text(self, key):
        index = bisect.bisect_left(self.order, key)
        if index < len(self.order) and self.order[index] == key:
            del self.order[index]
        self.joined = None

    def progress_text(self):
        """The objects' progress texts in namespace/name order, joined with ", " (None without ``progress``)."""
        if self.progress is None:
            return None
        if self.joined is None:
            self.joined = ", ".join(text for text in map(self.texts.get, self.order) if text is not None)
        return self.joined

    def failure_text(self):
        """The failing objects' failure messages in namespace/name order, joined with "; " (None when none fails)."""
        if not self.failing:
            return None
        return "; ".join(text for _key, (_obj, text) in sorted(self.failing.items()) if text is not None)

    def failing_objects(self):
        return [obj for _key, (obj, _text) in sorted(self.failing.items(), key=lambda entry: entry[0])]

    def objects(self):
        """The objects as last seen, in namespace/name order (with ``keep_objects``; else none)."""
        return [self.objects_by_key[key] for key in sorted(self.objects_by_key)]

    def state(self):
        return {"counted": list(self.matching), "selected": len(self.counted)}

    def holds(self):
        for (_each, at_least, require_all, at_most), matching in zip(self.counters, self.matching):
            if matching < max(at_least, 1 if require_all else 0):
                return False
            if require_all and matching != len(self.counted):
                return False
            if at_most is not None and matching > at_most:
                return False
        return True

    def settled(self):
        """True when the objects seen so far already make the wait hold whatever the others are (minimums only,
        no ``require_all``): the waiter then need not read the rest of the list."""
        return self.monotone() and all(
            matching >= at_least for (_each, at_least, _all, _at_most), matching in zip(self.counters, self.matching))

    def monotone(self):
        """Minimums only: a count reached on part of the objects already holds (no counter needs them all, none has
        a maximum that an object not seen yet could exceed)."""
        return self.busy is None and not any(require_all or at_most is not None
                                             for _each, _at_least, require_all, at_most in self.counters)

    def __call__(self, _state=None):
        if self.progress is not None:
            note_progress(self.history, self.progress_text())
        else:
            note_progress(self.history, "%s: %s of %d selected" % (
                self.label, ", ".join(str(m) for m in self.matching), len(self.counted)))
        if self.holds():
            return True
        if self.failing:
            now = self.clock()
            if self.failing_since is None:
                self.failing_since = now
            if now - self.failing_since >= self.grace:
                raise ConditionFailed(self.failure_text() or "the failure condition holds",
                                      state=self.failing_objects())
        else:
            self.failing_since = None
        return False

    def not_counted(self, limit):
        """Up to ``limit`` names of selected objects that keep some counter from holding: one a minimum does not count
        yet, or one a maximum alone (at_least 0) does count (a sample for messages)."""
        blocking_when = [True if at_most is not None and not at_least and not require_all else False
                         for _each, at_least, require_all, at_most in self.counters]
        names = []
        for (namespace, name), holds in self.counted.items():
            if any(verdict == blocking for verdict, blocking in zip(holds, blocking_when)):
                names.append("%s/%s" % (namespace, name) if namespace else name)
                if len(names) >= limit:
                    break
        return sorted(names)

    def recheck_at(self):
        """When a pending failure's grace period ends, so the wait re-evaluates without an event."""
        if self.failing_since is None:
            return None
        return self.failing_since + self.grace
