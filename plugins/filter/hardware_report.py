# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reports of gathered node hardware facts: hardware_report_markdown, hardware_report_html.

Documentation of each filter lives next to this file (hardware_report_markdown.yml, hardware_report_html.yml).
"""


from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpudirect.openshift.plugins.module_utils.plain_data import plain
from ansible_collections.gpudirect.openshift.plugins.module_utils.reports.hardware_report import (
    render_html, render_markdown)


def _check(name, nodes, failed):
    if not isinstance(nodes, dict):
        raise AnsibleFilterError('%s: expects a mapping of node name to facts, got %s' % (name, type(nodes).__name__))
    if failed is not None and not isinstance(failed, (list, tuple)):
        raise AnsibleFilterError('%s: failed must be a list of {node, error}' % name)
    return plain(nodes), plain(list(failed or []))


def hardware_report_markdown(nodes, title='GPU/NIC inventory', failed=None):
    """Markdown inventory and GPU-NIC affinity matrix of {node: facts}."""
    nodes, failed = _check('hardware_report_markdown', nodes, failed)
    return render_markdown(nodes, title=to_text(title), failed=failed)


def hardware_report_html(nodes, title='GPU/NIC inventory', failed=None):
    """Self-contained HTML inventory and colour-coded GPU-NIC affinity matrix of {node: facts}."""
    nodes, failed = _check('hardware_report_html', nodes, failed)
    return render_html(nodes, title=to_text(title), failed=failed)


class FilterModule:
    """Hardware report filters."""

    def filters(self):
        return {
            'hardware_report_markdown': hardware_report_markdown,
            'hardware_report_html': hardware_report_html,
        }
