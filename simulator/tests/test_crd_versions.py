"""CRDs per operator version: the repository's data/crds holds <source>/<ref>/ folders; the simulator serves one
ref per source, the newest by default or the one asked for."""

import gzip
import hashlib
import os

import pytest
import requests

from simulator.crds import DEFAULT_CRD_DIR, available_crd_refs, select_crd_files

WIDGET = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
%s
"""


def _write_versions(root):
    for ref, field in (("v9.1.0", "old"), ("v10.0.0", "new")):
        folder = root / "widget-operator" / ref
        folder.mkdir(parents=True)
        (folder / "example.com_widgets.yaml").write_text(WIDGET % ("              %s: {type: string}" % field))


def test_every_source_in_the_repository_has_its_provenance():
    refs = available_crd_refs(DEFAULT_CRD_DIR)
    assert {"gpu-operator", "network-operator", "sriov-network-operator", "cluster-nfd-operator",
            "operator-framework-api", "openshift-api"} <= set(refs)
    with open(os.path.join(DEFAULT_CRD_DIR, "SOURCES.md"), encoding="utf-8") as handle:
        sources = handle.read()
    rows = {line.split("`")[1]: line for line in sources.splitlines() if line.startswith("| `")}
    for path in select_crd_files(DEFAULT_CRD_DIR):
        row = rows.get(os.path.relpath(path, DEFAULT_CRD_DIR))
        assert row, path
        # The compressed copy holds the upstream file byte for byte.
        with gzip.open(path, "rb") as handle:
            assert "`%s`" % hashlib.sha256(handle.read()).hexdigest() in row, path


def test_newest_ref_is_served_unless_another_is_asked_for(tmp_path, sim_factory):
    _write_versions(tmp_path)
    # natural order: v10.0.0 is newer than v9.1.0
    assert available_crd_refs(str(tmp_path)) == {"widget-operator": ["v9.1.0", "v10.0.0"]}
    for refs, kept, pruned in ((None, "new", "old"), ({"widget-operator": "v9.1.0"}, "old", "new")):
        cluster = sim_factory(profile=None, controllers=False, crd_dir=str(tmp_path), crd_refs=refs)
        url = cluster.url + "/apis/example.com/v1/namespaces/default/widgets"
        resp = requests.post(url, json={"metadata": {"name": "w"}, "spec": {"old": "a", "new": "b"}},
                             headers={"Authorization": "Bearer " + cluster.token}, timeout=5)
        assert resp.status_code == 201, resp.text
        assert resp.json()["spec"] == {kept: "a" if kept == "old" else "b"}, (refs, pruned)


def test_unknown_source_or_ref_is_refused(tmp_path):
    _write_versions(tmp_path)
    with pytest.raises(ValueError, match="no CRDs for widget-operator at v1.0.0 .*have: v9.1.0, v10.0.0"):
        select_crd_files(str(tmp_path), {"widget-operator": "v1.0.0"})
    with pytest.raises(ValueError, match="no CRDs for source"):
        select_crd_files(str(tmp_path), {"gadget-operator": "v1"})
