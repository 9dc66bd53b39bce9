# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""connection_problem: the check that every cluster module makes, for plays that also run kubernetes.core modules.

Documentation lives next to this file (connection_problem.yml).
"""


from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.connection import connection_problem


def connection_problem_filter(params, environ=None):
    if not isinstance(params, dict):
        raise AnsibleFilterError('connection_problem: expects a mapping of connection options (host, api_key)')
    if environ is not None and not isinstance(environ, dict):
        raise AnsibleFilterError('connection_problem: environ must be a mapping')
    return connection_problem(params.get('host'), params.get('api_key'),
                              None if environ is None else dict(environ)) or ''


class FilterModule:
    """Connection safety filter."""

    def filters(self):
        return {'connection_problem': connection_problem_filter}
