# -*- coding: utf-8 -*-
# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""managed_kinds: the kinds the collection prunes, from the one list in render/names.py.

Documentation lives next to this file (managed_kinds.yml).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import names


def managed_kinds(which):
    try:
        return names.managed_kinds(which)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    """Kinds the collection manages."""

    def filters(self):
        return {'managed_kinds': managed_kinds}
