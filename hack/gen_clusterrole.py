"""Generate deploy/rbac/clusterrole.yml from what the collection's playbooks really ask of the API.

Runs site.yml (SR-IOV with MachineConfigs, then host device, so objects are created, pruned and waited on), site.yml in
check mode, must_gather.yml, teardown.yml (with MachineConfigs and namespaces), and verify.yml / facts.yml when they
exist, against the simulated cluster; reads the simulator's request log (group, resource incl. subresource, verb)
and writes the smallest ClusterRole that allows exactly those requests, plus a ServiceAccount and a
ClusterRoleBinding to use it, as the items of one `kind: List` document (`oc apply -f` takes it as is).

    source hack/env.sh
    python hack/gen_clusterrole.py                 # rewrite deploy/rbac/clusterrole.yml
    python hack/gen_clusterrole.py --check         # exit 1 when the committed file is out of date
    python hack/gen_clusterrole.py --output FILE   # write elsewhere

Three normalisations keep the result independent of timing and of the configurations run (docs/least-privilege.md):
every resource that is listed may also be watched (a wait opens a watch only when its first list does not already
satisfy it); what the collection creates it may also patch and update (a later run with other variables changes
it), except the short-lived pods, ConfigMaps, ServiceAccounts and RoleBindings of facts and verification; and the
RDMA configuration kinds share one rule (one code path applies, prunes and waits on whichever the method uses).
SUPPLEMENT lists the few requests the scenario does not make.
"""

import argparse
import difflib
import os
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "deploy", "rbac", "clusterrole.yml")
EXAMPLES = os.path.join(ROOT, "playbooks", "vars", "examples")
ROLE_NAME = "gpudirect-openshift"
SERVICE_ACCOUNT = ("gpudirect-automation", "gpudirect-automation")  # (namespace, name)
ALL_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
# The RDMA configuration kinds (the rdma role's rdma_managed_kinds): one code path applies, prunes and waits on
# whichever of them the chosen method uses, so they share one rule.
RDMA_KINDS = {
    ("mellanox.com", "macvlannetworks"), ("mellanox.com", "ipoibnetworks"), ("mellanox.com", "hostdevicenetworks"),
    ("sriovnetwork.openshift.io", "sriovnetworks"), ("sriovnetwork.openshift.io", "sriovibnetworks"),
    ("sriovnetwork.openshift.io", "sriovnetworknodepolicies"), ("sriovnetwork.openshift.io", "sriovnetworkpoolconfigs"),
}
# Short-lived objects of the facts and verification pods: created and deleted, never changed.
CREATE_ONLY = {("", "pods"), ("", "configmaps"), ("", "serviceaccounts"), ("rbac.authorization.k8s.io", "rolebindings")}
# Requests the scenario does not make: (group, resource, verb, why).
SUPPLEMENT = (
    ("apiextensions.k8s.io", "customresourcedefinitions", "delete",
     "teardown_remove_crds=true deletes the CRDs the operators' CSVs own; the scenario's teardown keeps them"),
)
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


def run_scenario(log=sys.stderr):
    """Run every step against a fresh simulated cluster; return the request log entries."""
    from simulator import SimulatedCluster

    with SimulatedCluster(profile="mixed-lab") as sim:
        env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1")
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
        return sim.requests.entries()


def permissions(entries):
    """{(group, resource): set(verbs)} from request log entries (discovery and non-resource requests left out)."""
    used = {}
    for entry in entries:
        if not entry.get("plural") or entry.get("code") in (401,):
            continue
        resource = entry["plural"] + ("/" + entry["subresource"] if entry.get("subresource") else "")
        used.setdefault((entry.get("group") or "", resource), set()).add(entry["verb"])
    for key, verbs in used.items():
        if "list" in verbs:
            verbs.add("watch")
        if "create" in verbs and key not in CREATE_ONLY:
            verbs.update(("patch", "update"))
    rdma_verbs = set()
    for key, verbs in used.items():
        if key in RDMA_KINDS:
            rdma_verbs |= verbs
    if rdma_verbs:
        for key in RDMA_KINDS:
            used[key] = set(used.get(key, set())) | rdma_verbs
    for group, resource, verb, _why in SUPPLEMENT:
        used.setdefault((group, resource), set()).add(verb)
    return used


def sorted_verbs(verbs):
    return sorted(verbs, key=ALL_VERBS.index)


def rules_from(used):
    """RBAC rules: per API group, resources with the same verbs share a rule; stable order."""
    by_group = {}
    for (group, resource), verbs in used.items():
        by_group.setdefault(group, {}).setdefault(tuple(sorted_verbs(verbs)), []).append(resource)
    rules = []
    for group in sorted(by_group):
        for verbs, resources in sorted(by_group[group].items(), key=lambda kv: sorted(kv[1])):
            rules.append({"apiGroups": [group], "resources": sorted(resources), "verbs": list(verbs)})
    return rules


def documents(rules):
    namespace, account = SERVICE_ACCOUNT

    def labels():  # a fresh dict each time: a shared one would be dumped as a YAML anchor and aliases
        return {"app.kubernetes.io/name": "gpudirect-openshift", "app.kubernetes.io/part-of": "gpudirect.openshift"}

    return [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": ROLE_NAME, "labels": labels()},
         "rules": rules},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": namespace, "labels": labels()}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": ROLE_NAME, "labels": labels()},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE_NAME},
         "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]},
    ]


HEADER = """\
# Generated by hack/gen_clusterrole.py from the requests site.yml, must_gather.yml and teardown.yml make
# (simulator request log). Do not edit: run `python hack/gen_clusterrole.py` after changing what the collection
# asks of the API; tests/integration/test_least_privilege.py fails while this file is out of date.
# See docs/least-privilege.md. The ServiceAccount and ClusterRoleBinding are an example: the namespace
# gpudirect-automation must exist (oc create namespace gpudirect-automation).
"""


class _IndentedDumper(yaml.SafeDumper):
    """Indents sequences under their key, as yamllint's default indentation rule wants."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def render(rules):
    # One document (a List) rather than a multi-document stream: yamllint and some tools expect a single document.
    listing = {"apiVersion": "v1", "kind": "List", "items": documents(rules)}
    body = yaml.dump(listing, Dumper=_IndentedDumper, sort_keys=False, default_flow_style=False, width=200)
    extra = "".join("# %s %s/%s: %s\n" % (verb, group or "core", resource, why) for group, resource, verb, why in SUPPLEMENT)
    return HEADER + "# Added by hand because the simulator cannot exercise them:\n" + extra + "---\n" + body


def generate(log=sys.stderr):
    return render(rules_from(permissions(run_scenario(log))))


# -- enforcement in the simulator -----------------------------------------------------------------------------------


def forbidden_message(verb, group, plural, subresource):
    resource = plural + ("/" + subresource if subresource else "")
    namespace, account = SERVICE_ACCOUNT
    return '%s is forbidden: User "system:serviceaccount:%s:%s" cannot %s resource "%s" in API group "%s"' % (
        plural, namespace, account, verb, resource, group)


def enforce(sim, rules):
    """Make ``sim`` answer 403 Forbidden (real Status body) to every resource request ``rules`` do not allow.

    Built on the fault injector, whose first matching rule wins: per served resource and subresource, a pass-through
    rule for the allowed verbs, then a 403 rule for every verb. Discovery and /version stay open, as for any
    authenticated user.
    """
    allowed = {}
    for rule in rules:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                allowed.setdefault((group, resource), set()).update(rule["verbs"])
    subresources = []
    mains = []
    for rtype in sim.store.resource_types():
        mains.append((rtype.group, rtype.plural))
        for sub in rtype.subresources:
            subresources.append((rtype.group, rtype.plural, sub))
    # Subresources first: a rule without `subresource` would match them too.
    for group, plural, sub in sorted(set(subresources)):
        verbs = sorted(allowed.get((group, "%s/%s" % (plural, sub)), ()))
        if verbs:
            sim.faults.add(verb=verbs, group=group, plural=plural, subresource=sub)
        for verb in ALL_VERBS:
            sim.faults.add(verb=verb, group=group, plural=plural, subresource=sub, code=403,
                           message=forbidden_message(verb, group, plural, sub))
    for group, plural in sorted(set(mains)):
        verbs = sorted(allowed.get((group, plural), ()))
        if verbs:
            sim.faults.add(verb=verbs, group=group, plural=plural)
        for verb in ALL_VERBS:
            sim.faults.add(verb=verb, group=group, plural=plural, code=403, message=forbidden_message(verb, group, plural, None))


def load_rules(path=OUTPUT):
    with open(path, encoding="utf-8") as handle:
        for doc in yaml.safe_load_all(handle):
            for item in (doc or {}).get("items") or [doc or {}]:
                if item.get("kind") == "ClusterRole":
                    return item["rules"]
    raise SystemExit("%s holds no ClusterRole" % path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--output", default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="compare with --output instead of writing it; exit 1 when different")
    args = parser.parse_args(argv)
    text = generate()
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
