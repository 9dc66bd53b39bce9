"""Record of every request the simulated server answered (thread-safe)."""

import threading

WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
# Groups whose `create` only asks a question and stores nothing (the authorization.k8s.io reviews: their REST storage
# implements Create alone and never reaches etcd, pkg/registry/authorization/*/rest.go): not writes.
QUESTION_GROUPS = ("authorization.k8s.io",)


class RequestLog:
    def __init__(self):
        self._lock = threading.Lock()
        self._entries = []

    def append(self, entry):
        with self._lock:
            self._entries.append(entry)

    def entries(self, since=0):
        with self._lock:
            return [dict(e) for e in self._entries[since:]]

    def __len__(self):
        with self._lock:
            return len(self._entries)

    def reset(self):
        with self._lock:
            self._entries.clear()

    def count(self, verb=None, writes_only=False, include_dry_run=False, since=0, effective_only=False, **match):
        """Number of requests; a write is create/update/patch/delete/deletecollection that is not dry-run.
        effective_only: only requests that changed stored state (entry "mutated": a no-op patch, as
        kubernetes.core sends for an object already in the desired state, is a write but not effective).
        Extra keyword arguments match entry fields exactly (plural=, namespace=, name=, code=, ...)."""
        verbs = (verb,) if isinstance(verb, str) else tuple(verb or ())
        n = 0
        with self._lock:
            for e in self._entries[since:]:
                if verbs and e["verb"] not in verbs:
                    continue
                if writes_only and (e["verb"] not in WRITE_VERBS or e.get("group") in QUESTION_GROUPS):
                    continue
                if e.get("dry_run") and not include_dry_run:
                    continue
                if effective_only and not e.get("mutated"):
                    continue
                if any(e.get(k) != v for k, v in match.items()):
                    continue
                n += 1
        return n
