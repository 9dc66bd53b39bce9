# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
name: operators
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
short_description: The operators the collection installs through OLM, with the play's settings
description:
  - Returns the collection's operator catalogue in install order (Node Feature Discovery, SR-IOV Network Operator,
    NVIDIA Network Operator, NVIDIA GPU Operator), then the operators of C(gpudirect_extra_operators).
  - Each operator's settings come from its C(<role>_<setting>) variables (for example C(nfd_channel),
    C(nvidia_gpu_operator_install_plan_approval)) where the play defines them, else from the catalogue's defaults.
  - Install, the in-sync check, upgrade planning, teardown and diagnostics all read this one list.
options:
  olm_only:
    description:
      - Return only the keys the C(gpudirect.openshift.olm_operator) and C(gpudirect.openshift.plan_status) modules
        take for an operator (package, namespace, channel, source, source_namespace, starting_csv,
        subscription_config, install_plan_approval).
    type: bool
    default: false
  install_order:
    description:
      - Return instead only the operators whose Subscriptions site.yml creates together before any wait, in install
        order (C(INSTALL_AFTER) in C(plugins/module_utils/catalogue.py)). That is all of them for V(overlapped) and
        none for V(sequential).
    type: str
    choices: [overlapped, sequential]
  support_table:
    description:
      - Return instead, as the only item, the support table of the catalogue (a mapping of OpenShift minor version to
        package to versions), the GPU and Network Operator versions the collection supports on each OpenShift version
        (docs/support.md).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Show the operators and their namespaces
  ansible.builtin.debug:
    msg: "{{ query('gpudirect.openshift.operators') | map(attribute='namespace') }}"

- name: The operators site.yml subscribes to together (gpudirect_install_order=overlapped)
  ansible.builtin.debug:
    msg: "{{ query('gpudirect.openshift.operators', install_order='overlapped') | map(attribute='package') }}"

- name: The OpenShift versions the collection supports
  ansible.builtin.debug:
    msg: "{{ query('gpudirect.openshift.operators', support_table=true) | first | list }}"

- name: Check the operators as plan_status sees them
  gpudirect.openshift.plan_status:
    operators: "{{ query('gpudirect.openshift.operators', olm_only=true) }}"
"""

RETURN = r"""
_raw:
  description:
    - One mapping per operator with C(role), C(title), C(package), C(phase) (the renderer's phase of its custom
      resource, or null), C(catalog_source) and the settings C(namespace), C(channel), C(source),
      C(source_namespace), C(starting_csv), C(subscription_config), C(install_plan_approval), C(wait_timeout),
      C(failure_grace_period).
      - With O(support_table), one mapping instead (OpenShift minor version to package to versions).
  type: list
  elements: dict
"""

import copy

from ansible.errors import AnsibleLookupError
from ansible.plugins.loader import lookup_loader
from ansible.plugins.lookup import LookupBase

from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue

OLM_KEYS = ("package", "namespace", "channel", "source", "source_namespace", "starting_csv", "subscription_config",
            "install_plan_approval")


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        if self.get_option("support_table"):
            return [copy.deepcopy(catalogue.SUPPORT_TABLE)]
        variables = variables or {}
        # The builtin vars lookup templates values the way this ansible-core version does.
        values = lookup_loader.get("ansible.builtin.vars", loader=self._loader, templar=self._templar)

        def read(names):
            present = [name for name in names if name in variables]
            return dict(zip(present, values.run(present, variables))) if present else {}

        extra = read(["gpudirect_extra_operators"]).get("gpudirect_extra_operators") or []
        try:
            names = catalogue.variable_names(extra)
            operators = catalogue.resolve(read(names), extra)
        except ValueError as exc:
            raise AnsibleLookupError(str(exc))
        if self.get_option("install_order"):
            try:
                operators = catalogue.subscribe_together(operators, self.get_option("install_order"))
            except ValueError as exc:
                raise AnsibleLookupError(str(exc))
        if self.get_option("olm_only"):
            operators = [{key: operator[key] for key in OLM_KEYS} for operator in operators]
        return operators
