# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one base of every module that talks to the cluster.

Modelled on community.okd's ``AnsibleOpenshiftModule`` (plugins/module_utils/openshift_common.py: the client built
once, one ``run_module`` that turns errors into failures) and amazon.aws's error decorator
(plugins/module_utils/errors.py: the action a failure names is given once, where the work is).

A cluster module builds a :class:`ClusterModule` from its own options (the connection options of kubernetes.core's
``AUTH_ARG_SPEC``, documented by the ``gpudirect.openshift.cluster_connection`` fragment, are added here), reads its
options from ``options`` and hands every piece of cluster work to :meth:`ClusterModule.run`. The client is made on
first use of ``cluster``, through ``connection.connect`` (the token checks and the retries of the first requests).
``run`` fails the task the same way in every module:

- a ``(exception classes, callable)`` handler given by the module reports its own errors in its own words (a handler
  must fail the task; one that returns re-raises the error, so a module never carries on without a result);
- kubernetes.core's errors and the collection's ``ClusterError`` with their own message and the traceback;
- anything else with what the task was doing, the API server's message and the traceback.

Modules therefore hold no ``try``/``except`` around cluster work and never call ``connect`` themselves
(tests/unit/test_module_base_rules.py enforces both).
"""


import signal
import traceback

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import api_message
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.connection import connect


def _stop(signum, frame):
    raise SystemExit("stopped by signal %d" % signum)


def clean_up_on_sigterm():
    """Ansible stops a task that exceeds its timeout with SIGTERM: turn it into SystemExit, so that the ``finally``
    clean-up of the pods a module started still runs."""
    signal.signal(signal.SIGTERM, _stop)


def with_connection_options(argument_spec):
    """A cluster module's whole argument spec: its own options and kubernetes.core's connection options."""
    spec = dict(AUTH_ARG_SPEC)
    spec.update(argument_spec)
    return spec


class ClusterModule:
    """An Ansible module that talks to the cluster: its options, its client and the one way it fails.

    ``argument_spec`` holds the module's own options; ``client_options`` go to ``ClusterClient`` (``check_mode``
    defaults to the task's); ``stop_on_sigterm`` makes SIGTERM a ``SystemExit`` for modules that start pods and
    delete them in ``finally``. Other keyword arguments (``mutually_exclusive``, ...) go to the AnsibleModule.
    ``module`` is the AnsibleModule itself, for what the base does not wrap.
    """

    def __init__(self, argument_spec, client_options=None, stop_on_sigterm=False, module_class=AnsibleK8SModule,
                 **module_options):
        self.own_options = tuple(argument_spec)
        self.module = module_class(argument_spec=with_connection_options(argument_spec), supports_check_mode=True,
                                   **module_options)
        self.client_options = dict(client_options or {})
        self.client_options.setdefault("check_mode", self.module.check_mode)
        self._cluster = None
        if stop_on_sigterm:
            clean_up_on_sigterm()

    @property
    def options(self):
        """The module's own options (the connection options left out), as the task gave them."""
        return {key: self.module.params[key] for key in self.own_options}

    @property
    def connection(self):
        """The connection options (kubernetes.core's AUTH_ARG_SPEC), as the task gave them."""
        return {key: self.module.params.get(key) for key in AUTH_ARG_SPEC}

    @property
    def check_mode(self):
        return self.module.check_mode

    @property
    def diff(self):
        return self.module._diff

    @property
    def cluster(self):
        """The ClusterClient, connected on first use (inside ``run``: a connection error fails like any other)."""
        if self._cluster is None:
            self._cluster = connect(self.module, self.connection, **self.client_options)
        return self._cluster

    def run(self, work, doing, handlers=(), result=None):
        """Return ``work()``, or fail the task.

        ``doing`` starts the message of an unexpected error ("Failed to read the cluster"); a callable is asked at
        failure time. ``result`` (a callable) gives the keys a failure returns beside ``msg`` (what was done before
        the error). ``handlers`` are ``(exception classes, callable)`` pairs tried first.
        """
        try:
            return work()
        except Exception as exc:  # pylint: disable=broad-except
            for classes, handle in handlers:
                if isinstance(exc, classes):
                    handle(exc)
                    raise  # a handler that returns has not failed the task: never carry on with no result
            extra = result() if result else {}
            if isinstance(exc, CoreException):  # the collection's ClusterError included
                # As kubernetes.core's AnsibleK8SModule.fail_from_exception words it (plugins/module_utils/k8s/core.py).
                formatted = "".join(traceback.format_exception(None, exc, exc.__traceback__))
                self.fail_json(msg=str(exc), exception=formatted, **extra)
            text = doing() if callable(doing) else doing
            self.fail_json(msg="%s: %s" % (text, api_message(exc)), exception=traceback.format_exc(), **extra)

    def fail_with_traceback(self, msg, **result):
        """Fail with ``msg`` and the traceback of the exception being handled (for a handler's own wording)."""
        self.fail_json(msg=msg, exception=traceback.format_exc(), **result)

    def fail_json(self, **result):
        self.module.fail_json(**result)

    def exit_json(self, **result):
        self.module.exit_json(**result)

    def warn(self, warning):
        self.module.warn(warning)
