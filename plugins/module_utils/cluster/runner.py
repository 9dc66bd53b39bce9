# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How a module runs its cluster work and fails (the runner of kubernetes.core's module_utils/k8s split).

Every module that talks to the cluster fails the same way: kubernetes.core's and the collection's own errors
with their message (``fail_from_exception``), anything else with what the task was doing, the API server's
message and the traceback.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import signal
import traceback

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import api_message


def run_cluster_work(module, doing, work, handlers=()):
    """Return ``work()``, or fail the task.

    ``doing`` starts the message of an unexpected error ("Failed to read the cluster"). ``handlers`` are
    ``(exception classes, callable)`` pairs tried first, for errors a module reports in its own words; a
    handler fails the task itself.
    """
    try:
        return work()
    except Exception as exc:  # pylint: disable=broad-except
        for classes, handle in handlers:
            if isinstance(exc, classes):
                handle(exc)
                raise  # a handler that returns has not failed the task: never carry on with no result
        if isinstance(exc, CoreException):  # the collection's ClusterError included
            module.fail_from_exception(exc)
        module.fail_json(msg="%s: %s" % (doing, api_message(exc)), exception=traceback.format_exc())


def _stop(signum, frame):
    raise SystemExit("stopped by signal %d" % signum)


def clean_up_on_sigterm():
    """Ansible stops a task that exceeds its timeout with SIGTERM: turn it into SystemExit, so that the ``finally``
    clean-up of the pods a module started still runs."""
    signal.signal(signal.SIGTERM, _stop)
