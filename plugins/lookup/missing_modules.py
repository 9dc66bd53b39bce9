# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
name: missing_modules
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
short_description: The modules, of those named, that this Ansible cannot find
description:
  - Returns each term (a fully qualified module name such as C(awx.awx.project)) that the controller's module loader
    does not resolve with the play's collection paths, in the order given; an empty list when all are installed.
  - A task naming a module that is not installed stops the whole playbook when it is parsed, with no way to say how
    to install it. A playbook that needs another collection checks with this lookup first and includes the tasks that
    use it only when nothing is missing (C(playbooks/awx_configure.yml) does so for C(awx.awx)).
"""

EXAMPLES = r"""
- name: Stop with the fix when awx.awx is not installed
  ansible.builtin.assert:
    that: query('gpudirect.openshift.missing_modules', 'awx.awx.project') | length == 0
    fail_msg: "Install awx.awx: ansible-galaxy collection install awx.awx"
"""

RETURN = r"""
_raw:
  description: The terms whose module is not found.
  type: list
  elements: str
"""

import importlib

from ansible.errors import AnsibleLookupError
from ansible.plugins.loader import module_loader
from ansible.plugins.lookup import LookupBase


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        missing = []
        for term in terms:
            if not isinstance(term, str) or term.count(".") < 2:
                raise AnsibleLookupError("missing_modules takes fully qualified module names "
                                         "(namespace.collection.module), got %r" % (term,))
            namespace, collection = term.split(".")[:2]
            try:
                # A collection that is not installed at all: known without the loader's warning for each module.
                importlib.import_module("ansible_collections.%s.%s" % (namespace, collection))
            except ImportError:
                missing.append(term)
                continue
            if not module_loader.find_plugin_with_context(term).resolved:
                missing.append(term)
        return missing
