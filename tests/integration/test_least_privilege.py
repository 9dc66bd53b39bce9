"""deploy/rbac/clusterrole.yml is what the collection really uses, and enough for it.

1. Regenerating it from the simulator's request log (hack/gen_clusterrole.py) gives the committed file, so a change
   that uses a new verb or resource fails here until the role is regenerated.
2. With the simulator enforcing the committed role (403 Forbidden for anything else), site.yml, must_gather.yml and
   teardown.yml pass without a single refused request; without one permission, site.yml fails with the API
   server's Forbidden message.
"""

import copy
import importlib.util
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "playbooks", "vars", "examples", "1-shared-device-roce.yml")


def generator():
    spec = importlib.util.spec_from_file_location("gen_clusterrole", os.path.join(ROOT, "hack", "gen_clusterrole.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_playbook(sim, playbook, *args):
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1")
    return subprocess.run(["ansible-playbook", os.path.join(ROOT, "playbooks", playbook)] + list(args), cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False, timeout=600)


def refused(sim, since=0):
    return [(e["verb"], e["group"], e["plural"], e["subresource"]) for e in sim.requests.entries(since) if e["code"] == 403]


def test_committed_clusterrole_is_what_the_playbooks_use():
    gen = generator()
    with open(gen.OUTPUT, encoding="utf-8") as handle:
        committed = handle.read()
    generated = gen.generate()
    assert generated == committed, "deploy/rbac/clusterrole.yml is out of date: run `python hack/gen_clusterrole.py`"
    rules = gen.load_rules()
    verbs = {(g, r): set(rule["verbs"]) for rule in rules for g in rule["apiGroups"] for r in rule["resources"]}
    # Spot checks of what the role must and must not hold.
    assert {"create", "delete"} <= verbs[("operators.coreos.com", "subscriptions")]
    assert "update" in verbs[("operators.coreos.com", "installplans")]
    assert {"create", "patch", "delete", "list", "watch"} <= verbs[("mellanox.com", "nicclusterpolicies")]
    assert all(r != "secrets" for (_g, r) in verbs), "nothing in the collection may read Secrets"
    assert all("*" not in rule["verbs"] and "*" not in rule["resources"] and "*" not in rule["apiGroups"] for rule in rules)


def test_site_must_gather_and_teardown_pass_under_the_generated_role(sim_factory, tmp_path):
    gen = generator()
    rules = gen.load_rules()
    sim = sim_factory(profile="mixed-lab")
    gen.enforce(sim, rules)
    # The enforcement is real: something outside the role is refused with the API server's body.
    from kubernetes.dynamic.exceptions import ForbiddenError

    client = sim.dynamic_client()
    secrets = client.resources.get(api_version="v1", kind="Secret")
    try:
        secrets.get(namespace="default")
        denied = None
    except ForbiddenError as exc:
        denied = exc
    assert denied is not None, "listing secrets must be forbidden under the generated role"
    body = denied.body.decode() if isinstance(denied.body, bytes) else str(denied.body)
    assert '"reason":"Forbidden"' in body.replace(" ", "") and "cannot list resource" in body
    mark = sim.mark()

    proc = run_playbook(sim, "site.yml", "-e", "@" + EXAMPLE)
    assert proc.returncode == 0, proc.stdout[-4000:]
    proc = run_playbook(sim, "must_gather.yml", "-e", "diagnostics_dest=%s" % (tmp_path / "gather"))
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "forbidden" not in (tmp_path / "gather" / "summary.md").read_text()
    proc = run_playbook(sim, "teardown.yml", "-e", "teardown_remove_namespaces=true")
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert refused(sim, mark) == []
    assert sim.count(writes_only=True, since=mark) > 20


def test_a_missing_permission_fails_with_forbidden(sim_factory):
    gen = generator()
    rules = copy.deepcopy(gen.load_rules())
    for rule in rules:
        if rule["apiGroups"] == ["mellanox.com"] and "nicclusterpolicies" in rule["resources"]:
            rule["verbs"] = [v for v in rule["verbs"] if v != "create"]
    sim = sim_factory(profile="mixed-lab")
    gen.enforce(sim, rules)
    proc = run_playbook(sim, "site.yml", "-e", "@" + EXAMPLE, "--tags", "nvidia_network_operator")
    assert proc.returncode != 0
    assert 'cannot create resource \\"nicclusterpolicies\\" in API group \\"mellanox.com\\"' in proc.stdout or \
        'cannot create resource "nicclusterpolicies" in API group "mellanox.com"' in proc.stdout, proc.stdout[-4000:]
    assert refused(sim) == [("create", "mellanox.com", "nicclusterpolicies", None)]
