# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Watch-based waits.

kubernetes.core's Waiter polls (GET, sleep, GET). Operator installs take minutes and the next
step should start as soon as the object is ready, so these waits list once and then follow a
watch: the predicate is evaluated on every event, the stream is resumed from the last
resourceVersion when it drops or the server ends it, and a 410 Gone (history expired) makes the
waiter list again. No sleep loops: the only pauses are backoff after a failed connection.
Lists are read in pages; a counting view (a wait over many objects) is updated per event instead of
re-evaluating the list, and one that needs only minimums starts from the watch's own initial events.
"""


import math
import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import (
    ClusterError,
    api_message,
    api_status,
    is_transient,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import close_stream, iter_stream_lines


class WaitTimeout(ClusterError):
    """The predicate did not become true in time; ``state`` is the last thing seen."""

    def __init__(self, msg, state=None, elapsed=0.0):
        super().__init__(msg)
        self.state = state
        self.elapsed = elapsed


class WaitResult:
    def __init__(self, state, elapsed, events, relists):
        self.state = state
        self.elapsed = elapsed
        self.events = events
        self.relists = relists


class _Gone(Exception):
    pass


class _PredicateRaised(Exception):
    """What the predicate raised (a failure it detected) while a stream was read: it ends the wait as it is, where
    an error of the stream itself is retried or reported as a failed watch."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def _key(obj):
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


class _View:
    """The current set of watched objects, keyed by namespace/name."""

    def __init__(self, single):
        self.single = single
        self.objects = {}

    def reset(self, items):
        self.objects = {_key(item): item for item in items}

    def apply(self, event_type, obj):
        if event_type == "DELETED":
            self.objects.pop(_key(obj), None)
        else:
            self.objects[_key(obj)] = obj

    def state(self):
        if self.single:
            return next(iter(self.objects.values()), None)
        return [self.objects[k] for k in sorted(self.objects)]


def wait_for(cluster, resource, predicate, name=None, namespace=None, label_selector=None, timeout=300.0,
             recheck_at=None, on_change=None, clock=time.monotonic, backoff=None, view=None, resume_from=None):
    """Block until ``predicate(state)`` is true; return a WaitResult.

    With ``name`` the state is that object as a dict, or None while it does not exist; without it,
    the list of matching objects. ``predicate`` may raise to abort the wait (a failure it detected).
    ``recheck_at()`` may return a monotonic time at which the predicate must be evaluated again
    even if no event arrives (grace periods); ``on_change(state)`` sees every state the wait saw.
    ``view`` (reset(items), apply(event_type, obj), state()) replaces the default view that keeps every object:
    a counting view (conditions.CountCondition) keeps the per-event work independent of the number of objects.
    ``resume_from`` ((items, resourceVersion) of a list taken earlier, e.g. before the writes the wait follows) replaces
    the first list: the watch resumes from that resourceVersion, so every change since that list is seen in order.
    Raises WaitTimeout when ``timeout`` seconds pass first.
    """
    start = clock()
    deadline = start + float(timeout)
    view = view or _View(single=bool(name))
    field_selector = "metadata.name=%s" % name if name else None
    counters = {"events": 0, "relists": 0}
    failures = [0]
    backoff = backoff or cluster.retry

    def relist():
        counters["relists"] += 1
        if hasattr(view, "settled"):
            # A counting view reads the list page by page and stops as soon as the count settles the wait
            # (at least N objects count on a consistent page): the other pages of a large list are not read.
            def page(items, first):
                if first:
                    view.reset([])
                for item in items:
                    view.apply("ADDED", item)
                return view.settled()
            return cluster.list_pages(resource, page, namespace=namespace, label_selector=label_selector,
                                      field_selector=field_selector)
        items, list_rv = cluster.list(resource, namespace=namespace, label_selector=label_selector,
                                      field_selector=field_selector)
        view.reset(items)
        return list_rv

    def satisfied():
        state = view.state()
        if on_change is not None:
            on_change(state)
        return predicate(state)

    def next_wake(now):
        wake = deadline
        if recheck_at is not None:
            wanted = recheck_at()
            if wanted is not None:
                wake = min(wake, max(now, wanted))
        return wake

    def done():
        return WaitResult(view.state(), clock() - start, counters["events"], counters["relists"])

    # Minimums over many objects start with a watch without resourceVersion: the server sends the current objects
    # as ADDED events, then the changes (kube-apiserver "Get State and Start at Most Recent"), in one request
    # whatever their number. A count reached during those events holds for real objects, so only a minimum may
    # start this way: "every selected object" needs the whole state first (a paged list). A stream that ends
    # before the wait is over is followed by a list, since the initial events cannot be resumed.
    unversioned = resume_from is None and bool(getattr(view, "monotone", lambda: False)())
    if resume_from is not None:
        view.reset(resume_from[0])
        resource_version = resume_from[1]
        if satisfied():
            return done()
    elif unversioned:
        view.reset([])
        resource_version = None
    else:
        resource_version = relist()
        if satisfied():
            return done()

    while True:
        now = clock()
        if now >= deadline:
            raise WaitTimeout("Timed out after %.0f s waiting for %s%s" % (
                float(timeout), resource.kind, " %s" % name if name else "s"), state=view.state(), elapsed=now - start)
        wake = next_wake(now)
        try:
            stream = cluster.watch_stream(
                resource, resource_version, namespace=namespace, label_selector=label_selector,
                field_selector=field_selector, server_timeout=math.ceil(deadline - now), read_timeout=wake - now + 0.05)
        except Exception as exc:  # pylint: disable=broad-except
            if api_status(exc) == 410:
                unversioned = False
                resource_version = relist()
                if satisfied():
                    return done()
                continue
            raise
        try:
            for event in iter_stream_lines(stream):
                event_type = event.get("type")
                obj = event.get("object") or {}
                if event_type == "ERROR":
                    if obj.get("code") == 410:
                        raise _Gone()
                    raise ClusterError("Watch on %s failed: %s" % (resource.kind, obj.get("message", obj)),
                                       status=obj.get("code"))
                new_rv = (obj.get("metadata") or {}).get("resourceVersion")
                if new_rv:
                    resource_version = new_rv
                failures[0] = 0
                if event_type == "BOOKMARK":
                    # Bookmarks keep the socket busy, so the read timeout never wakes us: check the wake time here,
                    # or a grace period would end only when the watch happens to go quiet.
                    if clock() >= wake:
                        break
                    continue
                counters["events"] += 1
                obj.setdefault("apiVersion", resource.group_version)
                obj.setdefault("kind", resource.kind)
                view.apply(event_type, obj)
                try:
                    holds = satisfied()
                except Exception as exc:  # pylint: disable=broad-except
                    raise _PredicateRaised(exc)
                if holds:
                    return done()
                if next_wake(clock()) < wake:
                    # The predicate now wants a check earlier than this stream's read timeout allows
                    # (e.g. a grace period started): reopen the watch with a shorter read timeout.
                    break
        except _Gone:
            unversioned = False
            resource_version = relist()
        except _PredicateRaised as raised:
            raise raised.error
        except ClusterError:
            raise
        except Exception as exc:  # pylint: disable=broad-except
            # A dropped stream or a client read timeout: resume from the last resourceVersion.
            # Timeouts are expected (they are how a deadline wakes us); other transient errors back off.
            if not is_transient(exc):
                raise ClusterError("Watch on %s failed: %s" % (resource.kind, api_message(exc)))
            if not _is_read_timeout(exc):
                failures[0] += 1
                if failures[0] >= backoff.attempts:
                    raise ClusterError("Watch on %s keeps failing: %s" % (resource.kind, api_message(exc)))
                backoff.sleep(min(backoff.delay(failures[0], exc), max(0.0, deadline - clock())))
        finally:
            close_stream(stream)
        if satisfied():
            return done()
        if unversioned:
            unversioned = False
            resource_version = relist()
            if satisfied():
                return done()


def _is_read_timeout(exc):
    name = type(exc).__name__
    return "ReadTimeout" in name or isinstance(exc, TimeoutError) or "Read timed out" in str(exc)


# -- predicates --------------------------------------------------------------------------------


def absent(state):
    """True when the watched object (or every matching object) is gone."""
    return not state
