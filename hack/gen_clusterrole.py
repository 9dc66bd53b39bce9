"""Generate deploy/rbac/clusterrole.yml from what the collection's playbooks really ask of the API.

Runs site.yml (SR-IOV with MachineConfigs, then host device, so objects are created, pruned and waited on), site.yml in
check mode, facts.yml, verify.yml, must_gather.yml and teardown.yml (with MachineConfigs and namespaces) against the
simulated cluster, reads the simulator's request log (group, resource incl. subresource, verb, namespace, name) and
writes, as the items of one `kind: List` document (`oc apply -f` takes it as is):

- a ClusterRole for what is cluster-scoped or read across namespaces: `create`, `list` and `watch` by kind, and
  `get`, `update`, `patch` and `delete` only on the names the collection uses (`resourceNames`);
- a Role in each namespace the collection works in (operator namespaces, the facts namespace, the networks'
  namespace of verification, gpudirect-verify, openshift-marketplace for reading the catalogue) with that namespace's verbs: pods,
  pod logs, ConfigMaps and the OLM objects are never granted cluster-wide;
- the Namespaces those Roles live in, the ServiceAccount gpudirect-automation and the bindings.

    source hack/env.sh
    python hack/gen_clusterrole.py                      # rewrite deploy/rbac/clusterrole.yml
    python hack/gen_clusterrole.py --check              # exit 1 when the committed file is out of date
    python hack/gen_clusterrole.py --vars my-vars.yml   # also allow the names your configuration renders
    python hack/gen_clusterrole.py --output FILE        # write elsewhere

Normalisations keep the result independent of timing and of the configurations run (docs/least-privilege.md):
every resource that is listed may also be watched; what the collection creates it may also patch and update
(by name), except the short-lived pods and ConfigMaps of facts and verification; the RDMA configuration kinds share
one rule and their names are those every example configuration (and --vars) renders; CRDs may be read (the schema
check before writing a custom resource) and deleted (teardown_remove_crds) by the names of the operators' CRDs.
"""

import argparse
import difflib
import glob
import os
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "deploy", "rbac", "clusterrole.yml")
EXAMPLES = os.path.join(ROOT, "playbooks", "vars", "examples")
ROLE_NAME = "gpudirect-openshift"
SERVICE_ACCOUNT = ("gpudirect-automation", "gpudirect-automation")  # (namespace, name)
ALL_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "bind", "escalate", "use")
NAMED_VERBS = ("get", "update", "patch", "delete")
# The RDMA configuration kinds (the rdma role's rdma_managed_kinds): one code path applies, prunes and waits on
# whichever of them the chosen method uses, so they share one rule.
RDMA_KINDS = {
    ("mellanox.com", "macvlannetworks"), ("mellanox.com", "ipoibnetworks"), ("mellanox.com", "hostdevicenetworks"),
    ("sriovnetwork.openshift.io", "sriovnetworks"), ("sriovnetwork.openshift.io", "sriovibnetworks"),
    ("sriovnetwork.openshift.io", "sriovnetworknodepolicies"), ("sriovnetwork.openshift.io", "sriovnetworkpoolconfigs"),
}
OLM_KINDS = (("operators.coreos.com", "subscriptions"), ("operators.coreos.com", "installplans"),
             ("operators.coreos.com", "clusterserviceversions"), ("operators.coreos.com", "operatorgroups"))
# Short-lived objects of the facts and verification pods: created and deleted, never changed.
CREATE_ONLY = {("", "pods"), ("", "configmaps")}
# Never granted across all namespaces: a cluster-wide right on these reads any workload's spec, logs or secrets.
NAMESPACE_ONLY = {("", "pods"), ("", "pods/log"), ("", "configmaps"), ("", "serviceaccounts"), ("", "secrets"),
                  ("", "events"), ("rbac.authorization.k8s.io", "rolebindings"), ("rbac.authorization.k8s.io", "roles")}
# The API groups whose CRDs teardown_remove_crds may delete (the four operators').
OPERATOR_CRD_GROUPS = ("nfd.openshift.io", "nfd.k8s-sigs.io", "sriovnetwork.openshift.io", "mellanox.com", "nvidia.com")
# Machine configuration: MachineConfig and SR-IOV on top of configuration 5, so one cluster sees every layer.
WITH_MACHINECONFIG = {"gpudirect_rdma_apply_machineconfigs": True, "gpudirect_rdma_machineconfigs": ["irdma_blacklist", "crio_memlock"]}


def example(name):
    return "@" + os.path.join(EXAMPLES, name)


def scenario():
    """(playbook, extra arguments) in order, all against one mixed-lab cluster."""
    import json

    steps = [
        ("site.yml", [example("5-sriov-legacy-roce.yml"), json.dumps(WITH_MACHINECONFIG)]),
        # Another method: the SR-IOV objects are pruned and a NicClusterPolicy patched. The RDMA kinds share one rule,
        # so one switch covers them all.
        ("site.yml", [example("3-host-device-roce.yml")]),
        ("site.yml --check", [example("3-host-device-roce.yml")]),
    ]
    reports = os.path.join(ROOT, ".cache", "gen-clusterrole")
    for optional in ("facts.yml", "verify.yml"):
        if os.path.exists(os.path.join(ROOT, "playbooks", optional)):
            steps.append((optional, [example("3-host-device-roce.yml"), "hardware_facts_report_dir=%s" % reports]))
    steps += [
        ("must_gather.yml", ["diagnostics_dest=%s" % os.path.join(reports, "gather")]),
        ("teardown.yml", ["teardown_machineconfigs=true", "teardown_remove_namespaces=true"]),
    ]
    return steps


def prepare_memlock_pool(sim):
    """What an administrator does once before crio_memlock (docs/least-privilege.md): label the GPU nodes for the
    custom pool gpudirect-rdma and create it from deploy/. Done as the cluster's admin, not by the automation."""
    client = sim.dynamic_client()
    nodes = client.resources.get(api_version="v1", kind="Node")
    for worker in sim.profile.workers:
        if worker.gpus:
            nodes.patch(name=worker.name, body={"metadata": {"labels": {"node-role.kubernetes.io/gpudirect-rdma": ""}}},
                        content_type="application/merge-patch+json")
    with open(os.path.join(ROOT, "deploy", "machineconfigpool-gpudirect-rdma.yml"), encoding="utf-8") as handle:
        pool = yaml.safe_load(handle)
    client.resources.get(api_version=pool["apiVersion"], kind=pool["kind"]).create(body=pool)


def run_scenario(log=sys.stderr, kubeconfig_token=None, setup=None):
    """Run every step against a fresh simulated cluster; return (request log entries, {(group, plural): namespaced},
    names of the operators' CRDs). ``setup(sim)`` may return a token to run the playbooks with (tests)."""
    from simulator import SimulatedCluster

    with SimulatedCluster(profile="mixed-lab") as sim:
        prepare_memlock_pool(sim)
        admin_requests = len(sim.requests.entries())  # the administrator's, not the automation's
        kubeconfig = sim.kubeconfig
        token = setup(sim) if setup else kubeconfig_token
        if token:
            kubeconfig = sim.write_kubeconfig(os.path.join(os.path.dirname(sim.kubeconfig), "automation.kubeconfig"), token=token)
        env = dict(os.environ, K8S_AUTH_KUBECONFIG=kubeconfig, ANSIBLE_NOCOLOR="1")
        for name in ("KUBECONFIG", "K8S_AUTH_HOST", "K8S_AUTH_API_KEY"):
            env.pop(name, None)
        for playbook, extra in scenario():
            words = playbook.split()
            cmd = ["ansible-playbook", os.path.join(ROOT, "playbooks", words[0])] + words[1:]
            for item in extra:
                cmd += ["-e", item]
            print(">> %s" % " ".join([words[0]] + words[1:] + [os.path.basename(e) for e in extra]), file=log)
            proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise SystemExit("%s failed against the simulator:\n%s%s" % (" ".join(cmd), proc.stdout[-5000:], proc.stderr[-3000:]))
        types = [(t.group, t.kind, t.plural, t.namespaced) for t in sim.store.resource_types()]
        crds = sorted("%s.%s" % (plural, group) for (group, plural) in sim.crds if group in OPERATOR_CRD_GROUPS)
        return sim.requests.entries()[admin_requests:], types, crds


def rendered_names(types, var_files=()):
    """{(group, plural): names} of the cluster-scoped objects the example configurations (and ``var_files``) render."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(ROOT))))  # ansible_collections/ on the path
    from ansible_collections.gpudirect.openshift.plugins.module_utils.render.plan import render_all

    plurals = dict(((group, kind), plural) for group, kind, plural, _namespaced in types)
    names = {}
    files = sorted(glob.glob(os.path.join(EXAMPLES, "*.yml"))) + list(var_files)
    for path in files:
        with open(path, encoding="utf-8") as handle:
            variables = yaml.safe_load(handle) or {}
        for machine_configs in (False, True):
            if machine_configs:
                wanted = list(variables.get("gpudirect_rdma_machineconfigs") or [])
                wanted += [m for m in WITH_MACHINECONFIG["gpudirect_rdma_machineconfigs"] if m not in wanted]
                variables = dict(variables, gpudirect_rdma_apply_machineconfigs=True, gpudirect_rdma_machineconfigs=wanted)
            result = render_all(variables)
            if result["errors"]:
                raise SystemExit("%s does not render: %s" % (path, "; ".join(result["errors"])))
            for item in result["manifests"]:
                manifest = item["manifest"]
                if manifest["metadata"].get("namespace"):
                    continue
                group = manifest["apiVersion"].rpartition("/")[0]
                names.setdefault((group, plurals[(group, manifest["kind"])]), set()).add(manifest["metadata"]["name"])
    return names


class Permissions:
    """What the request log shows, split into cluster-wide and per-namespace rights."""

    def __init__(self):
        self.cluster = {}   # (group, resource) -> set(verbs) without names
        self.named = {}     # (group, resource) -> {verb: set(names)}
        self.namespaced = {}  # namespace -> {(group, resource): set(verbs)}

    def add(self, entry, scopes):
        if entry["verb"] == "patch" and entry.get("created_name") and \
                (entry.get("content_type") or "").startswith("application/apply-patch"):
            # A server-side apply that creates is authorized as a create as well (k8s.io/apiserver handlers/patch.go).
            self.add(dict(entry, verb="create"), scopes)
        group, plural = entry.get("group") or "", entry["plural"]
        resource = plural + ("/" + entry["subresource"] if entry.get("subresource") else "")
        verb, namespace = entry["verb"], entry.get("namespace")
        name = entry.get("name") or entry.get("created_name")
        if scopes.get((group, plural)) and namespace:
            self.namespaced.setdefault(namespace, {}).setdefault((group, resource), set()).add(verb)
            return
        if scopes.get((group, plural)) and (group, resource) in NAMESPACE_ONLY:
            raise SystemExit("the collection %ss %s in all namespaces (%s %s); scope it to its own namespaces"
                             % (verb, resource, entry.get("method"), entry.get("path")))
        if verb in NAMED_VERBS and not scopes.get((group, plural)):
            self.named.setdefault((group, resource), {}).setdefault(verb, set()).add(name)
        else:
            self.cluster.setdefault((group, resource), set()).add(verb)
        if verb == "create" and name and not scopes.get((group, plural)):
            self.named.setdefault((group, resource), {}).setdefault("create", set()).add(name)

    def normalise(self, rendered, crds):
        for verbs in list(self.cluster.values()) + [v for ns in self.namespaced.values() for v in ns.values()]:
            if "list" in verbs:
                verbs.add("watch")
        for rules in self.namespaced.values():
            for key, verbs in rules.items():
                if "create" in verbs and key not in CREATE_ONLY:
                    verbs.update(("patch", "update"))
        # Cluster-scoped objects the collection creates it may later change and delete, by name.
        for key, by_verb in self.named.items():
            created = by_verb.pop("create", set())
            for verb in ("get", "patch", "update", "delete") if created else ():
                by_verb.setdefault(verb, set()).update(created)
        # The RDMA kinds share one rule; their names are what every example renders.
        rdma_cluster, rdma_named, rdma_ns = set(), set(), set()
        for key in RDMA_KINDS:
            rdma_cluster |= self.cluster.get(key, set())
            rdma_named |= set(self.named.get(key, {}))
            for rules in self.namespaced.values():
                rdma_ns |= rules.get(key, set())
        for key in RDMA_KINDS:
            if key[0] == "mellanox.com":  # cluster-scoped
                self.cluster[key] = set(rdma_cluster)
                by_verb = self.named.setdefault(key, {})
                for verb in rdma_named:
                    by_verb.setdefault(verb, set()).update(rendered.get(key, set()))
        for rules in self.namespaced.values():
            if any(key in rules for key in RDMA_KINDS):
                for key in RDMA_KINDS:
                    if key[0] != "mellanox.com":
                        rules[key] = rules.get(key, set()) | rdma_ns
        # Every operator namespace gets the same OLM verbs: which operator waits on an InstallPlan to approve
        # depends on its approval setting, not on the operator.
        olm_verbs = {}
        for rules in self.namespaced.values():
            for key in OLM_KINDS:
                olm_verbs.setdefault(key, set()).update(rules.get(key, set()))
        for rules in self.namespaced.values():
            if ("operators.coreos.com", "subscriptions") in rules:
                for key in OLM_KINDS:
                    rules[key] = set(olm_verbs[key])
        for key, by_verb in self.named.items():
            for verb in by_verb:
                by_verb[verb] |= rendered.get(key, set())
        # get: apply_manifests reads the CRD of every custom resource it writes (schema check); delete: teardown.
        for verb in ("get", "delete"):
            self.named.setdefault(("apiextensions.k8s.io", "customresourcedefinitions"), {}).setdefault(verb, set()).update(crds)
        for key, by_verb in self.named.items():
            for verb in by_verb:
                by_verb[verb].discard(None)


def sorted_verbs(verbs):
    return sorted(verbs, key=ALL_VERBS.index)


def _grouped(pairs):
    """Rules from {(group, resource): (verbs tuple, names tuple)}: resources with the same verbs and names share one."""
    by_group = {}
    for (group, resource), (verbs, names) in pairs.items():
        by_group.setdefault(group, {}).setdefault((verbs, names), []).append(resource)
    rules = []
    for group in sorted(by_group):
        for (verbs, names), resources in sorted(by_group[group].items(), key=lambda kv: sorted(kv[1])):
            rule = {"apiGroups": [group], "resources": sorted(resources)}
            if names:
                rule["resourceNames"] = list(names)
            rule["verbs"] = list(verbs)
            rules.append(rule)
    return rules


def cluster_rules(perms):
    pairs = {}
    for key, verbs in perms.cluster.items():
        pairs[key] = (tuple(sorted_verbs(verbs)), ())
    named_pairs = {}
    for key, by_verb in perms.named.items():
        by_names = {}
        for verb, names in by_verb.items():
            if names:
                by_names.setdefault(tuple(sorted(names)), set()).add(verb)
        for names, verbs in by_names.items():
            named_pairs.setdefault(key, []).append((tuple(sorted_verbs(verbs)), names))
    rules = _grouped(pairs)
    for key in sorted(named_pairs):
        for verbs, names in sorted(named_pairs[key]):
            rules.append({"apiGroups": [key[0]], "resources": [key[1]], "resourceNames": list(names), "verbs": list(verbs)})
    return rules


def namespace_rules(perms):
    return dict((namespace, _grouped(dict((key, (tuple(sorted_verbs(verbs)), ())) for key, verbs in rules.items())))
                for namespace, rules in perms.namespaced.items())


def labels():  # a fresh dict each time: a shared one would be dumped as a YAML anchor and aliases
    return {"app.kubernetes.io/name": "gpudirect-openshift", "app.kubernetes.io/part-of": "gpudirect.openshift"}


def documents(cluster, per_namespace, existing_namespaces):
    account_ns, account = SERVICE_ACCOUNT

    def subjects():  # fresh each time, or YAML would share it through an anchor
        return [{"kind": "ServiceAccount", "name": account, "namespace": account_ns}]

    docs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels()}}
            for ns in sorted(set(per_namespace) | {account_ns}) if ns not in existing_namespaces]
    docs += [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": account_ns, "labels": labels()}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": ROLE_NAME, "labels": labels()},
         "rules": cluster},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": ROLE_NAME, "labels": labels()},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE_NAME}, "subjects": subjects()},
    ]
    for namespace in sorted(per_namespace):
        docs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                     "metadata": {"name": ROLE_NAME, "namespace": namespace, "labels": labels()}, "rules": per_namespace[namespace]})
        docs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                     "metadata": {"name": ROLE_NAME, "namespace": namespace, "labels": labels()},
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ROLE_NAME}, "subjects": subjects()})
    return docs


HEADER = """\
# Generated by hack/gen_clusterrole.py from the requests the playbooks make (simulator request log). Do not edit:
# run `python hack/gen_clusterrole.py` after changing what the collection asks of the API (add `--vars FILE` when
# your configuration uses other names); tests/integration/test_least_privilege.py fails while this file is out of
# date. See docs/least-privilege.md.
# Apply once as a cluster administrator, after deploy/rbac/workloads.yml:
#   oc apply -f deploy/rbac/workloads.yml -f deploy/rbac/clusterrole.yml
#   oc -n gpudirect-automation create token gpudirect-automation --duration=2h
# The Namespaces below are created without the collection's managed-by label, so teardown never deletes them (or
# the Roles in them). Creating MachineConfigs cannot be limited by name and amounts to cluster-admin on the nodes.
"""


class _IndentedDumper(yaml.SafeDumper):
    """Indents sequences under their key, as yamllint's default indentation rule wants."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def render(docs):
    # One document (a List) rather than a multi-document stream: yamllint and some tools expect a single document.
    listing = {"apiVersion": "v1", "kind": "List", "items": docs}
    body = yaml.dump(listing, Dumper=_IndentedDumper, sort_keys=False, default_flow_style=False, width=200)
    return HEADER + "---\n" + body


# Namespaces every OpenShift cluster has, and those deploy/rbac/workloads.yml creates (the generated file must not try
# to own them).
EXISTING_NAMESPACES = {"default", "openshift-marketplace", "kube-system", "gpudirect-facts", "gpudirect-verify"}


def generate(log=sys.stderr, var_files=()):
    entries, types, crds = run_scenario(log)
    scopes = dict(((group, plural), namespaced) for group, _kind, plural, namespaced in types)
    perms = Permissions()
    for entry in entries:
        # The permission check's reviews (authorization.k8s.io) are every authenticated user's through the bootstrap
        # ClusterRole system:basic-user (kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go).
        if entry.get("plural") and entry.get("code") not in (401, 403) and entry.get("group") != "authorization.k8s.io":
            perms.add(entry, scopes)
    perms.normalise(rendered_names(types, var_files), crds)
    return render(documents(cluster_rules(perms), namespace_rules(perms), EXISTING_NAMESPACES))


def load_documents(path=OUTPUT):
    with open(path, encoding="utf-8") as handle:
        docs = [d for d in yaml.safe_load_all(handle) if d]
    return [i for d in docs for i in (d.get("items") if d.get("kind") == "List" else [d])]


def load_rules(path=OUTPUT):
    for item in load_documents(path):
        if item.get("kind") == "ClusterRole":
            return item["rules"]
    raise SystemExit("%s holds no ClusterRole" % path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--output", default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="compare with --output instead of writing it; exit 1 when different")
    parser.add_argument("--vars", action="append", default=[], help="a variables file whose rendered names to allow as well")
    args = parser.parse_args(argv)
    text = generate(var_files=args.vars)
    if args.check:
        current = open(args.output, encoding="utf-8").read() if os.path.exists(args.output) else ""
        if current != text:
            sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True), args.output, "generated"))
            print("%s is out of date: run python hack/gen_clusterrole.py" % args.output, file=sys.stderr)
            return 1
        print("%s is up to date" % args.output, file=sys.stderr)
        return 0
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as handle:
        handle.write(text)
    print("wrote %s" % args.output, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
