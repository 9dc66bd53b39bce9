#!/usr/bin/python
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: collect_diagnostics
short_description: Write the objects that explain a GPUDirect RDMA install to a directory, secrets redacted
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
description:
  - Must-gather style collection for the operators and the RDMA configuration that C(site.yml) installs.
  - Lists, with a fixed number of requests, Subscriptions, InstallPlans, ClusterServiceVersions (with their
    conditions), OperatorGroups, Events and Pods in each operator namespace; CatalogSources in the catalog namespace;
    the NodeFeatureDiscovery, SriovOperatorConfig, NicClusterPolicy and ClusterPolicy; SR-IOV node states, node
    policies and pool configs; the RDMA network CRs and every NetworkAttachmentDefinition; MachineConfigPools and the
    MachineConfigs the collection manages; Nodes (labels, taints, capacity, allocatable, conditions).
  - Writes one YAML list per kind and namespace (C(<namespace>/<plural>.yaml), C(cluster-scoped/<plural>.yaml)) and
    a C(summary.md) that starts with the failure (when given) and the findings worth reading first.
  - Redacts credentials before anything is written; Secret C(data) and C(stringData) values, values under keys
    such as token, password, apiKey, credentials or .dockerconfigjson, sensitive container environment values,
    anything that looks like a kubeconfig or a private key, and the bearer token or password the module itself
    connects with. Files are created readable by the owner only.
  - A kind that is not served or that the credentials may not list is reported in the summary; it does not fail
    the module.
options:
  dest:
    description: Directory the files are written to (created when missing). Existing files of the same name are
      replaced.
    type: path
    required: true
  namespaces:
    description:
      - Operator namespaces whose OLM objects, events and pods are collected.
      - Unset, the default namespaces of the operator catalogue (the four operators the collection installs).
    type: list
    elements: str
  marketplace_namespace:
    description: Namespace of the CatalogSources.
    type: str
    default: openshift-marketplace
  managed_label_selector:
    description: MachineConfigs are collected only when they match this selector (the cluster's own ones are many and
      large).
    type: str
    default: app.kubernetes.io/managed-by=gpudirect.openshift
  machineconfig_names:
    description:
      - The MachineConfigs to collect, each read by name (one GET), since MachineConfigs are never listed - a list
        returns the controller's MachineConfigs, which carry the cluster pull secret. Those that do not exist or do
        not match O(managed_label_selector) are left out.
      - Default, the names the collection gives its MachineConfigs with the default variables; the
        P(gpudirect.openshift.machineconfig_names#filter) filter gives them for other variables.
    type: list
    elements: str
  failure:
    description: The error that made the play collect diagnostics; quoted at the top of C(summary.md) (redacted like the
      rest).
    type: str
  failed_task:
    description: Name of the task that failed.
    type: str
extends_documentation_fragment:
  - gpudirect.openshift.cluster_connection
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: The module reads the cluster and reports the files it would write, without writing them.
  diff_mode:
    support: none
requirements:
  - PyYAML
notes:
  - The module never writes to the cluster; in check mode it does not write the files either. The
    C(gpudirect.openshift.diagnostics) role runs it with C(check_mode=false) so that a failed check-mode run
    still leaves its diagnostics.
"""

EXAMPLES = r"""
- name: Collect diagnostics after a failure
  gpudirect.openshift.collect_diagnostics:
    dest: "artifacts/{{ inventory_hostname }}"
    failure: "{{ ansible_failed_result.msg | default(omit) }}"
    failed_task: "{{ ansible_failed_task.name | default(omit) }}"
  check_mode: false

- name: Collect from operators installed into other namespaces
  gpudirect.openshift.collect_diagnostics:
    dest: /tmp/gpudirect-must-gather
    namespaces: [openshift-nfd, openshift-sriov-network-operator, nvidia-network-operator, gpu-operator]
"""

RETURN = r"""
dest:
  description: The directory written.
  returned: always
  type: str
  sample: /runner/artifacts/gpudirect/cluster-a
files:
  description: Files written (or, in check mode, that would be), relative to RV(dest).
  returned: always
  type: list
  elements: str
  sample: ["nvidia-gpu-operator/clusterserviceversions.yaml", "cluster-scoped/nodes.yaml", "summary.md"]
collected:
  description: Per kind and namespace, the number of objects and the file.
  returned: always
  type: list
  elements: dict
  sample: [{"kind": "ClusterServiceVersion", "namespace": "nvidia-gpu-operator", "count": 1,
            "file": "nvidia-gpu-operator/clusterserviceversions.yaml"}]
unavailable:
  description: Lists that failed (kind not served, forbidden, other error), with the reason.
  returned: always
  type: list
  elements: dict
  sample: [{"kind": "NicClusterPolicy", "namespace": null, "reason": "not served (operator or CRD not installed)"}]
capped:
  description:
    - The lists of kinds with an object per node (Node, SriovNetworkNodeState, Pod, Event) that were too long to write
      whole
      - how many objects were listed, how many were abnormal, and how many were written (every abnormal one up to 200,
        then 20 others).
  returned: always
  type: list
  elements: dict
  sample: [{"kind": "Node", "namespace": null, "listed": 1003, "abnormal": 2, "written": 22}]
findings:
  description: The lines of the summary's Findings section (failed CSVs, pending InstallPlans, error states, NotReady
    nodes, warning events).
  returned: always
  type: list
  elements: str
  sample: ["ClusterServiceVersion nvidia-gpu-operator/gpu-operator-certified.v25.3.0 is Failed (InstallComponentFailed):
    install failed"]
requests:
  description: Number of requests the collection made (the probe of the API server included).
  returned: always
  type: int
  sample: 42
api_unreachable:
  description:
    - Why the API server did not answer the first request (C(GET /version), one try with a short timeout), in which case
      nothing else was requested and summary.md says so; null when it answered.
  returned: always
  type: str
  sample: "Max retries exceeded with url: /version (Caused by NewConnectionError: Connection refused)"
"""

import traceback

try:
    import yaml
    HAS_YAML = True
except ImportError:
    YAML_IMPORT_ERROR = traceback.format_exc()
    HAS_YAML = False
else:
    YAML_IMPORT_ERROR = None

from ansible.module_utils.basic import missing_required_lib
from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary
from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.module_base import ClusterModule
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.diagnostics import (
    DiagnosticsCollector,
    client_secrets,
    scrub_text,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import owned_machineconfig_names


def argument_spec():
    return dict(
        dest=dict(type="path", required=True),
        namespaces=dict(type="list", elements="str"),
        marketplace_namespace=dict(type="str", default="openshift-marketplace"),
        managed_label_selector=dict(type="str", default=vocabulary.MANAGED_BY_SELECTOR),
        machineconfig_names=dict(type="list", elements="str"),
        failure=dict(type="str"),
        failed_task=dict(type="str"),
    )


def dump_yaml(data):
    return yaml.safe_dump(data, default_flow_style=False, sort_keys=False, width=160)


def main():
    # Reads only (the files it writes are local): the client is built as outside check mode.
    module = ClusterModule(argument_spec(), client_options=dict(check_mode=False, rediscover_once=True))
    if not HAS_YAML:
        module.fail_json(msg=missing_required_lib("PyYAML"), exception=YAML_IMPORT_ERROR)
    params = module.options
    connection = module.connection
    collector = module.run(lambda: DiagnosticsCollector(
        module.cluster,
        params["namespaces"] or [operator["namespace"] for operator in catalogue.OPERATORS],
        marketplace_namespace=params["marketplace_namespace"],
        managed_selector=params["managed_label_selector"],
        secrets=client_secrets(module.cluster.k8s, api_key=connection["api_key"], password=connection["password"]),
        machineconfig_names=owned_machineconfig_names({}) if params["machineconfig_names"] is None
        else params["machineconfig_names"]),
        "Collecting diagnostics failed")

    def unwritable(exc):
        module.fail_json(msg="Could not write diagnostics to %s: %s" % (params["dest"],
                                                                        scrub_text(str(exc), collector.secrets)))

    files = module.run(lambda: collector.write(params["dest"], collector.collect(), failure=params["failure"],
                                               failed_task=params["failed_task"], check_mode=module.check_mode,
                                               dumper=dump_yaml),
                       "Collecting diagnostics failed", handlers=[((IOError, OSError), unwritable)])
    module.exit_json(changed=not module.check_mode, dest=params["dest"], files=files, collected=collector.collected,
                     unavailable=collector.unavailable, capped=collector.capped, findings=collector.findings,
                     requests=collector.requests_sent,
                     # not "unreachable": Ansible takes a true result key of that name as the host being unreachable,
                     # which skips the rest of a rescue section (the play's own failure message included)
                     api_unreachable=collector.unreachable)


if __name__ == "__main__":
    main()
