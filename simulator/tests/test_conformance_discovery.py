"""Discovery documents, and a kind that appears later (CRD installed by an operator) as clients see it."""

import requests
from kubernetes import config
from kubernetes.dynamic import DynamicClient

from .conftest import ncp_body


def test_version_is_openshift_like_and_anonymous(api):
    body = requests.get(api.url + "/version", timeout=5).json()
    assert body["gitVersion"].startswith("v1.31.") and body["major"] == "1" and body["minor"] == "31"


def test_version_follows_the_profiles_openshift_release(sim):
    body = requests.get(sim.url + "/version", timeout=5).json()
    release = sim.profile.cluster.kubernetes_version
    assert body["gitVersion"] == "v" + release and body["minor"] == release.split(".")[1]
    assert sim.profile.cluster.version.startswith("4.20") and release.startswith("1.33.")


def test_core_and_group_discovery(http):
    assert http.get("/api").json()["versions"] == ["v1"]
    core = http.get("/api/v1").json()
    assert core["kind"] == "APIResourceList" and core["groupVersion"] == "v1"
    by_name = {r["name"]: r for r in core["resources"]}
    assert by_name["pods"]["kind"] == "Pod" and by_name["pods"]["namespaced"] is True
    assert by_name["pods"]["singularName"] == "pod" and "po" in by_name["pods"]["shortNames"]
    assert "pods/log" in by_name and "pods/status" in by_name and "nodes/status" in by_name
    assert by_name["nodes"]["namespaced"] is False
    assert set(by_name["configmaps"]["verbs"]) >= {"create", "get", "list", "watch", "patch", "update", "delete"}
    groups = {g["name"]: g for g in http.get("/apis").json()["groups"]}
    assert groups["apps"]["preferredVersion"] == {"groupVersion": "apps/v1", "version": "v1"}
    og = http.get("/apis/operators.coreos.com").json()
    assert og["kind"] == "APIGroup" and og["preferredVersion"]["version"] == "v1"
    versions = [v["version"] for v in groups["operators.coreos.com"]["versions"]]
    assert versions[0] == "v1" and "v1alpha1" in versions and "v2" not in versions
    subs = {r["name"]: r for r in http.get("/apis/operators.coreos.com/v1alpha1").json()["resources"]}
    assert subs["subscriptions"]["kind"] == "Subscription" and "subscriptions/status" in subs
    assert "sub" in subs["subscriptions"]["shortNames"]


def test_unknown_paths_are_404(http):
    # /openapi/v2 and /openapi/v3 are served (issue 33): test_conformance_clients.py.
    assert http.get("/openapi/v3/apis/nope.example.com/v1").status_code == 404
    assert http.get("/apis/nope.example.com/v1").status_code == 404
    assert http.get("/api/v1/widgets").json()["reason"] == "NotFound"


def test_unserved_kind_absent_then_present_and_cached_client_finds_it(api, http, tmp_path):
    api.store.set_served("mellanox.com", "nicclusterpolicies", False)
    api.store.set_served("mellanox.com", "hostdevicenetworks", False)
    api.store.set_served("mellanox.com", "ipoibnetworks", False)
    api.store.set_served("mellanox.com", "macvlannetworks", False)
    api.store.set_served("mellanox.com", "nicnodepolicies", False)
    assert "mellanox.com" not in {g["name"] for g in http.get("/apis").json()["groups"]}
    assert http.get("/apis/mellanox.com/v1alpha1/nicclusterpolicies").status_code == 404
    assert http.get("/apis/mellanox.com/v1alpha1").status_code == 404

    cache = str(tmp_path / "cache.json")
    early = DynamicClient(config.new_client_from_config(config_file=api.kubeconfig), cache_file=cache)
    early.resources.get(api_version="v1", kind="ConfigMap")  # discovery now cached without mellanox.com

    api.store.set_served("mellanox.com", "nicclusterpolicies", True)
    assert "mellanox.com" in {g["name"] for g in http.get("/apis").json()["groups"]}
    names = [r["name"] for r in http.get("/apis/mellanox.com/v1alpha1").json()["resources"]]
    assert names == ["nicclusterpolicies", "nicclusterpolicies/status"]
    # The client that cached discovery before the kind existed refreshes on the miss and finds it.
    ncp = early.resources.get(api_version="mellanox.com/v1alpha1", kind="NicClusterPolicy")
    created = ncp.create(body=ncp_body())
    assert created.metadata.name == "nic-cluster-policy"
    # A second client reading the same cache file sees it too.
    later = DynamicClient(config.new_client_from_config(config_file=api.kubeconfig), cache_file=cache)
    assert later.resources.get(api_version="mellanox.com/v1alpha1", kind="NicClusterPolicy").get().items


def test_server_url_works_with_and_without_instance_prefix(api):
    headers = {"Authorization": "Bearer " + api.token}
    assert requests.get(api.url + "/api/v1/namespaces/default", headers=headers, timeout=5).status_code == 200
    assert requests.get(api.root_url + "/api/v1/namespaces/default", headers=headers, timeout=5).status_code == 200


def test_kubeconfig_has_simulated_context(api, tmp_path):
    import yaml

    path = api.write_kubeconfig(str(tmp_path / "kc" / "config"))
    kc = yaml.safe_load(open(path))
    assert kc["current-context"] == "simulated"
    assert kc["users"][0]["user"]["token"] == api.token
    assert kc["clusters"][0]["cluster"]["server"] == api.url
    ns = DynamicClient(config.new_client_from_config(config_file=path)).resources.get(api_version="v1", kind="Namespace")
    assert {"default", "kube-system", "openshift-marketplace"} <= {n.metadata.name for n in ns.get().items}


def test_full_cluster_with_profile_and_controllers_starts(sim):
    """The default fixture (profile + simulated operators) serves discovery and core objects."""
    resp = requests.get(sim.url + "/api/v1/namespaces", headers={"Authorization": "Bearer " + sim.token}, timeout=5)
    assert resp.status_code == 200
    assert "openshift-marketplace" in {i["metadata"]["name"] for i in resp.json()["items"]}


def test_missing_crd_dir_starts_without_custom_resources(sim_factory, tmp_path, caplog):
    cluster = sim_factory(profile=None, controllers=False, crd_dir=str(tmp_path / "absent"))
    assert "CRD directory" in caplog.text and "without custom resource" in caplog.text
    session = requests.Session()
    session.headers["Authorization"] = "Bearer " + cluster.token
    groups = {g["name"] for g in session.get(cluster.url + "/apis", timeout=5).json()["groups"]}
    assert "mellanox.com" not in groups and "apps" in groups


def test_crd_dir_is_configurable(sim_factory, tmp_path):
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "widgets.yaml").write_text("""
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList, shortNames: [wd]}
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1}
              free: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, properties: {ready: {type: boolean}}}
  - name: v1alpha1
    served: false
    storage: false
    schema: {openAPIV3Schema: {type: object}}
""")
    cluster = sim_factory(profile=None, controllers=False, crd_dir=str(tmp_path / "crds"))
    session = requests.Session()
    session.headers["Authorization"] = "Bearer " + cluster.token
    group = session.get(cluster.url + "/apis/example.com", timeout=5).json()
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    assert group["preferredVersion"]["version"] == "v1"
    assert session.get(cluster.url + "/apis/example.com/v1alpha1", timeout=5).status_code == 404
    url = cluster.url + "/apis/example.com/v1/namespaces/default/widgets"
    bad = session.post(url, json={"metadata": {"name": "w"}, "spec": {"size": 0}}, timeout=5)
    assert bad.status_code == 422 and bad.json()["message"] == (
        'Widget.example.com "w" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than '
        'or equal to 1')
    ok = session.post(url, json={"metadata": {"name": "w"}, "spec": {"size": 2, "free": {"any": ["thing"]}}},
                      timeout=5)
    assert ok.status_code == 201 and ok.json()["spec"]["free"] == {"any": ["thing"]}
    # Every served version reads the same stored object.
    beta = session.get(cluster.url + "/apis/example.com/v1beta1/namespaces/default/widgets/w", timeout=5).json()
    assert beta["apiVersion"] == "example.com/v1beta1" and beta["spec"]["size"] == 2


def test_deleting_a_crd_removes_its_objects_and_its_kind(http):
    crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nicclusterpolicies.mellanox.com"
    assert http.post("/apis/mellanox.com/v1alpha1/nicclusterpolicies", ncp_body()).status_code == 201
    assert http.delete(crd + "?dryRun=All").status_code == 200
    assert http.get("/apis/mellanox.com/v1alpha1/nicclusterpolicies").json()["items"], "a dry run deleted something"
    gone = http.delete(crd)
    assert gone.status_code == 200 and gone.json()["metadata"]["deletionTimestamp"]
    assert http.get(crd).status_code == 404
    assert http.get("/apis/mellanox.com/v1alpha1/nicclusterpolicies").status_code == 404
    names = [r["name"] for r in http.get("/apis/mellanox.com/v1alpha1").json()["resources"]]
    assert "nicclusterpolicies" not in names and "macvlannetworks" in names
    assert http.delete(crd).json()["reason"] == "NotFound"
