"""render.yml's output folder (issue 34, LOW): a re-render removes only the files an earlier render wrote, never files
of the same name pattern that someone else keeps there."""

import os
import subprocess

from site_support import ROOT, example


def render(out, configuration):
    proc = subprocess.run(["ansible-playbook", "playbooks/render.yml", "-e", "@" + example(configuration),
                           "-e", "render_dir=%s" % out], cwd=ROOT, env=dict(os.environ), capture_output=True,
                          text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {path.name for path in out.glob("[0-9]*-*.yaml")}


def test_rerender_removes_its_own_stale_files_and_keeps_foreign_ones(tmp_path):
    out = tmp_path / "manifests"
    out.mkdir()
    foreign = out / "005-team-extra.yaml"
    foreign.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ours-not-theirs}\n")
    sriov = render(out, "sriov_legacy/roce")
    assert foreign.exists(), "render.yml deleted a file it did not write"
    # What render.yml writes is what the golden files of the configuration hold (tests/unit/golden, test_golden.py).
    golden = os.path.join(ROOT, "tests", "unit", "golden", os.path.basename(example("sriov_legacy/roce"))[:-len(".yml")])
    recorded = (out / ".gpudirect-render-files").read_text().split()
    assert sorted(os.listdir(golden)) == sorted(recorded + ["images.txt", "workload-rail-job-pod.yaml"])
    for name in os.listdir(golden):
        with open(os.path.join(golden, name), encoding="utf-8") as handle:
            assert (out / name).read_text() == handle.read(), name
    shared = render(out, "shared_device/roce")
    sriov_only = sriov - shared - {foreign.name}
    assert sriov_only, "the two configurations render the same files; the test proves nothing"
    assert not any((out / name).exists() for name in sriov_only), "stale files of the earlier render were kept"
    assert foreign.exists(), "render.yml deleted a file it did not write"
    recorded = (out / ".gpudirect-render-files").read_text().split()
    assert set(recorded) == shared - {foreign.name}


def render_gitops(out):
    proc = subprocess.run(["ansible-playbook", "playbooks/render.yml", "-e", "@" + example("sriov_legacy/roce"),
                           "-e", "render_dir=%s" % out, "-e", "render_format=gitops", "-e", "render_cluster=lab-a",
                           "-e", "nvidia_gpu_operator_starting_csv=gpu-operator-certified.v25.3.4",
                           # Manual approval, every operator's default, needs the CSV a GitOps tree approves
                           "-e", "nfd_starting_csv=nfd.v4.20.0", "-e", "sriov_network_operator_starting_csv=sriov-network-operator.v4.20.0",
                           "-e", "nvidia_network_operator_starting_csv=nvidia-network-operator.v26.4.1"],
                          cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout, dict((str(p.relative_to(out)), p.read_bytes()) for p in sorted(out.rglob("*")) if p.is_file())


def test_the_gitops_tree_render_writes_a_tree_that_kustomize_builds(tmp_path):
    # One render.yml run (CI time): that a second render is identical is tested on the pure renderer
    # (tests/unit/plugins/module_utils/render/test_gitops.py); the playbook writes each file with to_nice_yaml.
    out = tmp_path / "tree"
    _first_log, first = render_gitops(out)
    assert "overlays/lab-a/kustomization.yaml" in first and "argocd/argocd-cm-health-patch.yaml" in first
    recorded = (out / ".gpudirect-render-files").read_text().split()
    assert set(recorded) == set(path for path in first if path.startswith(("bases/", "overlays/", "argocd/")))
    built = subprocess.run(["/usr/bin/kubectl", "kustomize", str(out / "overlays" / "lab-a")], capture_output=True, text=True,
                           check=False, timeout=120)
    assert built.returncode == 0 and "kind: SriovNetworkNodePolicy" in built.stdout, built.stderr
