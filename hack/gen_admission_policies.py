"""Generate deploy/rbac/admission-policies.yml: ValidatingAdmissionPolicies that bound what the automation identity writes.

RBAC limits which objects the identity of deploy/rbac/clusterrole.yml may write, not what they contain; these policies
(admissionregistration.k8s.io/v1, Kubernetes 1.30 and later, i.e. OpenShift 4.17 and later) refuse, for that identity
only (matchConditions on request.userInfo.username), any content the collection does not render:

- MachineConfigs: only the names the configurations render, each with its pool's role label and the managed-by label;
  no systemd units, users or other Ignition sections; only the files and kernel arguments the renderer writes
  (render/machineconfigs.py); the control-plane pools (master, arbiter) only when a --vars file allows them;
- NicClusterPolicy, ClusterPolicy, NodeFeatureDiscovery: every image (a component's `repository`, or an `image` that is
  a full reference) from the repositories the configurations render (the collection's defaults for every Network
  Operator release, plus the repositories of --vars files: mirrors); no node affinity, and no toleration of the
  control-plane taints or of every taint; an image the release table (render/releases.py) or a --vars file pins by digest
  (the device plugins, the IPoIB CNI) only by digest: its component's `version`, or a full `image`, carries @sha256:
  (the DOCA driver and the verify image have no digest a source gives: docs/upgrades.md);
- Subscriptions: in each operator namespace only that operator's package, from its CatalogSource and namespace; no
  spec.config unless a --vars file sets one; OperatorGroups only in the operator namespaces, targeting their own
  namespace or all namespaces, never a label selector;
- Pods: hostPath volumes only at the paths the facts pods read (/sys and three /proc entries), mounted read-only; and,
  unless a --vars file sets hardware_facts_allow_control_plane: true, no pod placed on a control-plane node: no
  nodeSelector or required/preferred node affinity (In, Exists) on the control-plane role labels, no toleration of the
  control-plane taints, and (policy gpudirect-openshift-pod-placement, with the control-plane Nodes as its params) no
  spec.nodeName or kubernetes.io/hostname nodeSelector that names a control-plane node.

It reads the same plan as hack/gen_clusterrole.py: the example configurations (each also with MachineConfigs on), the
operator catalogue and any `--vars` files.

    source hack/env.sh
    python hack/gen_admission_policies.py                      # rewrite deploy/rbac/admission-policies.yml
    python hack/gen_admission_policies.py --check              # exit 1 when the committed file is out of date
    python hack/gen_admission_policies.py --vars my-vars.yml   # also admit what your configuration renders
    python hack/gen_admission_policies.py --output FILE        # write elsewhere
    python hack/gen_admission_policies.py --openshift-version 4.16   # refused: the v1 API is not served there
"""

import argparse
import difflib
import glob
import importlib.util
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "deploy", "rbac", "admission-policies.yml")
API_VERSION = "admissionregistration.k8s.io/v1"
PREFIX = "gpudirect-openshift"
CONTROL_PLANE_POOLS = ("master", "arbiter")
# admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy is served from Kubernetes 1.30: kubernetes/kubernetes
# staging/src/k8s.io/api/admissionregistration/v1/types.go (+k8s:prerelease-lifecycle-gen:introduced=1.30 on the policy
# and binding types) and pkg/features/kube_features.go (ValidatingAdmissionPolicy GA and locked on in 1.30; beta and off
# by default in 1.28 and 1.29). The Kubernetes minor of each OpenShift minor of the support table (docs/support.md), from
# the OpenShift release notes ("OpenShift Container Platform 4.N is based on Kubernetes 1.M"); simulator/profiles has
# the same table.
FIRST_KUBERNETES_MINOR = 30
KUBERNETES_MINOR_OF_OPENSHIFT = {"4.16": 29, "4.17": 30, "4.18": 31, "4.19": 32, "4.20": 33}


def openshift_version_problem(openshift_version):
    """None when the policies apply on this OpenShift (major.minor or a full version); else why not and what to do."""
    minor = ".".join(str(openshift_version).strip().split(".")[:2])
    kubernetes = KUBERNETES_MINOR_OF_OPENSHIFT.get(minor)
    if kubernetes is None:
        return ("--openshift-version %s is not in the support table (%s): give one of those versions"
                % (openshift_version, ", ".join(sorted(KUBERNETES_MINOR_OF_OPENSHIFT))))
    if kubernetes < FIRST_KUBERNETES_MINOR:
        first = min(v for v, k in KUBERNETES_MINOR_OF_OPENSHIFT.items() if k >= FIRST_KUBERNETES_MINOR)
        return ("--openshift-version %s: OpenShift %s is Kubernetes 1.%d, which does not serve ValidatingAdmissionPolicy "
                "admissionregistration.k8s.io/v1 (Kubernetes 1.%d, OpenShift %s, and later); nothing was written. Apply "
                "workloads.yml and clusterrole.yml alone there (docs/least-privilege.md)"
                % (openshift_version, minor, kubernetes, FIRST_KUBERNETES_MINOR, first))
    return None


# The taints that keep workloads off control-plane nodes (kubeadm and OpenShift set them; the second is the old name).
CONTROL_PLANE_TAINTS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")


def _clusterrole_generator():
    spec = importlib.util.spec_from_file_location("gen_clusterrole", os.path.join(ROOT, "hack", "gen_clusterrole.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _collection():
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(ROOT))))  # ansible_collections/ on the path
    from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue  # pylint: disable=import-outside-toplevel
    # pylint: disable-next=import-outside-toplevel
    from ansible_collections.gpudirect.openshift.plugins.module_utils import names
    from ansible_collections.gpudirect.openshift.plugins.module_utils.render import machineconfigs, plan, releases

    return catalogue, machineconfigs, names, plan, releases


def cel(value):
    """A CEL literal: strings single-quoted, lists and maps of them."""
    if isinstance(value, str):
        return "'%s'" % value.replace("\\", "\\\\").replace("'", "\\'")
    if isinstance(value, (list, tuple)):
        return "[%s]" % ", ".join(cel(v) for v in value)
    if isinstance(value, dict):
        return "{%s}" % ", ".join("%s: %s" % (cel(k), cel(v)) for k, v in sorted(value.items()))
    raise TypeError(value)


class Plan:
    """What the configurations render: MachineConfig names and roles, files, kernel arguments, image repositories,
    the operators' namespaces, packages and sources."""

    def __init__(self):
        self.machineconfig_roles = {}   # name -> role
        self.files = {}                 # path -> set of data URLs (None: any content, e.g. the udev rules)
        self.kernel_arguments = set()
        self.repositories = set()
        self.pinned_images = set()      # repository/image names rendered with a digest
        self.operators = {}             # namespace -> {"package", "sources", "source_namespaces"}
        self.subscription_config = False
        self.allow_control_plane = False
        self.allow_control_plane_pods = False

    def add_configuration(self, variables):
        catalogue, machineconfigs, names, plan, releases = _collection()
        # The renderer takes the gpudirect_rdma_* and operator variables; the facts role's setting is read here only.
        result = plan.render_all(dict((k, v) for k, v in variables.items() if k != "hardware_facts_allow_control_plane"))
        if result["errors"]:
            raise SystemExit("a configuration does not render: %s" % "; ".join(result["errors"]))
        for item in result["manifests"]:
            manifest = item["manifest"]
            if manifest["kind"] == "MachineConfig":
                name = manifest["metadata"]["name"]
                self.machineconfig_roles[name] = manifest["metadata"]["labels"][names.MCO_ROLE_LABEL]
                spec = manifest.get("spec") or {}
                self.kernel_arguments.update(spec.get("kernelArguments") or [])
                for entry in ((spec.get("config") or {}).get("storage") or {}).get("files") or []:
                    if entry["path"] != machineconfigs.UDEV_RULES_PATH:
                        self.files.setdefault(entry["path"], set()).add(entry["contents"]["source"])
        # The udev rules follow the nodes' NICs: their content is the configuration's, not fixed.
        self.files[machineconfigs.UDEV_RULES_PATH] = None
        for image in result["images"]:
            self.repositories.add(image["image"].rpartition("/")[0])
            if "@sha256:" in image["image"]:
                self.pinned_images.add(image_name(image["image"]))
        for components in releases.NETWORK_OPERATOR_RELEASES.values():
            for component in components.values():
                self.repositories.add(component["repository"].rstrip("/"))
                if "@sha256:" in component["version"]:
                    self.pinned_images.add("%s/%s" % (component["repository"].rstrip("/"), component["image"]))
        if variables.get("gpudirect_rdma_machineconfig_allow_control_plane"):
            self.allow_control_plane = True
        if variables.get("hardware_facts_allow_control_plane"):
            self.allow_control_plane_pods = True
        for operator in catalogue.resolve(variables):
            entry = self.operators.setdefault(operator["namespace"], {"package": operator["package"], "sources": set(),
                                                                      "source_namespaces": set()})
            entry["sources"].add(operator["source"] or operator["catalog_source"])
            entry["source_namespaces"].add(operator["source_namespace"] or catalogue.MARKETPLACE)
            if operator["subscription_config"]:
                self.subscription_config = True

    def check(self):
        if not self.allow_control_plane:
            for name, role in self.machineconfig_roles.items():
                if role in CONTROL_PLANE_POOLS:
                    raise SystemExit("MachineConfig %s is for the control-plane pool %s, which no configuration allows" % (name, role))


def image_name(reference):
    """'registry/repo/image:tag@sha256:...' -> 'registry/repo/image' (a registry's port stays: only the last segment's
    tag and digest go)."""
    repository, _slash, last = reference.partition("@")[0].rpartition("/")
    return "%s/%s" % (repository, last.partition(":")[0])


def configurations(var_files=()):
    """The variables of every example configuration (each also with MachineConfigs applied) and of ``var_files``."""
    gen = _clusterrole_generator()
    found = []
    for path in sorted(glob.glob(os.path.join(gen.EXAMPLES, "*.yml"))) + list(var_files):
        with open(path, encoding="utf-8") as handle:
            variables = yaml.safe_load(handle) or {}
        found.append(variables)
        wanted = list(variables.get("gpudirect_rdma_machineconfigs") or [])
        wanted += [m for m in gen.WITH_MACHINECONFIG["gpudirect_rdma_machineconfigs"] if m not in wanted]
        found.append(dict(variables, gpudirect_rdma_apply_machineconfigs=True, gpudirect_rdma_machineconfigs=wanted))
        if path in var_files and "persistent_names" not in wanted and variables.get("gpudirect_rdma_udev_rules"):
            found.append(dict(found[-1], gpudirect_rdma_machineconfigs=wanted + ["persistent_names"]))
    return found


def _labels():
    return {"app.kubernetes.io/name": "gpudirect-openshift", "app.kubernetes.io/part-of": "gpudirect.openshift"}


def _rule(group, version, resources):
    return {"apiGroups": [group], "apiVersions": [version], "operations": ["CREATE", "UPDATE"], "resources": resources}


def _images_ok(component, repositories):
    """CEL: a component map's `repository` is allowed and an `image` holding a '/' starts with an allowed one."""
    return ("((!has({c}.repository) || {c}.repository in {r}) && "
            "(!has({c}.image) || !{c}.image.contains('/') || {r}.exists(x, {c}.image.startsWith(x + '/'))))"
            .format(c=component, r=repositories))


def _digest_ok(component, pinned):
    """CEL: a component of an image the collection pins by digest names it by digest: `repository` + `image` with a
    `version` holding @sha256:, or a full `image` reference holding it."""
    return ("((!has({c}.repository) || !has({c}.image) || !((string({c}.repository) + '/' + string({c}.image)) in {p}) || "
            "(has({c}.version) && string({c}.version).contains('@sha256:'))) && "
            "(!has({c}.image) || !{p}.exists(x, string({c}.image) == x || string({c}.image).startsWith(x + ':') || "
            "string({c}.image).startsWith(x + '@')) || string({c}.image).contains('@sha256:')))".format(c=component, p=pinned))


def _placement_ok(component):
    """CEL: a component map has no node affinity and no toleration of a control-plane taint or of every taint."""
    return ("(!has({c}.nodeAffinity) && !has({c}.affinity) && (!has({c}.tolerations) || {c}.tolerations.all(t, "
            "has(t.key) && t.key != '' ? !(t.key in variables.controlPlaneTaints) : !(has(t.operator) && t.operator == 'Exists'))))"
            .format(c=component))


def policies(plan, username):
    plan.check()
    who = [{"name": "automation-identity", "expression": "request.userInfo.username == %s" % cel(username)}]
    docs = []
    mc_names = sorted(plan.machineconfig_roles)
    fixed_files = dict((path, sorted(sources)) for path, sources in plan.files.items() if sources is not None)
    any_content = sorted(path for path, sources in plan.files.items() if sources is None)
    machineconfig_validations = [
        {"expression": "object.metadata.name in variables.names",
         "messageExpression": "'MachineConfig ' + object.metadata.name + %s" % cel(
             " is not one the collection renders (%s); regenerate with hack/gen_admission_policies.py --vars" % ", ".join(mc_names))},
        {"expression": "has(object.metadata.labels) && 'machineconfiguration.openshift.io/role' in object.metadata.labels && "
                       "object.metadata.name in variables.names && "
                       "object.metadata.labels['machineconfiguration.openshift.io/role'] == variables.roles[object.metadata.name]",
         "messageExpression": "'MachineConfig ' + object.metadata.name + ' must carry the role label of the pool the collection "
                              "renders it for' + (object.metadata.name in variables.names ? ' (' + "
                              "variables.roles[object.metadata.name] + ')' : '')"},
        {"expression": "has(object.metadata.labels) && 'app.kubernetes.io/managed-by' in object.metadata.labels && "
                       "object.metadata.labels['app.kubernetes.io/managed-by'] == 'gpudirect.openshift'",
         "message": "MachineConfigs written by the automation carry app.kubernetes.io/managed-by: gpudirect.openshift"},
        {"expression": "!has(object.spec) || object.spec.all(k, k in ['config', 'kernelArguments'])",
         "message": "the collection's MachineConfigs set only spec.config and spec.kernelArguments "
                    "(no kernelType, extensions, osImageURL or fips)"},
        {"expression": "!has(object.spec) || !has(object.spec.config) || object.spec.config.all(k, k in ['ignition', 'storage'])",
         "message": "the collection's MachineConfigs carry no systemd units, users or other Ignition sections than storage files"},
        {"expression": "!has(object.spec) || !has(object.spec.config) || !has(object.spec.config.storage) || "
                       "object.spec.config.storage.all(k, k == 'files')",
         "message": "the collection's MachineConfigs write files only (no directories, links, disks or filesystems)"},
        {"expression": "!has(object.spec) || !has(object.spec.config) || !has(object.spec.config.storage) || "
                       "!has(object.spec.config.storage.files) || object.spec.config.storage.files.all(f, "
                       "f.path in variables.anyContent || (f.path in variables.files && has(f.contents) && "
                       "has(f.contents.source) && f.contents.source in variables.files[f.path]))",
         "message": "the collection writes only %s, and %s with their rendered content" % (
             ", ".join(any_content), ", ".join(sorted(fixed_files)))},
        {"expression": "!has(object.spec) || !has(object.spec.kernelArguments) || "
                       "object.spec.kernelArguments.all(a, a in variables.kernelArguments)",
         "message": "the collection sets only the kernel arguments %s" % ", ".join(sorted(plan.kernel_arguments))},
    ]
    # Each fixed content (a data URL) in a variable of its own: the file stays within its line length.
    contents = sorted(set(c for sources in fixed_files.values() for c in sources))
    content_variables = [{"name": "content%d" % index, "expression": cel(content)} for index, content in enumerate(contents)]
    files_map = "{%s}" % ", ".join("%s: [%s]" % (cel(path), ", ".join("variables.content%d" % contents.index(c) for c in sources))
                                   for path, sources in sorted(fixed_files.items()))
    docs.append(_policy("machineconfigs", [_rule("machineconfiguration.openshift.io", "v1", ["machineconfigs"])], who, [
        {"name": "names", "expression": cel(mc_names)},
        {"name": "roles", "expression": cel(plan.machineconfig_roles)},
    ] + content_variables + [
        {"name": "files", "expression": files_map},
        {"name": "anyContent", "expression": cel(any_content)},
        {"name": "kernelArguments", "expression": cel(sorted(plan.kernel_arguments))},
    ], machineconfig_validations))
    repositories = sorted(plan.repositories)
    component, child = "object.spec[k]", "object.spec[k][j]"
    operand_validations = [
        # The conditional operator, not `||`, guards the inner comprehension: cel-python (the simulator's CEL) raises on
        # a comprehension over a boolean even where `true || ...` would absorb the error (cel-go does absorb it).
        {"expression": "!has(object.spec) || object.spec.all(k, type(%s) == map ? (%s && %s.all(j, type(%s) == map ? %s : true)) : true)"
                       % (component, _images_ok(component, "variables.repositories"), component, child,
                          _images_ok(child, "variables.repositories")),
         "messageExpression": "object.kind + ' ' + object.metadata.name + %s" % cel(
             ": images only from the configured repositories %s; regenerate with hack/gen_admission_policies.py --vars "
             "for a mirror" % ", ".join(repositories))},
        # Only the NicClusterPolicy: the pinned images are the Network Operator's (render/releases.py); the conditional
        # keeps cel-python from walking the larger ClusterPolicy a second time (each write must answer within seconds).
        {"expression": "object.kind != 'NicClusterPolicy' || !has(object.spec) ? true : object.spec.all(k, type(%s) == map ? "
                       "(%s && %s.all(j, type(%s) == map ? %s : true)) : true)"
                       % (component, _digest_ok(component, "variables.pinnedImages"), component, child,
                          _digest_ok(child, "variables.pinnedImages")),
         "messageExpression": "object.kind + ' ' + object.metadata.name + %s" % cel(
             ": these images only by digest (@sha256:), as the release table pins them: %s" % ", ".join(sorted(plan.pinned_images)))},
        {"expression": "!has(object.spec) || (%s && object.spec.all(k, type(%s) == map ? (%s && %s.all(j, type(%s) == map ? %s : true)) : true))"
                       % (_placement_ok("object.spec"), component, _placement_ok(component), component, child, _placement_ok(child)),
         "messageExpression": "object.kind + ' ' + object.metadata.name + %s" % cel(
             ": no node affinity and no toleration of the control-plane taints (%s) or of every taint" % ", ".join(CONTROL_PLANE_TAINTS))},
    ]
    docs.append(_policy("operands", [_rule("mellanox.com", "*", ["nicclusterpolicies"]), _rule("nvidia.com", "*", ["clusterpolicies"]),
                                     _rule("nfd.openshift.io", "*", ["nodefeaturediscoveries"])], who, [
        {"name": "repositories", "expression": cel(repositories)},
        {"name": "pinnedImages", "expression": cel(sorted(plan.pinned_images))},
        {"name": "controlPlaneTaints", "expression": cel(list(CONTROL_PLANE_TAINTS))},
    ], operand_validations))
    packages = dict((ns, entry["package"]) for ns, entry in plan.operators.items())
    sources = dict((ns, sorted(entry["sources"])) for ns, entry in plan.operators.items())
    source_namespaces = dict((ns, sorted(entry["source_namespaces"])) for ns, entry in plan.operators.items())
    olm_validations = [
        {"expression": "object.metadata.namespace in variables.packages",
         "messageExpression": "object.kind + %s" % cel("s only in the operator namespaces %s" % ", ".join(sorted(packages)))},
        {"expression": "object.kind != 'Subscription' || (object.metadata.namespace in variables.packages && "
                       "object.spec.name == variables.packages[object.metadata.namespace])",
         "messageExpression": "'namespace ' + object.metadata.namespace + ' subscribes only to ' + "
                              "(object.metadata.namespace in variables.packages ? variables.packages[object.metadata.namespace] : 'nothing')"},
        {"expression": "object.kind != 'Subscription' || (object.metadata.namespace in variables.sources && "
                       "object.spec.source in variables.sources[object.metadata.namespace] && "
                       "object.spec.sourceNamespace in variables.sourceNamespaces[object.metadata.namespace])",
         "message": "a Subscription comes from its operator's CatalogSource: %s" % "; ".join(
             "%s from %s in %s" % (packages[ns], " or ".join(sources[ns]), " or ".join(source_namespaces[ns])) for ns in sorted(packages))},
        {"expression": "object.kind != 'OperatorGroup' || !has(object.spec) || (!has(object.spec.selector) && "
                       "(!has(object.spec.targetNamespaces) || size(object.spec.targetNamespaces) == 0 || "
                       "object.spec.targetNamespaces == [object.metadata.namespace]))",
         "message": "an OperatorGroup of the automation targets its own namespace or all namespaces, never others or a selector"},
    ]
    if not plan.subscription_config:
        olm_validations.append({"expression": "object.kind != 'Subscription' || !has(object.spec.config) || size(object.spec.config) == 0",
                                "message": "no Subscription spec.config (operator pod placement, environment): no configuration sets one"})
    docs.append(_policy("operators", [_rule("operators.coreos.com", "*", ["subscriptions", "operatorgroups"])], who, [
        {"name": "packages", "expression": cel(packages)},
        {"name": "sources", "expression": cel(sources)},
        {"name": "sourceNamespaces", "expression": cel(source_namespaces)},
    ], olm_validations))
    docs.append(_policy("pods", [_rule("", "v1", ["pods"])], who, [
        {"name": "hostPaths", "expression": cel(facts_host_paths())},
        {"name": "hostVolumes", "expression": "has(object.spec.volumes) ? "
                                              "object.spec.volumes.filter(v, has(v.hostPath)).map(v, v.name) : []"},
    ] + ([] if plan.allow_control_plane_pods else [
        {"name": "controlPlane", "expression": cel(list(CONTROL_PLANE_TAINTS))},
        {"name": "nodeAffinity", "expression": "has(object.spec.affinity) && has(object.spec.affinity.nodeAffinity) ? "
                                               "[object.spec.affinity.nodeAffinity] : []"}]),
        pod_validations() + ([] if plan.allow_control_plane_pods else pod_placement_validations())))
    if not plan.allow_control_plane_pods:
        docs.append(node_name_policy(who))
    return docs


def pod_placement_validations():
    """Pods of the automation stay off control-plane nodes by label and taint (issue 34: a facts pod on a control-plane
    node was admitted). The role labels and the taints have the same keys (kubeadm and OpenShift set both)."""
    # A node-affinity expression that selects control-plane nodes: In or Exists on a role label (NotIn and
    # DoesNotExist keep pods off them). The conditional operator guards each comprehension (cel-python, as above).
    selects = "(e.key in variables.controlPlane && (e.operator == 'In' || e.operator == 'Exists'))"
    terms = "(has({t}.matchExpressions) ? {t}.matchExpressions.all(e, !%s) : true)" % selects
    # variables.nodeAffinity: the pod's node affinity as a list of zero or one, so the field paths stay short.
    required = "a.requiredDuringSchedulingIgnoredDuringExecution"
    preferred = "a.preferredDuringSchedulingIgnoredDuringExecution"
    return [
        {"expression": "has(object.spec.nodeSelector) ? !object.spec.nodeSelector.exists(k, k in variables.controlPlane) : true",
         "messageExpression": "'pod ' + object.metadata.name + %s" % cel(
             ": no nodeSelector on the control-plane labels (%s); set hardware_facts_allow_control_plane and regenerate with "
             "hack/gen_admission_policies.py --vars" % ", ".join(CONTROL_PLANE_TAINTS))},
        {"expression": "variables.nodeAffinity.all(a, (has({r}) ? {r}.nodeSelectorTerms.all(t, {rt}) : true) && "
                       "(has({p}) ? {p}.all(p, {pt}) : true))"
                       .format(r=required, p=preferred, rt=terms.format(t="t"), pt=terms.format(t="p.preference")),
         "messageExpression": "'pod ' + object.metadata.name + %s" % cel(
             ": no node affinity onto control-plane nodes (%s)" % ", ".join(CONTROL_PLANE_TAINTS))},
        {"expression": "has(object.spec.tolerations) ? object.spec.tolerations.all(t, !has(t.key) || !(t.key in variables.controlPlane)) "
                       ": true",
         "messageExpression": "'pod ' + object.metadata.name + %s" % cel(
             ": no toleration of the control-plane taints (%s)" % ", ".join(CONTROL_PLANE_TAINTS))},
    ]


def node_name_policy(who):
    """Policy and bindings: a pod of the automation names no control-plane node (spec.nodeName, or the
    kubernetes.io/hostname nodeSelector the verify pods use). CEL reads no other object, so the control-plane Nodes are
    the policy's params (paramKind Node), selected by role label, one binding per label: kube-apiserver evaluates the
    validations once per param and skips the policy when no Node matches (parameterNotFoundAction: Allow), e.g. on a
    cluster whose nodes carry only one of the two labels (Kubernetes
    staging/src/k8s.io/api/admissionregistration/v1/types.go, ParamRef.selector and parameterNotFoundAction)."""
    name = "%s-pod-placement" % PREFIX
    hostname = "kubernetes.io/hostname"
    policy = {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name, "labels": _labels()},
              "spec": {"failurePolicy": "Fail", "paramKind": {"apiVersion": "v1", "kind": "Node"},
                       "matchConstraints": {"resourceRules": [_rule("", "v1", ["pods"])]},
                       "matchConditions": [dict(c) for c in who], "validations": [
                           {"expression": "!has(object.spec.nodeName) || object.spec.nodeName != params.metadata.name",
                            "messageExpression": "'pod ' + object.metadata.name + ' names the control-plane node ' + "
                                                 "params.metadata.name + %s" % cel(
                                                     "; set hardware_facts_allow_control_plane and regenerate with "
                                                     "hack/gen_admission_policies.py --vars")},
                           {"expression": "!has(object.spec.nodeSelector) || !(%s in object.spec.nodeSelector) || "
                                          "!has(params.metadata.labels) || !(%s in params.metadata.labels) || "
                                          "object.spec.nodeSelector[%s] != params.metadata.labels[%s]"
                                          % (cel(hostname), cel(hostname), cel(hostname), cel(hostname)),
                            "messageExpression": "'pod ' + object.metadata.name + ' selects the control-plane node ' + "
                                                 "params.metadata.name + ' by its kubernetes.io/hostname label'"}]}}
    bindings = [{"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicyBinding",
                 "metadata": {"name": "%s-%s" % (name, label.rpartition("/")[2]), "labels": _labels()},
                 "spec": {"policyName": name, "validationActions": ["Deny"],
                          "paramRef": {"selector": {"matchExpressions": [{"key": label, "operator": "Exists"}]},
                                       "parameterNotFoundAction": "Allow"}}}
                for label in CONTROL_PLANE_TAINTS]
    return [policy] + bindings


def facts_host_paths():
    """The host paths the facts pods mount (cluster/node_facts.py: /sys and the /proc entries the collector reads)."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(ROOT))))
    from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster import node_facts  # pylint: disable=import-outside-toplevel

    return ["/sys"] + ["/proc/" + entry for _volume, entry, _kind in node_facts.PROC_MOUNTS]


def pod_validations():
    """Pods of the automation (facts and verify): host paths only where the facts pods read, and only read-only.
    An SCC can allow hostPath volumes or not, but not limit their paths or make them read-only (issue 34)."""
    # The conditional operator guards each comprehension, as in the operand policy (cel-python, the simulator's CEL).
    mounts_read_only = ("(has({c}) ? {c}.all(c, has(c.volumeMounts) ? c.volumeMounts.all(m, "
                        "!(m.name in variables.hostVolumes) || (has(m.readOnly) && m.readOnly)) : true) : true)")
    return [
        {"expression": "has(object.spec.volumes) ? object.spec.volumes.all(v, !has(v.hostPath) || "
                       "v.hostPath.path in variables.hostPaths) : true",
         "messageExpression": "'pod ' + object.metadata.name + %s" % cel(
             ": host paths only %s, which the facts pods read" % ", ".join(facts_host_paths()))},
        {"expression": " && ".join(mounts_read_only.format(c="object.spec." + field)
                                   for field in ("containers", "initContainers", "ephemeralContainers")),
         "messageExpression": "'pod ' + object.metadata.name + ': host paths are mounted read-only'"},
    ]


def _policy(suffix, rules, conditions, variables, validations):
    name = "%s-%s" % (PREFIX, suffix)
    policy = {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name, "labels": _labels()},
              "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": rules},
                       "matchConditions": [dict(c) for c in conditions], "variables": variables, "validations": validations}}
    binding = {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name, "labels": _labels()},
               "spec": {"policyName": name, "validationActions": ["Deny"]}}
    return [policy, binding]


HEADER = """\
# Generated by hack/gen_admission_policies.py from what the collection renders (the example configurations and the
# operator catalogue). Do not edit: run `python hack/gen_admission_policies.py` (add `--vars FILE` for your
# configuration: other names, pools, mirrors); tests/integration/test_admission_policies.py fails while this file is
# out of date. See docs/least-privilege.md.
# Needs Kubernetes 1.30 or later (OpenShift 4.17 or later). Apply once as a cluster administrator, with the role:
#   oc apply -f deploy/rbac/workloads.yml -f deploy/rbac/clusterrole.yml -f deploy/rbac/admission-policies.yml
# The policies apply only to the service account gpudirect-automation; they refuse what the collection never writes.
"""


def generate(var_files=()):
    gen = _clusterrole_generator()
    plan = Plan()
    for variables in configurations(var_files):
        plan.add_configuration(variables)
    namespace, account = gen.SERVICE_ACCOUNT
    docs = [d for pair in policies(plan, "system:serviceaccount:%s:%s" % (namespace, account)) for d in pair]
    listing = {"apiVersion": "v1", "kind": "List", "items": docs}
    return HEADER + "---\n" + yaml.dump(listing, Dumper=gen._IndentedDumper, sort_keys=False,  # pylint: disable=protected-access
                                        default_flow_style=False, width=100)


def load_documents(path=OUTPUT):
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)["items"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--output", default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="compare with --output instead of writing it; exit 1 when different")
    parser.add_argument("--vars", action="append", default=[], help="a variables file whose rendered objects to admit as well")
    parser.add_argument("--openshift-version", help="the cluster's OpenShift version: refuse, before writing, one that does "
                                                    "not serve the policies' API (older than 4.17)")
    args = parser.parse_args(argv)
    if args.openshift_version:
        problem = openshift_version_problem(args.openshift_version)
        if problem:
            print(problem, file=sys.stderr)
            return 2
    text = generate(var_files=args.vars)
    if args.check:
        current = open(args.output, encoding="utf-8").read() if os.path.exists(args.output) else ""
        if current != text:
            sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True), args.output, "generated"))
            print("%s is out of date: run python hack/gen_admission_policies.py" % args.output, file=sys.stderr)
            return 1
        print("%s is up to date" % args.output, file=sys.stderr)
        return 0
    with open(args.output, "w", encoding="utf-8") as handle:
        handle.write(text)
    print("wrote %s" % args.output, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
