"""Supported versions are tested versions: the oldest ansible-core and kubernetes.core that meta/runtime.yml and
galaxy.yml accept (hack/compat_env.sh builds them) run the render playbook and a site.yml converge plus a no-op
re-run; and the collection, installed from its built tarball into a clean collections path, runs by its name
(`ansible-playbook gpudirect.openshift.site`, no inventory, no ansible.cfg) on the oldest and the newest."""

import glob
import os
import shutil
import subprocess

import pytest
import yaml

from site_support import CONFIGURATIONS, ROOT, example, run_playbook

with open(os.path.join(ROOT, "meta", "runtime.yml"), encoding="utf-8") as _fh:
    REQUIRES_ANSIBLE = yaml.safe_load(_fh)["requires_ansible"]
with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as _fh:
    KUBERNETES_CORE_RANGE = yaml.safe_load(_fh)["dependencies"]["kubernetes.core"]


def _clean_env(**extra):
    """The environment of a user: no test settings, no PYTHONPATH, no collection path or config of ours."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANSIBLE_", "GPUDIRECT_", "K8S_AUTH_", "PYTEST")) and k not in (
               "PYTHONPATH", "KUBECONFIG", "VIRTUAL_ENV")}
    env.update(ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def oldest():
    """(bin directory, collections path with kubernetes.core only) of the oldest supported versions."""
    proc = subprocess.run(["bash", os.path.join(ROOT, "hack", "compat_env.sh")], capture_output=True, text=True,
                          check=False, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bin_dir, kubernetes_core = proc.stdout.split()
    version = subprocess.run([os.path.join(bin_dir, "ansible-playbook"), "--version"], capture_output=True,
                             text=True, check=True).stdout
    # The lane really is the minimum that runtime.yml and galaxy.yml claim.
    assert "[core %s]" % REQUIRES_ANSIBLE.lstrip(">=") in version, (REQUIRES_ANSIBLE, version)
    with open(os.path.join(kubernetes_core, "ansible_collections", "kubernetes", "core", "MANIFEST.json"),
              encoding="utf-8") as handle:
        assert '"version": "%s"' % KUBERNETES_CORE_RANGE.split(",")[0].lstrip(">=") in handle.read()
    return bin_dir, kubernetes_core


def _oldest_checkout_env(oldest):
    bin_dir, kubernetes_core = oldest
    return {"PATH": bin_dir + os.pathsep + os.environ["PATH"], "VIRTUAL_ENV": os.path.dirname(bin_dir),
            "ANSIBLE_COLLECTIONS_PATH": os.path.join(ROOT, ".cache", "collections") + os.pathsep + kubernetes_core,
            "PYTHONPATH": ""}


def _render(tmp_path, env, config):
    out = tmp_path / config.split(".")[0]
    proc = subprocess.run(["ansible-playbook", "playbooks/render.yml", "-e", "@" + example(config),
                           "-e", "render_dir=%s" % out], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {os.path.basename(p): open(p, encoding="utf-8").read() for p in sorted(glob.glob(str(out / "*")))}


def test_render_playbook_gives_the_same_manifests_on_the_oldest_ansible(oldest, tmp_path):
    oldest_env = dict(os.environ, **_oldest_checkout_env(oldest))
    for config in sorted(CONFIGURATIONS.values()):
        on_oldest = _render(tmp_path / "oldest", oldest_env, config)
        on_newest = _render(tmp_path / "newest", dict(os.environ), config)
        assert on_oldest and on_oldest == on_newest, config


@pytest.mark.parametrize("config", ["shared_device/roce", "host_device/infiniband", "sriov_legacy/infiniband"])
def test_site_converges_and_reruns_with_no_writes_on_the_oldest_ansible(oldest, sim_factory, config):
    sim = sim_factory(profile="mixed-lab")
    env = _oldest_checkout_env(oldest)
    first = run_playbook(sim, "-e", "@" + example(config), env=env)
    assert first.rc == 0 and "core 2.16" not in first.output, first.output[-4000:]
    assert first.writes > 0
    again = run_playbook(sim, "-e", "@" + example(config), env=env)
    assert again.rc == 0, again.output[-4000:]
    assert (again.changed, again.writes) == (0, 0), again.output[-4000:]


@pytest.fixture(scope="module")
def tarball(tmp_path_factory):
    out = tmp_path_factory.mktemp("build")
    proc = subprocess.run(["ansible-galaxy", "collection", "build", "--output-path", str(out), ROOT],
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (path,) = glob.glob(str(out / "gpudirect-openshift-*.tar.gz"))
    return path


def _install(tarball, bin_dir, dest, env):
    proc = subprocess.run([os.path.join(bin_dir, "ansible-galaxy"), "collection", "install", "--offline",
                           "--no-deps", "-p", str(dest), tarball], capture_output=True, text=True, check=False,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert os.path.isfile(dest / "ansible_collections" / "gpudirect" / "openshift" / "MANIFEST.json")


@pytest.mark.parametrize("lane", ["oldest", "newest"])
def test_installed_tarball_runs_site_by_name(lane, oldest, tarball, sim_factory, tmp_path):
    if lane == "oldest":
        bin_dir, kubernetes_core = oldest
        search = [kubernetes_core]
    else:  # the newest: this virtualenv, whose ansible package carries kubernetes.core
        bin_dir, search = os.path.dirname(shutil.which("ansible-playbook")), []
    home, workdir, clean = tmp_path / "home", tmp_path / "work", tmp_path / "collections"
    home.mkdir(), workdir.mkdir()
    env = _clean_env(HOME=str(home), PATH=bin_dir + os.pathsep + os.environ["PATH"],
                     ANSIBLE_COLLECTIONS_PATH=os.pathsep.join([str(clean)] + search))
    _install(tarball, bin_dir, clean, env)
    playbook = [os.path.join(bin_dir, "ansible-playbook"), "gpudirect.openshift.site"]

    # No cluster anywhere: it stops and says what to give, instead of silently matching no host.
    proc = subprocess.run(playbook, cwd=workdir, env=env, capture_output=True, text=True, check=False, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "no hosts matched" not in out, out
    assert "K8S_AUTH_KUBECONFIG" in out and "KUBECONFIG" in out, out

    sim = sim_factory(profile="mixed-lab")
    vars_file = os.path.join(str(clean), "ansible_collections", "gpudirect", "openshift", "playbooks", "vars",
                             "examples", CONFIGURATIONS["shared_device/roce"])
    env["K8S_AUTH_KUBECONFIG"] = sim.kubeconfig
    start = len(sim.request_log)
    proc = subprocess.run(playbook + ["-e", "@" + vars_file], cwd=workdir, env=env, capture_output=True, text=True,
                          check=False, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "ok: [localhost]" in out and "Installed and configured." in out, out[-4000:]
    assert sim.count(writes_only=True, since=start) > 0
