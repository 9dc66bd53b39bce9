# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""API errors and retries for the cluster layer: ClusterError (what a module reports), the status, reason and readable
message of an API exception, which failures are transient, and the one retry policy every call shares.
"""


import json
import random
import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.rules import webhooks

try:
    from urllib3.exceptions import HTTPError as Urllib3HTTPError
except ImportError:
    Urllib3HTTPError = None

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
except ImportError:  # kubernetes.core is a dependency of the collection; keep the module importable for its error
    CoreException = Exception


# Status codes worth retrying: throttling and server-side trouble. 501 means "never works".
RETRYABLE_STATUS = frozenset([429, 500, 502, 503, 504])


class ClusterError(CoreException):
    """An API failure that the module reports as is (msg plus optional result fields); a kubernetes.core CoreException,
    so AnsibleK8SModule.fail_from_exception and every handler of kubernetes.core errors take it."""

    def __init__(self, msg, status=None, reason=None, result=None):
        super().__init__(msg)
        self.status = status
        self.reason = reason
        self.result = result or {}


def api_status(exc):
    """HTTP status of an API exception, or None when the error is not an HTTP answer."""
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


def api_reason(exc):
    """The Status ``reason`` (NotFound, Conflict, AlreadyExists, ...) of an API exception."""
    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body.startswith("{"):
        try:
            return json.loads(body).get("reason")
        except ValueError:
            return None
    return None


def never_connected(exc):
    """True when no connection was made (refused, connect timeout, name not resolved): the server saw nothing, unlike
    a connection that broke before the answer."""
    failed = getattr(exc, "reason", None) or exc  # urllib3's MaxRetryError carries the last attempt's error
    return any(k.__name__ in ("NewConnectionError", "ConnectTimeoutError", "ConnectionRefusedError")
               for k in type(failed).__mro__)


def not_processed(exc):
    """The server surely did not act on the request: throttled (429) or never reached."""
    return api_status(exc) == 429 or never_connected(exc)


def _cause_text(exc):
    """The innermost readable cause of a connection error: an OS error text ("Connection refused"), else the last
    exception's message."""
    cause, seen = exc, set()
    while id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        following = getattr(cause, "reason", None) or cause.__cause__ or cause.__context__
        last = cause.args[-1] if cause.args else None
        if following is None and isinstance(last, BaseException):
            following = last
        if not isinstance(following, BaseException):
            return last if isinstance(last, str) and last else cause.__class__.__name__
        cause = following
    return exc.__class__.__name__


def _no_answer(exc):
    """"the API server at HOST:PORT is unreachable: WHY (N attempts)" for an error without an HTTP answer (refused,
    reset, timed out), else None: urllib3's own text is a long URL dump in which the cause is hard to find."""
    if api_status(exc) is not None or not is_transient(exc):
        return None
    pool = getattr(exc, "pool", None)
    where = " at %s:%s" % (pool.host, pool.port) if getattr(pool, "host", None) else ""
    why = _cause_text(exc)
    state = "is unreachable" if never_connected(exc) else "did not answer"
    attempts = getattr(exc, "gpudirect_attempts", None)
    return "the API server%s %s: %s%s" % (where, state, why, " (%d attempts)" % attempts if attempts else "")


def api_message(exc):
    """Human readable text of an API exception: the Status message when the server sent one."""
    unreachable = _no_answer(exc)
    if unreachable:
        return unreachable
    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body.startswith("{"):
        try:
            data = json.loads(body)
            if data.get("message"):
                return "%s (HTTP %s %s)" % (data["message"], getattr(exc, "status", "?"), data.get("reason", ""))
        except ValueError:
            pass
    return str(exc)


def retry_after_seconds(exc):
    """Seconds from a Retry-After header (integer form only), else None."""
    headers = getattr(exc, "headers", None) or {}
    try:
        value = headers.get("Retry-After")
    except AttributeError:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return None


def is_transient(exc):
    """True for errors a retry can cure: 429, 5xx (not 501), dropped or refused connections. A 500 that says the API
    server could not call an admission webhook is not: the webhook's pod may take minutes, and the writer retries it
    within its own grace period (cluster/apply.py, rules/webhooks.py), which these quick retries would overrun."""
    status = api_status(exc)
    if status is not None:
        if status == 500 and webhooks.webhook_call_failure(status, api_message(exc)):
            return False
        return status in RETRYABLE_STATUS
    if Urllib3HTTPError is not None and isinstance(exc, Urllib3HTTPError):
        return True
    return isinstance(exc, (ConnectionError, TimeoutError))


class RetryPolicy:
    """Exponential backoff with full jitter for transient API errors.

    ``sleep`` and ``rand`` are injectable so tests run without waiting.
    """

    def __init__(self, attempts=6, base_delay=0.2, max_delay=8.0, max_retry_after=30.0, sleep=time.sleep,
                 rand=random.random):
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.max_retry_after = max_retry_after
        self.sleep = sleep
        self.rand = rand

    def delay(self, attempt, exc):
        """Pause before retry number ``attempt`` (1-based): Retry-After when given, else jittered backoff."""
        hinted = retry_after_seconds(exc)
        if hinted is not None:
            return min(hinted, self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return ceiling * (0.5 + 0.5 * self.rand())

    def call(self, func, *args, **kwargs):
        attempt = 0
        while True:
            try:
                return func(*args, **kwargs)
            except Exception as exc:  # pylint: disable=broad-except
                attempt += 1
                if attempt >= self.attempts or not is_transient(exc):
                    if attempt > 1:
                        try:
                            exc.gpudirect_attempts = attempt  # for api_message
                        except AttributeError:
                            pass
                    raise
                self.sleep(self.delay(attempt, exc))


DEFAULT_RETRY = RetryPolicy()
