"""The system kubectl (/usr/bin/kubectl, the client users and CI scripts run) against the simulated API server over TLS.

Kept with the simulator's own tests: what is under test is the simulator's HTTP API as a strict real client sees it
(OpenAPI, Table printing, authorization reviews, discovery), not the collection. One simulated cluster (with its
operators) serves the module; every test works in its own namespace or on its own objects, so the order does not
matter.

Expected outputs are the real API server's and kubectl's, from their source (Kubernetes v1.32):
- `get` columns: pkg/printers/internalversion/printers.go, and the CRDs' additionalPrinterColumns
  (apiextensions-apiserver tableconvertor); kubectl upper-cases column names and adds NAMESPACE with -A
  (staging/src/k8s.io/cli-runtime/pkg/printers/tableprinter.go);
- `explain`: staging/src/k8s.io/kubectl/pkg/explain/v2/templates/plaintext.tmpl (GROUP, KIND, VERSION, FIELD,
  DESCRIPTION, FIELDS) over the CRD's own schema;
- `auth can-i`: staging/src/k8s.io/kubectl/pkg/cmd/auth/cani.go (prints yes / no, exit code 0 / 1; --list prints
  Resources, Non-Resource URLs, Resource Names, Verbs);
- `rollout status`: staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go (the messages quoted below);
- `delete --wait`: staging/src/k8s.io/kubectl/pkg/cmd/delete/delete.go (waits until the object is gone).
"""

import gzip
import json
import os
import signal
import subprocess
import time

import pytest
import yaml

from simulator import SimulatedCluster
from simulator.crds import DEFAULT_CRD_DIR

KUBECTL = "/usr/bin/kubectl"
NETWORK_OPERATOR = """\
apiVersion: v1
kind: Namespace
metadata:
  name: nvidia-network-operator
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: nvidia-network-operator
  namespace: nvidia-network-operator
spec:
  targetNamespaces: [nvidia-network-operator]
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: nvidia-network-operator
  namespace: nvidia-network-operator
spec:
  name: nvidia-network-operator
  channel: stable
  source: certified-operators
  sourceNamespace: openshift-marketplace
  installPlanApproval: Automatic
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: {ns}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
      - name: web
        image: registry.example/web:1
"""


class Kubectl:
    def __init__(self, kubeconfig, cache_dir):
        self.kubeconfig, self.cache_dir = kubeconfig, cache_dir

    def argv(self, args, kubeconfig=None):
        return [KUBECTL, "--kubeconfig", kubeconfig or self.kubeconfig, "--cache-dir", self.cache_dir] + list(args)

    def run(self, *args, stdin=None, check=True, kubeconfig=None, timeout=60):
        done = subprocess.run(self.argv(args, kubeconfig), input=stdin, capture_output=True, text=True,
                              timeout=timeout, check=False)
        if check and done.returncode != 0:
            pytest.fail("kubectl %s failed (%d):\n%s%s" % (" ".join(args), done.returncode, done.stdout, done.stderr),
                        pytrace=False)
        return done

    def out(self, *args, **kwargs):
        return self.run(*args, **kwargs).stdout

    def start(self, *args):
        return subprocess.Popen(self.argv(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)


def _kubectl_present():
    if not (os.path.isfile(KUBECTL) and os.access(KUBECTL, os.X_OK)):
        pytest.fail("%s is missing: this suite drives the system kubectl (the machine image ships it); install kubectl "
                    "1.32 or newer there" % KUBECTL, pytrace=False)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    _kubectl_present()
    crd_dir = os.environ.get("GPUDIRECT_CRD_DIR") or DEFAULT_CRD_DIR
    # The simulator runs the Deployment controller (controllers/workloads.py). The tests that write a Deployment's
    # status themselves, to see how kubectl reads each state, keep it out of their namespaces (workload_controller_hold:
    # as on a real cluster before the controller's queue reaches them).
    sim = SimulatedCluster(crd_dir=crd_dir, tls=True,
                           faults={"operator_faults": {"workload_controller_hold": ["k-apply", "k-wait", "k-rollout"]}})
    sim.start()
    try:
        yield sim
    finally:
        sim.stop()


@pytest.fixture(scope="module")
def kubectl(cluster, tmp_path_factory):
    home = tmp_path_factory.mktemp("kubectl")
    return Kubectl(cluster.write_kubeconfig(str(home / "kubeconfig")), str(home / "cache"))


@pytest.fixture(scope="module")
def network_operator(kubectl):
    """The NVIDIA Network Operator installed through OLM with kubectl (client-side apply with validation)."""
    applied = kubectl.out("apply", "-f", "-", stdin=NETWORK_OPERATOR)
    assert "subscription.operators.coreos.com/nvidia-network-operator created" in applied
    kubectl.run("wait", "--for=jsonpath={.status.state}=AtLatestKnown", "subscription/nvidia-network-operator",
                "-n", "nvidia-network-operator", "--timeout=60s")
    kubectl.run("wait", "--for=condition=Established", "crd/nicclusterpolicies.mellanox.com", "--timeout=60s")
    return "nvidia-network-operator"


def _namespace(kubectl, name):
    kubectl.run("create", "namespace", name)
    return name


def _rows(text):
    return [line.split() for line in text.strip().splitlines()]


def _header(text):
    """The header row's column names (split on runs of two or more spaces: names like NODE SELECTOR hold one)."""
    import re

    return re.split(r"\s{2,}", text.splitlines()[0].strip())


def _crd(path_tail, plural):
    for root, _dirs, files in os.walk(DEFAULT_CRD_DIR):
        for name in files:
            if plural in name and path_tail in root:
                with (gzip.open if name.endswith(".gz") else open)(os.path.join(root, name), "rt") as handle:
                    return yaml.safe_load(handle)
    raise AssertionError("no CRD file for %s" % plural)


# ------------------------------------------------------------------------------------------------- discovery
def test_api_resources_show_short_names_and_categories(kubectl):
    wide = kubectl.out("api-resources", "-o", "wide")
    pods = next(line.split() for line in wide.splitlines() if line.startswith("pods "))
    assert pods[1] == "po" and pods[-1] == "all", pods
    in_all = kubectl.out("api-resources", "--categories=all", "-o", "name").split()
    assert set(in_all) == {"pods", "services", "daemonsets.apps", "deployments.apps"}, in_all
    sccs = next(line.split() for line in wide.splitlines() if line.startswith("securitycontextconstraints "))
    assert sccs[1] == "scc"


def test_get_all_lists_the_all_category(kubectl):
    ns = _namespace(kubectl, "k-all")
    kubectl.run("apply", "-f", "-", stdin=DEPLOYMENT.format(ns=ns, replicas=1))
    out = kubectl.out("get", "all", "-n", ns)
    assert "deployment.apps/web" in out, out


# ------------------------------------------------------------------------------------------------- tables
def test_get_nodes_prints_the_node_columns_and_wide_ones(kubectl, cluster):
    header = _header(kubectl.out("get", "nodes"))
    assert header == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"], header
    wide = kubectl.out("get", "nodes", "-o", "wide")
    assert _header(wide) == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
                             "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    node = next(r for r in _rows(wide)[1:] if r[0] == "worker-0")
    stored = yaml.safe_load(kubectl.out("get", "node", "worker-0", "-o", "yaml"))
    internal = next(a["address"] for a in stored["status"]["addresses"] if a["type"] == "InternalIP")
    assert node[1:3] == ["Ready", "worker"] and node[4] == stored["status"]["nodeInfo"]["kubeletVersion"]
    assert node[5] == internal and node[6] == "<none>"


def test_get_csv_all_namespaces_prints_the_crd_columns(kubectl, network_operator):
    out = kubectl.out("get", "csv", "-A")
    columns = ["NAMESPACE", "NAME"] + [c["name"].upper() for c in next(
        v for v in _crd("operator-framework-api", "clusterserviceversions")["spec"]["versions"]
        if v["name"] == "v1alpha1")["additionalPrinterColumns"]]
    assert _header(out) == columns, out
    assert {"DISPLAY", "VERSION", "REPLACES", "PHASE"} <= set(columns)
    csv = yaml.safe_load(kubectl.out("get", "csv", "-n", network_operator, "-o", "yaml"))["items"][0]
    line = next(line for line in out.splitlines() if line.startswith(network_operator))
    assert csv["metadata"]["name"] in line and csv["spec"]["displayName"] in line and line.endswith("Succeeded")


def test_custom_columns_and_jsonpath(kubectl):
    ns = _namespace(kubectl, "k-columns")
    kubectl.run("create", "configmap", "settings", "--from-literal=mtu=9000", "-n", ns)
    out = kubectl.out("get", "configmaps", "-n", ns, "-o", "custom-columns=NAME:.metadata.name,MTU:.data.mtu")
    assert _rows(out)[-1] == ["settings", "9000"]
    assert kubectl.out("get", "configmap", "settings", "-n", ns, "-o", "jsonpath={.data.mtu}") == "9000"
    assert _header(kubectl.out("get", "configmaps", "-n", ns)) == ["NAME", "DATA", "AGE"]
    assert _rows(kubectl.out("get", "configmaps", "settings", "-n", ns))[1][:2] == ["settings", "1"]


def test_get_watch_prints_table_rows(kubectl):
    ns = _namespace(kubectl, "k-watch")
    watcher = kubectl.start("get", "configmaps", "-n", ns, "-w")
    try:
        time.sleep(1.0)  # the list before the watch; an object created before it still shows, in the list
        kubectl.run("create", "configmap", "watched", "--from-literal=a=b", "-n", ns)
        deadline = time.monotonic() + 30
        lines = []
        while time.monotonic() < deadline:
            line = watcher.stdout.readline()
            lines.append(line)
            if line.startswith("watched"):
                break
        assert lines and lines[-1].split()[:2] == ["watched", "1"], lines
        assert any(line.split()[:3] == ["NAME", "DATA", "AGE"] for line in lines), lines
    finally:
        os.killpg(watcher.pid, signal.SIGTERM)
        watcher.communicate(timeout=10)


# ------------------------------------------------------------------------------------------------- OpenAPI
def test_explain_reads_the_crd_schema(kubectl, network_operator):
    out = kubectl.out("explain", "nicclusterpolicy.spec.rdmaSharedDevicePlugin")
    schema = next(v for v in _crd("network-operator", "nicclusterpolicies")["spec"]["versions"]
                  if v["name"] == "v1alpha1")["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "rdmaSharedDevicePlugin"]
    lines = out.splitlines()
    assert lines[:3] == ["GROUP:      mellanox.com", "KIND:       NicClusterPolicy", "VERSION:    v1alpha1"], lines
    assert "FIELD: rdmaSharedDevicePlugin <Object>" in lines
    assert " ".join(schema["description"].split()) in " ".join(out.split())
    fields = [line.split()[0] for line in lines[lines.index("FIELDS:") + 1:] if line.startswith("  ") and
              not line.startswith("    ")]
    assert fields == sorted(schema["properties"]), fields
    assert "  image\t<string> -required-" in lines


def test_client_side_apply_validates_against_the_server(kubectl, network_operator):
    bad = "apiVersion: mellanox.com/v1alpha1\nkind: NicClusterPolicy\nmetadata:\n  name: k-bogus\nspec:\n  bogus: 1\n"
    done = kubectl.run("apply", "-f", "-", stdin=bad, check=False)
    assert done.returncode == 1
    assert 'strict decoding error: unknown field "spec.bogus"' in done.stderr, done.stderr
    assert "failed to download openapi" not in done.stderr


def test_openapi_v2_and_v3_documents(kubectl, network_operator):
    # json, not yaml: the documents are megabytes of JSON, which PyYAML parses slowly.
    index = json.loads(kubectl.out("get", "--raw", "/openapi/v3"))
    url = index["paths"]["apis/mellanox.com/v1alpha1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/mellanox.com/v1alpha1?hash=")
    document = json.loads(kubectl.out("get", "--raw", url))
    schema = document["components"]["schemas"]["com.mellanox.v1alpha1.NicClusterPolicy"]
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "mellanox.com", "kind": "NicClusterPolicy", "version": "v1alpha1"}]
    v2 = json.loads(kubectl.out("get", "--raw", "/openapi/v2"))
    assert v2["swagger"] == "2.0" and "com.mellanox.v1alpha1.NicClusterPolicy" in v2["definitions"]


# ------------------------------------------------------------------------------------------------- writes


def test_server_side_apply_and_diff(kubectl):
    ns = _namespace(kubectl, "k-apply")
    manifest = DEPLOYMENT.format(ns=ns, replicas=2)
    assert kubectl.out("apply", "--server-side", "-f", "-", stdin=manifest).strip() == \
        "deployment.apps/web serverside-applied"
    managers = kubectl.out("get", "deployment", "web", "-n", ns, "--show-managed-fields", "-o",
                           "jsonpath={.metadata.managedFields[*].manager}")
    assert managers.split() == ["kubectl"]
    assert kubectl.run("diff", "--server-side", "-f", "-", stdin=manifest).stdout == ""
    changed = kubectl.run("diff", "-f", "-", stdin=DEPLOYMENT.format(ns=ns, replicas=3), check=False)
    assert changed.returncode == 1, changed.stderr
    assert "-  replicas: 2" in changed.stdout and "+  replicas: 3" in changed.stdout
    assert kubectl.out("get", "deployment", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}") == "2"
    assert kubectl.out("apply", "-f", "-", stdin=DEPLOYMENT.format(ns=ns, replicas=3)).strip() == \
        "deployment.apps/web configured"
    wide = kubectl.out("get", "deployment", "web", "-n", ns, "-o", "wide")
    assert _header(wide) == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    row = _rows(wide)[1]
    assert row[:4] == ["web", "0/3", "0", "0"] and row[5:] == ["web", "registry.example/web:1", "app=web"]


def test_label_annotate_and_every_patch_type(kubectl):
    ns = _namespace(kubectl, "k-patch")
    kubectl.run("create", "configmap", "cm", "--from-literal=a=1", "-n", ns)
    kubectl.run("apply", "-f", "-", stdin=DEPLOYMENT.format(ns=ns, replicas=1))
    assert kubectl.out("label", "configmap", "cm", "team=rdma", "-n", ns).strip() == "configmap/cm labeled"
    assert kubectl.out("annotate", "configmap", "cm", "note=x", "-n", ns).strip() == "configmap/cm annotated"
    kubectl.run("patch", "configmap", "cm", "-n", ns, "--type=json", "-p", '[{"op":"add","path":"/data/b","value":"2"}]')
    kubectl.run("patch", "configmap", "cm", "-n", ns, "--type=merge", "-p", '{"data":{"c":"3"}}')
    kubectl.run("patch", "deployment", "web", "-n", ns, "--type=strategic", "-p",
                '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"registry.example/web:2"}]}}}}')
    got = yaml.safe_load(kubectl.out("get", "configmap", "cm", "-n", ns, "-o", "yaml"))
    assert got["data"] == {"a": "1", "b": "2", "c": "3"}
    assert got["metadata"]["labels"] == {"team": "rdma"} and got["metadata"]["annotations"]["note"] == "x"
    images = kubectl.out("get", "deployment", "web", "-n", ns, "-o", "jsonpath={.spec.template.spec.containers[*].image}")
    assert images == "registry.example/web:2"  # merged into the one container by its name, not a second one
    assert kubectl.out("label", "configmap", "cm", "team-", "-n", ns).strip() == "configmap/cm unlabeled"


def test_wait_for_condition_and_jsonpath(kubectl):
    ns = _namespace(kubectl, "k-wait")
    kubectl.run("apply", "-f", "-", stdin=DEPLOYMENT.format(ns=ns, replicas=1))
    waiter = kubectl.start("wait", "--for=condition=Available", "deployment/web", "-n", ns, "--timeout=30s")
    time.sleep(0.5)
    assert waiter.poll() is None, "the wait ended before the condition was true"
    status = '{"status":{"conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"}]}}'
    kubectl.run("patch", "deployment", "web", "-n", ns, "--subresource=status", "--type=merge", "-p", status)
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 0 and out.strip() == "deployment.apps/web condition met", err
    done = kubectl.run("wait", "--for=jsonpath={.status.conditions[0].reason}=MinimumReplicasAvailable",
                       "deployment/web", "-n", ns, "--timeout=10s")
    assert done.stdout.strip() == "deployment.apps/web condition met"


def test_rollout_status_reads_the_status(kubectl):
    ns = _namespace(kubectl, "k-rollout")
    kubectl.run("apply", "-f", "-", stdin=DEPLOYMENT.format(ns=ns, replicas=2))
    pending = kubectl.run("rollout", "status", "deployment/web", "-n", ns, "--timeout=1s", check=False)
    assert pending.returncode == 1 and "Waiting for deployment spec update to be observed" in pending.stdout
    generation = kubectl.out("get", "deployment", "web", "-n", ns, "-o", "jsonpath={.metadata.generation}")
    status = ('{"status":{"observedGeneration":%s,"replicas":2,"updatedReplicas":2,"readyReplicas":2,'
              '"availableReplicas":2}}' % generation)
    kubectl.run("patch", "deployment", "web", "-n", ns, "--subresource=status", "--type=merge", "-p", status)
    done = kubectl.run("rollout", "status", "deployment/web", "-n", ns, "--timeout=10s")
    assert done.stdout.strip() == 'deployment "web" successfully rolled out'


def test_delete_waits_for_finalizers(kubectl):
    ns = _namespace(kubectl, "k-delete")
    held = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: %s\n  finalizers: [example.com/hold]\n" % ns
    kubectl.run("apply", "-f", "-", stdin=held)
    deleting = kubectl.start("delete", "configmap", "held", "-n", ns, "--wait=true", "--timeout=30s")
    time.sleep(1.0)
    assert deleting.poll() is None, "delete returned while a finalizer held the object"
    assert kubectl.out("get", "configmap", "held", "-n", ns, "-o", "jsonpath={.metadata.deletionTimestamp}")
    kubectl.run("patch", "configmap", "held", "-n", ns, "--type=json", "-p",
                '[{"op":"remove","path":"/metadata/finalizers"}]')
    out, err = deleting.communicate(timeout=30)
    assert deleting.returncode == 0 and out.strip() == 'configmap "held" deleted', err
    assert kubectl.run("get", "configmap", "held", "-n", ns, check=False).returncode == 1


def test_kustomize_build_and_apply(kubectl, tmp_path):
    ns = _namespace(kubectl, "k-kustomize")
    (tmp_path / "kustomization.yaml").write_text(
        "namespace: %s\nnamePrefix: rdma-\nresources: [settings.yaml]\ncommonLabels: {app: gpudirect}\n" % ns)
    (tmp_path / "settings.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mtu: '9000'\n")
    built = yaml.safe_load(kubectl.out("kustomize", str(tmp_path)))
    assert built["metadata"] == {"name": "rdma-settings", "namespace": ns, "labels": {"app": "gpudirect"}}
    assert kubectl.out("apply", "-k", str(tmp_path)).strip() == "configmap/rdma-settings created"
    assert kubectl.out("get", "configmap", "-n", ns, "-l", "app=gpudirect", "-o", "name").strip() == \
        "configmap/rdma-settings"


def test_logs(kubectl, cluster):
    ns = _namespace(kubectl, "k-logs")
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: talker\n  namespace: %s\nspec:\n  containers:\n"
           "  - name: main\n    image: registry.example/talker:1\n" % ns)
    kubectl.run("apply", "-f", "-", stdin=pod)
    cluster.pod_logs[(ns, "talker")] = "first line\nsecond line\n"
    assert kubectl.out("logs", "talker", "-n", ns) == "first line\nsecond line\n"
    assert kubectl.out("logs", "pod/talker", "-n", ns, "--tail=1") == "second line\n"
    header = _header(kubectl.out("get", "pods", "-n", ns, "-o", "wide"))
    assert header == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"]


# ------------------------------------------------------------------------------------------------- authorization
def test_auth_can_i_as_administrator(kubectl):
    done = kubectl.run("auth", "can-i", "create", "pods", "-n", "kube-system")
    assert done.stdout.strip() == "yes"
    listed = kubectl.out("auth", "can-i", "--list", "-n", "default")
    assert _header(listed) == ["Resources", "Non-Resource URLs", "Resource Names", "Verbs"]
    assert _rows(listed)[1] == ["*.*", "[]", "[]", "[*]"]


def test_auth_can_i_follows_rbac(kubectl, cluster, tmp_path):
    ns = _namespace(kubectl, "k-auth")
    kubectl.run("create", "serviceaccount", "limited", "-n", ns)
    limited = cluster.write_kubeconfig(str(tmp_path / "limited"), token=cluster.service_account_token(ns, "limited"))
    denied = kubectl.run("auth", "can-i", "list", "configmaps", "-n", ns, kubeconfig=limited, check=False)
    assert (denied.returncode, denied.stdout.strip()) == (1, "no")
    kubectl.run("create", "role", "reader", "--verb=get,list", "--resource=configmaps", "-n", ns)
    kubectl.run("create", "rolebinding", "reader", "--role=reader", "--serviceaccount=%s:limited" % ns, "-n", ns)
    allowed = kubectl.run("auth", "can-i", "list", "configmaps", "-n", ns, kubeconfig=limited)
    assert allowed.stdout.strip() == "yes"
    assert kubectl.run("auth", "can-i", "list", "configmaps", "-n", "default", kubeconfig=limited,
                       check=False).stdout.strip() == "no"
    listed = _rows(kubectl.out("auth", "can-i", "--list", "-n", ns, kubeconfig=limited))
    assert ["configmaps", "[]", "[]", "[get", "list]"] in listed, listed
    assert ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"] in listed, listed
    # A subject access review names the subject (kubectl auth can-i --as needs impersonation, which the simulator
    # does not serve; the review itself is what an administrator's tool asks). --validate=false: the review kinds
    # have no PATCH path, so kubectl validates them with the protobuf OpenAPI v2 document, which the simulator does
    # not encode (openapi.py).
    review = kubectl.out("create", "--validate=false", "-f", "-", "-o", "jsonpath={.status.allowed}", stdin=(
        "apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec:\n  user: system:serviceaccount:%s:limited\n"
        "  resourceAttributes: {namespace: %s, verb: get, resource: configmaps}\n" % (ns, ns)))
    assert review == "true"
