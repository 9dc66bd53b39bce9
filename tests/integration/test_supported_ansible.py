"""Supported versions are tested versions: the oldest ansible-core and kubernetes.core that meta/runtime.yml and
galaxy.yml accept, and the newest ansible-core minor that `requires_ansible` admits (newest patch, on Python 3.12;
hack/compat_env.sh builds both lanes) run the render playbook and a site.yml converge plus a no-op re-run; and the
collection, installed from its built tarball into a clean collections path, runs by its name
(`ansible-playbook gpudirect.openshift.site`, no inventory, no ansible.cfg) on the oldest and the newest."""

import glob
import os
import shutil
import subprocess

import pytest
import yaml

from ansible_collections.gpudirect.openshift.tests.configurations import CONFIGURATIONS
from site_support import ROOT, example, run_playbook

with open(os.path.join(ROOT, "meta", "runtime.yml"), encoding="utf-8") as _fh:
    REQUIRES_ANSIBLE = yaml.safe_load(_fh)["requires_ansible"]
# The oldest release the claim admits: its one lower bound (the other clauses only leave out releases above it).
OLDEST_CORE = [clause[2:] for clause in REQUIRES_ANSIBLE.split(",") if clause.startswith(">=")][0]
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


with open(os.path.join(ROOT, "hack", "requirements-newest.txt"), encoding="utf-8") as _fh:
    NEWEST_CORE = [line.split("==")[1].strip() for line in _fh if line.startswith("ansible-core==")][0]


def _lane(name):
    proc = subprocess.run(["bash", os.path.join(ROOT, "hack", "compat_env.sh"), name], capture_output=True, text=True,
                          check=False, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.split()


@pytest.fixture(scope="module")
def newest():
    """(bin directory, collections path with kubernetes.core only) of the newest ansible-core minor, on Python 3.12."""
    bin_dir, kubernetes_core = _lane("newest")
    version = subprocess.run([os.path.join(bin_dir, "ansible-playbook"), "--version"], capture_output=True,
                             text=True, check=True).stdout
    assert "[core %s]" % NEWEST_CORE in version and "python version = 3.12" in version, version
    return bin_dir, kubernetes_core


def test_the_newest_lane_is_the_newest_minor_the_claim_admits():
    """requires_ansible is open-ended, so the newest lane must be a minor at least as new as any ansible-core this
    collection is known to run on: 2.21 (issue 31: 2.20 and 2.21 were claimed but untested)."""
    assert REQUIRES_ANSIBLE.startswith(">=") and "<" not in REQUIRES_ANSIBLE
    assert tuple(int(p) for p in NEWEST_CORE.split(".")[:2]) >= (2, 21), NEWEST_CORE


def test_a_missing_python_312_fails_the_newest_lane_naming_the_fix(tmp_path):
    """Never skipped silently: without a Python 3.12 the lane fails and says how to provide one."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYENV_ROOT": str(tmp_path / "no-pyenv"),
           "GPUDIRECT_PYTHON312": "/nonexistent/python3.12"}
    script = tmp_path / "compat_env.sh"
    # A copy whose /root/.pyenv fallback points nowhere, so that this machine's Python 3.12 is not found.
    with open(os.path.join(ROOT, "hack", "compat_env.sh"), encoding="utf-8") as handle:
        script.write_text(handle.read().replace("/root/.pyenv/", str(tmp_path / "none") + "/"))
    assert not shutil.which("python3.12", path=env["PATH"]), "a system python3.12 hides the case this test checks"
    proc = subprocess.run(["bash", str(script), "newest"], capture_output=True, text=True, check=False, env=env, timeout=60)
    assert proc.returncode != 0 and "need Python 3.12" in proc.stderr and "GPUDIRECT_PYTHON312" in proc.stderr, proc.stderr


@pytest.fixture(scope="module")
def oldest():
    """(bin directory, collections path with kubernetes.core only) of the oldest supported versions."""
    bin_dir, kubernetes_core = _lane("oldest")
    version = subprocess.run([os.path.join(bin_dir, "ansible-playbook"), "--version"], capture_output=True,
                             text=True, check=True).stdout
    # The lane really is the minimum that runtime.yml and galaxy.yml claim.
    assert "[core %s]" % OLDEST_CORE in version, (REQUIRES_ANSIBLE, version)
    with open(os.path.join(kubernetes_core, "ansible_collections", "kubernetes", "core", "MANIFEST.json"),
              encoding="utf-8") as handle:
        assert '"version": "%s"' % KUBERNETES_CORE_RANGE.split(",")[0].lstrip(">=") in handle.read()
    return bin_dir, kubernetes_core


def _lane_checkout_env(lane):
    bin_dir, kubernetes_core = lane
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


# The three configurations that the oldest lane does not converge below, so that every configuration runs on the oldest
# lane once (the renderer is the same Python on every lane; a lane differs in templating and argument handling, which
# one configuration per method exercises). Six renders on three lanes took about 300 s of the suite's 2 cores.
RENDERED_ON_EVERY_LANE = ("shared_device/infiniband", "host_device/roce", "sriov_legacy/roce")
CONVERGED_ON_THE_OLDEST = ("shared_device/roce", "host_device/infiniband", "sriov_legacy/infiniband")


def test_the_lanes_cover_every_configuration_between_render_and_converge():
    assert sorted(RENDERED_ON_EVERY_LANE + CONVERGED_ON_THE_OLDEST) == sorted(CONFIGURATIONS)


def test_render_playbook_gives_the_same_manifests_on_the_oldest_and_the_newest_ansible(oldest, newest, tmp_path):
    lanes = {"oldest": dict(os.environ, **_lane_checkout_env(oldest)), "newest": dict(os.environ, **_lane_checkout_env(newest))}
    for config in (CONFIGURATIONS[name] for name in RENDERED_ON_EVERY_LANE):
        # What the development virtualenv's render.yml writes is the configuration's golden files (test_golden.py,
        # test_render_output.py), so the lanes are compared with those instead of a third render.
        golden = os.path.join(ROOT, "tests", "unit", "golden", os.path.basename(config)[:-len(".yml")])
        on_dev = {}
        for path in sorted(glob.glob(os.path.join(golden, "*"))):
            with open(path, encoding="utf-8") as handle:
                on_dev[os.path.basename(path)] = handle.read()
        assert on_dev, config
        for name, env in lanes.items():
            assert _render(tmp_path / name, env, config) == on_dev, (name, config)


def test_site_converges_reruns_and_tears_down_on_the_newest_ansible_without_deprecation_warnings(newest, sim_factory):
    sim = sim_factory(profile="mixed-lab")
    env = _lane_checkout_env(newest)
    first = run_playbook(sim, "-e", "@" + example("sriov_legacy/roce"), env=env)
    assert first.rc == 0, first.output[-4000:]
    assert first.writes > 0
    again = run_playbook(sim, "-e", "@" + example("sriov_legacy/roce"), env=env)
    assert again.rc == 0, again.output[-4000:]
    assert (again.changed, again.writes) == (0, 0), again.output[-4000:]
    down = run_playbook(sim, "-e", "@" + example("sriov_legacy/roce"), playbook="playbooks/teardown.yml", env=env)
    assert down.rc == 0, down.output[-4000:]
    # Issue 31: on ansible-core 2.20 and later the only deprecation warnings are kubernetes.core 6.2.0's own imports of
    # ansible.module_utils._text (its k8s modules; 6.5.0, which no PyPI `ansible` package carries yet, has none). The
    # collection's code prints none.
    for run in (first, again, down):
        deprecations = [line for line in run.output.splitlines() if "DEPRECATION" in line]
        unexplained = [line for line in deprecations if "from 'ansible.module_utils._text' is deprecated" not in line]
        assert unexplained == [], unexplained[:5]
    assert not any("DEPRECATION" in line for line in first.output.splitlines() + again.output.splitlines())


@pytest.mark.parametrize("config", CONVERGED_ON_THE_OLDEST)
def test_site_converges_and_reruns_with_no_writes_on_the_oldest_ansible(oldest, sim_factory, config):
    sim = sim_factory(profile="mixed-lab")
    env = _lane_checkout_env(oldest)
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
def test_installed_tarball_runs_site_by_name(lane, request, tarball, sim_factory, tmp_path):
    bin_dir, kubernetes_core = request.getfixturevalue(lane)
    search = [kubernetes_core]
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
