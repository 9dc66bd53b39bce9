#!/usr/bin/python
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: olm_operator
short_description: Install or remove an operator through OLM and wait until its CSV succeeds
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
description:
  - Ensures an operator is installed through the Operator Lifecycle Manager, the way the OpenShift
    and NVIDIA documentation install NFD, the SR-IOV Network Operator, the NVIDIA Network Operator and
    the NVIDIA GPU Operator.
  - Reads the operator's C(PackageManifest) for the default channel, the catalog source and the
    install modes the CSV supports.
  - A package that several catalogs hold is listed once per catalog, all under the package's name. The entry used is
    the one of O(source) (and O(source_namespace)); without O(source), the one of the catalog the existing
    Subscription names, else the only one. When that leaves none or several, the module fails before any write and
    says which O(source) to set.
  - Creates or updates the Namespace (with the wanted labels), an OperatorGroup that fits the CSV's
    install modes, and the Subscription.
  - With O(install_plan_approval=Manual), approves exactly the InstallPlan that installs the wanted
    CSV and never another one (nor a plan that would also install another operator's CSV).
  - Pins hold. An installed operator keeps its channel and CSV on every re-run although OLM keeps resolving
    (catalog updates, a moved default channel); what OLM offers is returned as RV(upgrade_available). A version
    pin is O(install_plan_approval=Manual) with O(starting_csv); O(starting_csv) with V(Automatic) approval is
    refused before any write, because OLM would upgrade past it.
  - Changing O(starting_csv) on an installed operator is a deliberate upgrade; it is carried out only when OLM
    offers exactly that CSV as the next InstallPlan, and otherwise fails before any write saying what OLM offers.
  - Fails before any write when another Subscription in the namespace uses the other approval mode (OLM plans
    all Subscriptions of a namespace together).
  - Waits, following a watch rather than polling, until the ClusterServiceVersion is C(Succeeded).
    A CSV that stays C(Failed) longer than O(failure_grace_period) fails the task with OLM's reason and message;
    so does a Subscription condition saying OLM cannot get as far as a CSV (for example a bundle image that cannot
    be pulled on a disconnected cluster).
  - With O(state=absent), removes the Subscription and the CSV and, on request, the OperatorGroup,
    the CRDs the CSV owns and the namespace.
  - Transient API errors (HTTP 5xx, 429, dropped connections) are retried with backoff; update
    conflicts are resolved by reading the object again.
options:
  package:
    description:
      - Name of the OLM package (the PackageManifest), for example V(nfd), V(sriov-network-operator),
        V(nvidia-network-operator) or V(gpu-operator-certified).
    type: str
    required: true
  namespace:
    description:
      - Namespace the operator is installed into.
    type: str
    required: true
  state:
    description:
      - V(present) installs (or updates the Subscription of) the operator; V(absent) removes it.
    type: str
    choices: [present, absent]
    default: present
  channel:
    description:
      - Subscription channel. Defaults to the channel of the existing Subscription, or for a first install to the
        package's C(status.defaultChannel).
    type: str
  starting_csv:
    description:
      - Pin the operator to this CSV name (C(spec.startingCSV)); needs O(install_plan_approval=Manual). Without it a
        first install takes the channel's current CSV and an installed operator keeps its installed CSV.
    type: str
  source:
    description:
      - Catalog source name. Defaults to the PackageManifest's C(status.catalogSource) (the existing Subscription's
        source when several catalogs list the package); needed when several catalogs list it and nothing is installed.
    type: str
  source_namespace:
    description:
      - Catalog source namespace. Defaults to the PackageManifest's C(status.catalogSourceNamespace); needed when
        catalogs of one name in two namespaces list the package.
    type: str
  package_namespace:
    description:
      - Namespace in which PackageManifests are read.
    type: str
    default: openshift-marketplace
  install_plan_approval:
    description:
      - V(Manual) makes OLM wait for approval; this module then approves only the InstallPlan of the wanted CSV.
    type: str
    choices: [Automatic, Manual]
    default: Automatic
  subscription_name:
    description:
      - Name of the Subscription. Defaults to O(package).
    type: str
  subscription_config:
    description:
      - Subscription C(spec.config) (env, nodeSelector, tolerations, resources, ...).
    type: dict
  operator_group_name:
    description:
      - Name of the OperatorGroup this module creates when the namespace has none. Defaults to O(namespace).
      - With O(state=absent) and O(remove_operator_group), an OperatorGroup of this name is removed too.
    type: str
  target_namespaces:
    description:
      - Namespaces the operator watches (OperatorGroup C(spec.targetNamespaces)); an empty list means all namespaces.
      - Without it, OwnNamespace is used when the CSV supports it, else AllNamespaces.
    type: list
    elements: str
  namespace_labels:
    description:
      - Labels the namespace must carry; existing other labels are kept.
    type: dict
    default: {"openshift.io/cluster-monitoring": "true"}
  namespace_annotations:
    description:
      - Annotations the namespace must carry, for example C(workload.openshift.io/allowed=management).
    type: dict
    default: {}
  wait:
    description:
      - Wait for the CSV to reach C(Succeeded) (and, with O(state=absent) and O(remove_namespace), for the namespace to
        be gone).
      - With V(false) and O(install_plan_approval=Manual), the wanted CSV's InstallPlan is approved only if
        OLM has already created it when the module runs.
    type: bool
    default: true
  wait_for:
    description:
      - What O(wait) waits for. V(csv) waits until the CSV is C(Succeeded).
      - V(install_plan) only creates the Subscription and, with O(install_plan_approval=Manual), waits for the wanted
        CSV's InstallPlan and approves it; OLM then installs the CSV by itself and a later task with V(csv) waits
        for it. Several operators install side by side this way (site.yml's C(gpudirect_install_order=overlapped)).
    type: str
    choices: [csv, install_plan]
    default: csv
  wait_timeout:
    description:
      - Seconds the whole task may take.
    type: int
    default: 600
  failure_grace_period:
    description:
      - Seconds a CSV may stay in phase C(Failed), or the Subscription report that OLM is stuck before the CSV
        (C(BundleUnpackFailed), C(ResolutionFailed), C(CatalogSourcesUnhealthy), C(InstallPlanFailed), or
        C(BundleUnpacking) because the bundle image cannot be pulled), before the task fails quoting OLM's message.
        OLM sometimes reports C(Failed) for a moment during an install that then succeeds.
    type: int
    default: 30
  remove_operator_group:
    description:
      - With O(state=absent), also remove the OperatorGroup created by this module.
    type: bool
    default: false
  remove_crds:
    description:
      - With O(state=absent), also remove the CRDs the CSV owns (C(spec.customresourcedefinitions.owned)).
      - Every custom resource of those kinds is deleted with them.
    type: bool
    default: false
  remove_namespace:
    description:
      - With O(state=absent), also remove the namespace and wait until it is gone.
    type: bool
    default: false
extends_documentation_fragment:
  - gpudirect.openshift.cluster_connection
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Uses server-side dry run; reports the objects it would create, update, approve or delete in RV(objects).
  diff_mode:
    support: full
notes:
  - The OperatorGroup is labelled C(app.kubernetes.io/managed-by=gpudirect.openshift). An
    OperatorGroup without that label is used when its install mode fits the CSV, and reported as an
    error otherwise.
seealso:
  - module: gpudirect.openshift.cluster_info
  - name: Operator Lifecycle Manager concepts
    description: Subscription, InstallPlan, OperatorGroup and ClusterServiceVersion.
    link: https://olm.operatorframework.io/docs/concepts/crds/
"""

EXAMPLES = r"""
- name: Install the Node Feature Discovery operator
  gpudirect.openshift.olm_operator:
    package: nfd
    namespace: openshift-nfd

- name: Install the GPU operator pinned to a CSV, approving its InstallPlan
  gpudirect.openshift.olm_operator:
    package: gpu-operator-certified
    namespace: nvidia-gpu-operator
    install_plan_approval: Manual
    starting_csv: gpu-operator-certified.v25.3.0
  register: gpu_operator

- name: Install the SR-IOV Network Operator
  gpudirect.openshift.olm_operator:
    package: sriov-network-operator
    namespace: openshift-sriov-network-operator
    operator_group_name: sriov-network-operators
    namespace_annotations:
      workload.openshift.io/allowed: management

- name: Subscribe to the GPU operator and approve its InstallPlan; a later task waits for the CSV
  gpudirect.openshift.olm_operator:
    package: gpu-operator-certified
    namespace: nvidia-gpu-operator
    install_plan_approval: Manual
    wait_for: install_plan

- name: Remove the NVIDIA Network Operator with its namespace
  gpudirect.openshift.olm_operator:
    package: nvidia-network-operator
    namespace: nvidia-network-operator
    state: absent
    remove_namespace: true
"""

RETURN = r"""
changed:
  description: Whether an object was created, updated, approved or deleted (or would be, in check mode).
  returned: always
  type: bool
package:
  description: The package.
  returned: always
  type: str
  sample: nfd
namespace:
  description: The operator namespace.
  returned: always
  type: str
  sample: openshift-nfd
channel:
  description: The Subscription channel.
  returned: when state is present
  type: str
  sample: stable
csv:
  description: Name of the wanted (present) or removed (absent) ClusterServiceVersion.
  returned: always
  type: str
  sample: nfd.v4.20.0
version:
  description: Version of the CSV (C(spec.version)).
  returned: when state is present
  type: str
  sample: 4.20.0
phase:
  description: Last CSV phase seen; C(Succeeded) after a successful wait.
  returned: always
  type: str
  sample: Succeeded
install_plan:
  description: Name of the InstallPlan this module found for the wanted CSV (Manual approval only).
  returned: when state is present
  type: str
installed_csv:
  description: The CSV installed when the task ended (C(status.installedCSV) of the Subscription).
  returned: when state is present
  type: str
  sample: gpu-operator-certified.v25.3.1
channel_head:
  description: The current CSV of the channel in the catalog.
  returned: when state is present
  type: str
  sample: gpu-operator-certified.v25.3.4
default_channel:
  description: The package's default channel in the catalog now.
  returned: when state is present
  type: str
  sample: v25.3
upgrade_available:
  description:
    - A newer CSV than the wanted one that OLM offers (a pending InstallPlan) or that heads the channel; null when
      none. Nothing is approved for it; set O(starting_csv) to it to upgrade.
  returned: when state is present
  type: str
  sample: gpu-operator-certified.v25.3.4
timeline:
  description: CSV phase history, oldest first, from the CSV conditions and from what the wait observed.
  returned: always
  type: list
  elements: dict
  sample: [{"phase": "Pending", "reason": "RequirementsUnknown", "time": "2026-12-02T14:20:01Z"},
           {"phase": "Succeeded", "reason": "InstallSucceeded", "time": "2026-12-02T14:20:09Z"}]
elapsed:
  description: Seconds the task took.
  returned: always
  type: float
  sample: 8.412
objects:
  description: Objects considered, with the action taken or, in check mode, that would be taken (create, update,
    approve, delete, none).
  returned: always
  type: list
  elements: dict
  sample: [{"kind": "Namespace", "name": "openshift-nfd", "action": "create"},
           {"kind": "Subscription", "name": "nfd", "namespace": "openshift-nfd", "action": "none"}]
diff:
  description: Before/after of every object changed (identity, labels, annotations, spec).
  returned: when diff mode is on
  type: list
  elements: dict
"""

import copy

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import ClusterModule
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import ClusterError
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.operator_installer import OperatorInstaller
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules.olm_install import OPERATOR_OPTIONS


def argument_spec():
    spec = copy.deepcopy(OPERATOR_OPTIONS)
    spec.update(
        state=dict(type="str", choices=["present", "absent"], default="present"),
        wait=dict(type="bool", default=True),
        wait_for=dict(type="str", choices=["csv", "install_plan"], default="csv"),
        wait_timeout=dict(type="int", default=600),
        failure_grace_period=dict(type="int", default=30),
        remove_operator_group=dict(type="bool", default=False),
        remove_crds=dict(type="bool", default=False),
        remove_namespace=dict(type="bool", default=False),
    )
    return spec


def main():
    module = ClusterModule(argument_spec())
    options = module.options
    operator = {key: options.pop(key) for key in OPERATOR_OPTIONS}
    installer = module.run(lambda: OperatorInstaller(module.cluster, operator, check_mode=module.check_mode,
                                                     warn=module.warn, **options),
                           "olm_operator failed")

    def failed(exc):
        result = dict(exc.result)
        if not module.diff:
            result.pop("diff", None)
        module.fail_json(msg=str(exc), **result)

    def unexpected(exc):
        # Anything unexpected (a connection that never came back, a bug): say where it happened.
        result = installer.finish()
        result.pop("diff", None)
        module.fail_with_traceback("olm_operator failed: %s" % exc, **result)

    result = module.run(installer.run, "olm_operator failed",
                        handlers=[(ClusterError, failed), (Exception, unexpected)])
    if not module.diff:
        result.pop("diff", None)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
