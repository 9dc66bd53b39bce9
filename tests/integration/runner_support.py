"""Running the collection's playbooks the way AWX does: ansible-runner with a private data directory."""

import json
import os
from pathlib import Path

import ansible_runner
import yaml

ROOT = Path(__file__).resolve().parents[2]
# What an AWX job's environment must not inherit from the developer's shell: any way to reach a cluster.
CLUSTER_ENV = ("KUBECONFIG", "K8S_AUTH_KUBECONFIG", "K8S_AUTH_CONTEXT", "K8S_AUTH_HOST", "K8S_AUTH_API_KEY",
               "K8S_AUTH_USERNAME", "K8S_AUTH_PASSWORD", "K8S_AUTH_VERIFY_SSL", "K8S_AUTH_SSL_CA_CERT",
               "K8S_AUTH_CERT_FILE", "K8S_AUTH_KEY_FILE", "K8S_AUTH_PROXY")
LOCAL_HOST = {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}
# A valid GPUDirect RDMA configuration (gpudirect_rdma_* variables, docs/input-model.md) for each simulated
# profile, naming NIC ports that profile has.
PROFILE_VARIABLES = {
    "roce-lab": {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "roce",
                 "gpudirect_rdma_nic_interfaces": ["ens1f0np0"], "gpudirect_rdma_ipam_range": "192.168.2.0/24"},
    "infiniband-lab": {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "infiniband",
                       "gpudirect_rdma_nic_interfaces": ["ibp26s0"], "gpudirect_rdma_ipam_range": "192.168.6.0/24"},
    "mixed-lab": {"gpudirect_rdma_method": "shared_device", "gpudirect_rdma_fabric": "roce",
                  "gpudirect_rdma_nic_interfaces": ["ens8f0np0"], "gpudirect_rdma_ipam_range": "192.168.3.0/24"},
}


def isolate_from_clusters(monkeypatch, tmp_path):
    """No kubeconfig anywhere: empty HOME (no ~/.kube/config), no KUBECONFIG or K8S_AUTH_* variables.
    ANSIBLE_CONFIG is dropped so that, as in AWX, the project's own ansible.cfg (in the working directory) applies."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in CLUSTER_ENV + ("ANSIBLE_CONFIG",):
        monkeypatch.delenv(name, raising=False)
    return home


def private_data_dir(tmp_path, hosts, envvars=None, extravars=None):
    """An ansible-runner private data directory: project = this repository (as AWX checks it out),
    inventory/hosts with `hosts` ({name: hostvars}), env/envvars and env/extravars."""
    pdd = tmp_path / "runner"
    (pdd / "inventory").mkdir(parents=True)
    (pdd / "env").mkdir()
    os.symlink(ROOT, pdd / "project")
    inventory = {"all": {"hosts": {name: dict(LOCAL_HOST, **(hostvars or {})) for name, hostvars in hosts.items()}}}
    (pdd / "inventory" / "hosts").write_text(yaml.safe_dump(inventory, sort_keys=False))
    if envvars:
        (pdd / "env" / "envvars").write_text(yaml.safe_dump(envvars))
    if extravars:
        (pdd / "env" / "extravars").write_text(json.dumps(extravars))
    return pdd


def run_site(pdd, forks=None, playbook="playbooks/site.yml", tags=None):
    kwargs = {"private_data_dir": str(pdd), "playbook": playbook, "quiet": True, "ident": "job"}
    if forks:
        kwargs["forks"] = forks
    if tags:
        kwargs["tags"] = tags
    return ansible_runner.run(**kwargs)


def module_results(runner, action):
    """{host: res} of every successful task whose resolved action is `action`."""
    results = {}
    for event in runner.events:
        data = event.get("event_data", {})
        if event.get("event") == "runner_on_ok" and data.get("resolved_action") == action:
            results.setdefault(data["host"], []).append(data["res"])
    return results


def failure_messages(runner):
    return [str(event["event_data"]["res"].get("msg")) for event in runner.events
            if event.get("event") == "runner_on_failed"]


def host_stats(runner):
    """{host: {'ok': n, 'failures': n, ...}} from the playbook_on_stats event."""
    stats = runner.stats or {}
    hosts = set()
    for counts in stats.values():
        if isinstance(counts, dict):
            hosts.update(counts)
    return {h: {k: (stats.get(k) or {}).get(h, 0) for k in ("ok", "changed", "failures", "dark", "skipped")}
            for h in hosts}


def files_containing(directory, needle):
    """Paths under `directory` (recursively, symlinks not followed) whose bytes contain `needle`."""
    found = []
    for dirpath, _dirs, files in os.walk(directory):
        for name in files:
            path = Path(dirpath) / name
            if path.is_symlink():
                continue
            if needle.encode() in path.read_bytes():
                found.append(path)
    return found
