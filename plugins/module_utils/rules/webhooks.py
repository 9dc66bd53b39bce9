# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A write that an admission webhook could not judge because the webhook is not serving yet.

An operator's webhook is served by a pod. Between the operator registering the webhook configuration and that pod
being ready, kube-apiserver cannot call it; with failurePolicy Fail (the SR-IOV operator's
bindata/manifests/operator-webhook/003-webhook.yaml) it answers every matching write with HTTP 500 InternalError,
"Internal error occurred: failed calling webhook "NAME": failed to call webhook: Post "URL": no endpoints available
for service "SVC"" (kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go and
validating/dispatcher.go return apierrors.NewInternalError of a webhookutil.ErrCallingWebhook; the text as real
clusters print it: spinframework/spin-operator#179, openstack-k8s-operators/openstack-operator#1309). Such a write
is retried while the webhook may still be starting, and fails quoting the API server once that time is over.

How long a webhook pod takes to become ready: no upstream number. docs/simulator.md ("Time model") documents an
operand's image pull as 5-120 s and its start to ready as 1-30 s, so 6-150 s; the default grace is the slow end."""


import re

WEBHOOK_START_SECONDS = (6, 150)  # documented range: image pull plus start to ready of the webhook's pod
DEFAULT_WEBHOOK_GRACE_SECONDS = WEBHOOK_START_SECONDS[1]
RETRY_SECONDS = 5  # between two tries of a write a starting webhook refused
_CALL_FAILED = re.compile(r'failed calling webhook "([^"]+)"')


def webhook_call_failure(status, message):
    """The webhook's name when kube-apiserver answered a write with its failed-webhook-call error (HTTP 500 with
    "failed calling webhook"), else None. A webhook that answered and denied the write (400/403/422 "admission webhook
    ... denied the request") is no call failure: retrying cannot change its verdict."""
    if status != 500:
        return None
    found = _CALL_FAILED.search(message or "")
    return found.group(1) if found else None


def retry_delay(first_failure_at, now, grace, retry_seconds=RETRY_SECONDS):
    """Seconds to wait before the next try, or None when the webhook has had its grace period and the write fails."""
    waited = now - first_failure_at
    if waited >= grace:
        return None
    return max(0.0, min(retry_seconds, grace - waited))


def unavailable_message(what, webhook, waited, api_text):
    """The failure: what could not be written, the webhook, how long it was retried and the API server's words."""
    return ("%s: the admission webhook %s was not serving for %d s (failurePolicy Fail; check its pod in the "
            "operator's namespace). The API server said: %s" % (what, webhook, int(waited), api_text))
