"""Diagnostics: the diagnostics role (through playbooks/must_gather.yml and site.yml's rescue) against the simulator.

A GPU operator whose CSV fails makes site.yml fail; the artifacts must then hold the objects that explain it, one
YAML file per kind and namespace, a summary.md that quotes the error and names the failed CSV, and no secret.
"""

import glob
import os
import subprocess

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "playbooks", "vars", "examples", "1-shared-device-roce.yml")
GPU_NAMESPACE = "nvidia-gpu-operator"
# Fail the GPU operator fast: its CSV goes Failed and the role gives up after one second of it.
FAIL_FAST = ["-e", "nvidia_gpu_operator_failure_grace_period=1", "-e", "nvidia_gpu_operator_wait_timeout=120"]


def run_playbook(sim, playbook, *args, artifacts=None):
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=sim.kubeconfig, ANSIBLE_NOCOLOR="1")
    if artifacts:
        env["GPUDIRECT_ARTIFACTS_DIR"] = str(artifacts)
    return subprocess.run(["ansible-playbook", os.path.join(ROOT, "playbooks", playbook)] + list(args), cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False, timeout=600)


def load(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def failing_cluster(sim_factory):
    return sim_factory(profile="mixed-lab", faults={"operator_faults": {"csv_failure": {"gpu-operator-certified": "InstallComponentFailed"}}})


# Every common form a credential takes in a pod or an event (security issue, point 5); none may reach a file.
PLANTED = ("pod-env-password-4711", "planted-db-pass", "planted-arg-secret", "planted-flag-secret", "planted-url-pw",
           "cGxhbnRlZDpiYXNpYw", "planted-event-token", "planted-bearer-abcdef")


def plant_sensitive_pod(sim):
    """A pod in an operator namespace whose environment and arguments carry credentials, and an event that does."""
    client = sim.dynamic_client()
    client.resources.get(api_version="v1", kind="Pod").create(namespace=GPU_NAMESPACE, body={
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "uploader", "namespace": GPU_NAMESPACE},
        "spec": {"containers": [{"name": "main", "image": "registry.example/uploader:1",
                                 "command": ["/bin/upload", "--password=planted-arg-secret"],
                                 "args": ["--token", "planted-flag-secret",
                                          "--registry=https://bob:planted-url-pw@registry.example/v2"],
                                 "env": [{"name": "REGISTRY_PASSWORD", "value": "pod-env-password-4711"},
                                         {"name": "DB_PASS", "value": "planted-db-pass"},
                                         {"name": "LOG_LEVEL", "value": "debug"},
                                         {"name": "API_KEY", "valueFrom": {"secretKeyRef": {"name": "up", "key": "k"}}}]}]}})
    client.resources.get(api_version="v1", kind="Event").create(namespace=GPU_NAMESPACE, body={
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "uploader.1", "namespace": GPU_NAMESPACE},
        "involvedObject": {"kind": "Pod", "name": "uploader", "namespace": GPU_NAMESPACE}, "type": "Warning",
        "reason": "BackOff", "message": "GET https://registry.example/v2 with Authorization: Basic cGxhbnRlZDpiYXNpYw== "
                                        "failed; retry with token=planted-event-token or Bearer planted-bearer-abcdef"})


def test_site_failure_leaves_diagnostics_that_explain_it(sim_factory, tmp_path):
    sim = failing_cluster(sim_factory)
    artifacts = tmp_path / "artifacts"
    proc = run_playbook(sim, "site.yml", "-e", "@" + EXAMPLE, *FAIL_FAST, artifacts=artifacts)
    assert proc.returncode != 0, proc.stdout[-3000:]
    # The play still fails, quoting the original error.
    assert "InstallComponentFailed" in proc.stdout
    # The implicit localhost: its directory is named by the API server URL (issue 31 point 5).
    summaries = glob.glob(str(artifacts / "127.0.0.1" / "*" / "summary.md"))
    assert len(summaries) == 1, "site.yml's rescue wrote no diagnostics under %s:\n%s" % (artifacts, proc.stdout[-3000:])
    dest = os.path.dirname(summaries[0])
    summary = open(summaries[0], encoding="utf-8").read()
    assert "## Failure" in summary and "InstallComponentFailed" in summary
    assert "Failed" in summary and "gpu-operator-certified" in summary
    csvs = load(os.path.join(dest, GPU_NAMESPACE, "clusterserviceversions.yaml"))["items"]
    assert [c["status"]["phase"] for c in csvs] == ["Failed"]
    assert csvs[0]["status"]["conditions"], "CSV conditions must be kept"


def test_must_gather_writes_one_file_per_kind_and_namespace_with_a_fixed_number_of_requests(sim_factory, tmp_path):
    sim = failing_cluster(sim_factory)  # site.yml stops at the GPU operator: no ClusterPolicy, no networks
    # An empty cluster first: most kinds are not served yet, the number of requests is the same.
    dest_empty = tmp_path / "empty"
    mark = sim.mark()
    proc = run_playbook(sim, "must_gather.yml", "-e", "diagnostics_dest=%s" % dest_empty)
    assert proc.returncode == 0, proc.stdout[-3000:]
    requests_empty = sim.count(verb="list", since=mark)
    assert sim.count(writes_only=True, include_dry_run=True, since=mark) == 0
    empty_summary = (dest_empty / "summary.md").read_text()
    assert "## Not collected" in empty_summary and "NicClusterPolicy: not served" in empty_summary

    proc = run_playbook(sim, "site.yml", "-e", "@" + EXAMPLE, *FAIL_FAST, artifacts=tmp_path / "site-artifacts")
    assert proc.returncode != 0
    plant_sensitive_pod(sim)

    dest = tmp_path / "gather"
    mark = sim.mark()
    proc = run_playbook(sim, "must_gather.yml", "-e", "diagnostics_dest=%s" % dest)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert sim.count(writes_only=True, include_dry_run=True, since=mark) == 0
    assert sim.count(verb="list", since=mark) == requests_empty
    assert sim.count(verb="get", since=mark, plural="secrets") == 0 and sim.count(verb="list", since=mark, plural="secrets") == 0

    files = sorted(os.path.relpath(p, dest) for p in glob.glob(str(dest / "**" / "*"), recursive=True) if os.path.isfile(p))
    for expected in ("summary.md", "cluster-scoped/nodes.yaml", "cluster-scoped/nicclusterpolicies.yaml", "cluster-scoped/machineconfigpools.yaml",
                     "openshift-marketplace/catalogsources.yaml", "openshift-nfd/nodefeaturediscoveries.yaml",
                     "openshift-sriov-network-operator/sriovoperatorconfigs.yaml", "nvidia-gpu-operator/subscriptions.yaml",
                     "nvidia-gpu-operator/installplans.yaml", "nvidia-gpu-operator/operatorgroups.yaml",
                     "nvidia-gpu-operator/clusterserviceversions.yaml", "nvidia-gpu-operator/pods.yaml"):
        assert expected in files, (expected, files)
    for name in files:
        mode = os.stat(dest / name).st_mode & 0o777
        assert mode == 0o600, (name, oct(mode))
        if name.endswith(".yaml"):
            data = load(dest / name)
            assert data["kind"] == "List" and data["items"], name
            assert all("managedFields" not in item["metadata"] for item in data["items"]), name
            # One kind per file, all of it from the file's namespace.
            assert len({item["kind"] for item in data["items"]}) == 1, name
            namespace = name.split("/")[0]
            assert {item["metadata"].get("namespace") or "cluster-scoped" for item in data["items"]} == {namespace}, name

    nodes = load(dest / "cluster-scoped" / "nodes.yaml")["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == sorted(n.name for n in sim.profile.nodes)
    assert all(set(n["status"]) >= {"capacity", "allocatable", "conditions"} and n["metadata"]["labels"] for n in nodes)
    assert not any("images" in n["status"] for n in nodes)

    pods = load(dest / GPU_NAMESPACE / "pods.yaml")["items"]
    (uploader,) = [p for p in pods if p["metadata"]["name"] == "uploader"]
    # Pods are reduced to names, images, states and valueFrom references: no env values, no command, no args.
    assert uploader["spec"]["containers"] == [{"name": "main", "image": "registry.example/uploader:1", "env": [
        {"name": "API_KEY", "valueFrom": {"secretKeyRef": {"name": "up", "key": "k"}}}]}]
    events = load(dest / GPU_NAMESPACE / "events.yaml")["items"]
    message = [e["message"] for e in events if e["metadata"]["name"] == "uploader.1"][0]
    assert message.startswith("GET https://registry.example/v2 with Authorization: Basic <redacted>"), message
    for name in files:
        text = (dest / name).read_text()
        assert [secret for secret in PLANTED if secret in text] == [], name

    summary = (dest / "summary.md").read_text()
    assert "ClusterServiceVersion nvidia-gpu-operator/gpu-operator-certified" in summary and "InstallComponentFailed" in summary
    assert "| ClusterServiceVersion | nvidia-gpu-operator | 1 | nvidia-gpu-operator/clusterserviceversions.yaml |" in summary
    assert "NicClusterPolicy: not served" not in summary


def test_must_gather_reports_what_it_may_not_read_and_still_succeeds(sim_factory, tmp_path):
    sim = sim_factory(profile="roce-lab")
    sim.faults.add(verb="list", plural="nodes", code=403,
                   message='nodes is forbidden: User "system:serviceaccount:ci:gather" cannot list resource "nodes" in API group "" at the cluster scope')
    dest = tmp_path / "gather"
    proc = run_playbook(sim, "must_gather.yml", "-e", "diagnostics_dest=%s" % dest)
    assert proc.returncode == 0, proc.stdout[-3000:]
    summary = (dest / "summary.md").read_text()
    assert "- Node: forbidden for these credentials" in summary
    assert not (dest / "cluster-scoped" / "nodes.yaml").exists()
    assert (dest / "openshift-marketplace" / "catalogsources.yaml").exists()


def test_must_gather_against_an_api_server_that_does_not_answer_says_so_after_one_request(sim_factory, tmp_path):
    """Issue 18 point 7: one probe (GET /version, no retries) instead of every list through the retry policy; the
    summary says the API server did not answer, not that nothing is abnormal."""
    sim = sim_factory(profile="roce-lab")
    warm = run_playbook(sim, "must_gather.yml", "-e", "diagnostics_dest=%s" % (tmp_path / "warm"))
    assert warm.returncode == 0, warm.stdout[-3000:]  # the client's discovery cache now exists, as after any run
    sim.stop()
    dest = tmp_path / "gather"
    proc = run_playbook(sim, "must_gather.yml", "-e", "diagnostics_dest=%s" % dest)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "Diagnostics could not be collected" in proc.stdout, proc.stdout[-3000:]
    if (dest / "summary.md").exists():  # written when the client could be built from its cache
        summary = (dest / "summary.md").read_text()
        assert "the API server did not answer" in summary and "nothing abnormal" not in summary, summary
        assert sorted(p.name for p in dest.iterdir()) == ["summary.md"]


def test_a_failure_preflight_finds_leaves_no_diagnostics(sim_factory, tmp_path):
    """A run stopped by preflight wrote nothing and its message says what is wrong: no diagnostics directory, no
    diagnostics requests."""
    sim = sim_factory(profile="mixed-lab")
    artifacts = tmp_path / "artifacts"
    proc = run_playbook(sim, "site.yml", "-e", "@" + EXAMPLE, "-e", "nfd_channel=no-such-channel", artifacts=artifacts)
    assert proc.returncode != 0
    assert "Preflight found" in proc.stdout, proc.stdout[-3000:]
    assert not glob.glob(str(artifacts / "**" / "summary.md"), recursive=True)
    assert "Collect diagnostics (objects as YAML" not in proc.stdout
