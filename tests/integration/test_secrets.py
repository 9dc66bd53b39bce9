"""The cluster credential never leaves the process that uses it, and TLS is verified unless turned off.

A distinctive bearer token is planted in the simulated cluster; site.yml runs with -vvv (kubeconfig and API-key
styles), in check and diff mode, and fails on a broken operator so that diagnostics are written. No output and no
artifact may contain the token.
"""

import os
import secrets
import subprocess

import yaml
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.diagnostics import REDACTED, redact, redact_object

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "playbooks", "vars", "examples", "1-shared-device-roce.yml")
INVENTORY = os.path.join(ROOT, "playbooks", "inventory", "localhost.yml")


def planted_token():
    # The shape of an OpenShift OAuth token, random so that no fixture or log can contain it by chance.
    return "sha256~" + secrets.token_urlsafe(32)


def run_playbook(playbook, *args, kubeconfig=None, artifacts=None, env_extra=None):
    env = dict(os.environ, ANSIBLE_NOCOLOR="1")
    for name in ("KUBECONFIG", "K8S_AUTH_KUBECONFIG", "K8S_AUTH_HOST", "K8S_AUTH_API_KEY"):
        env.pop(name, None)
    if kubeconfig:
        env["K8S_AUTH_KUBECONFIG"] = kubeconfig
    if artifacts:
        env["GPUDIRECT_ARTIFACTS_DIR"] = str(artifacts)
    env.update(env_extra or {})
    return subprocess.run(["ansible-playbook", "-i", INVENTORY, os.path.join(ROOT, "playbooks", playbook)] + list(args), cwd=ROOT,
                          env=env, capture_output=True, text=True, check=False, timeout=600)


def files_under(directory):
    for dirpath, _dirs, names in os.walk(directory):
        for name in names:
            yield os.path.join(dirpath, name)


def assert_token_nowhere(token, outputs, directories):
    for label, text in outputs:
        assert token not in text, "the token appears in %s" % label
        assert token[len("sha256~"):] not in text, "the token's secret part appears in %s" % label
    scanned = 0
    for directory in directories:
        for path in files_under(directory):
            scanned += 1
            with open(path, "rb") as handle:
                assert token.encode() not in handle.read(), "the token appears in %s" % path
    return scanned


def test_token_never_printed_nor_written(sim_factory, tmp_path):
    token = planted_token()
    artifacts = tmp_path / "artifacts"
    outputs = []

    sim = sim_factory(profile="mixed-lab", token=token, tls=True)  # a token never goes over plain http
    proc = run_playbook("site.yml", "-vvv", "-e", "@" + EXAMPLE, kubeconfig=sim.kubeconfig, artifacts=artifacts)
    outputs += [("site.yml -vvv stdout", proc.stdout), ("site.yml -vvv stderr", proc.stderr)]
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "Authorization" not in proc.stdout

    proc = run_playbook("site.yml", "-vvv", "--check", "--diff", "-e", "@" + EXAMPLE, kubeconfig=sim.kubeconfig, artifacts=artifacts)
    outputs += [("check/diff stdout", proc.stdout), ("check/diff stderr", proc.stderr)]
    assert proc.returncode == 0, proc.stdout[-3000:]

    # The token as an inventory variable (gpudirect_api_key), the way AWX credentials arrive.
    api_vars = tmp_path / "api.yml"
    api_vars.write_text(yaml.safe_dump({"gpudirect_api_host": sim.url, "gpudirect_api_key": token,
                                        "gpudirect_validate_certs": False}))
    proc = run_playbook("site.yml", "-vvv", "--diff", "-e", "@" + EXAMPLE, "-e", "@%s" % api_vars, artifacts=artifacts)
    outputs += [("api-key stdout", proc.stdout), ("api-key stderr", proc.stderr)]
    assert proc.returncode == 0, proc.stdout[-3000:]
    proc = run_playbook("must_gather.yml", "-vvv", "-e", "@%s" % api_vars, "-e", "diagnostics_dest=%s" % (artifacts / "api-key-gather"))
    outputs += [("must_gather api-key stdout", proc.stdout), ("must_gather api-key stderr", proc.stderr)]
    assert proc.returncode == 0 and (artifacts / "api-key-gather" / "summary.md").is_file(), proc.stdout[-3000:]

    # A failing run (the GPU operator's CSV fails) and an on-demand gather of the broken cluster.
    broken = sim_factory(profile="mixed-lab", token=token,
                         faults={"operator_faults": {"csv_failure": {"gpu-operator-certified": "InstallComponentFailed"}}})
    proc = run_playbook("site.yml", "-vvv", "-e", "@" + EXAMPLE, "-e", "nvidia_gpu_operator_failure_grace_period=1",
                        kubeconfig=broken.kubeconfig, artifacts=artifacts)
    outputs += [("failing site.yml stdout", proc.stdout), ("failing site.yml stderr", proc.stderr)]
    assert proc.returncode != 0 and "InstallComponentFailed" in proc.stdout
    proc = run_playbook("must_gather.yml", "-vvv", "-e", "diagnostics_dest=%s" % (artifacts / "gather"), kubeconfig=broken.kubeconfig)
    outputs += [("must_gather stdout", proc.stdout), ("must_gather stderr", proc.stderr)]
    assert proc.returncode == 0 and (artifacts / "gather" / "summary.md").is_file(), proc.stdout[-3000:]

    scanned = assert_token_nowhere(token, outputs, [artifacts])  # tmp_path also holds the inputs that carry the token
    assert scanned >= 20, "expected the diagnostics to have written files, found %d" % scanned
    # The planted token really was the credential: every request the runs made carried it.
    assert sim.count(code=401) == 0 and broken.count(code=401) == 0


def test_tls_is_verified_by_default(sim_factory, tmp_path):
    token = planted_token()
    sim = sim_factory(profile="mixed-lab", token=token, tls=True)  # the numbered examples name mixed-lab's NIC
    without_ca = yaml.safe_load(open(sim.kubeconfig, encoding="utf-8"))
    for cluster in without_ca["clusters"]:
        cluster["cluster"].pop("certificate-authority-data")
    no_ca_path = tmp_path / "kubeconfig-without-ca"
    no_ca_path.write_text(yaml.safe_dump(without_ca))
    os.chmod(no_ca_path, 0o600)
    # Preflight and NFD are enough to prove the connection either way.
    limited = ["-e", "@" + EXAMPLE, "--tags", "nfd"]

    proc = run_playbook("site.yml", *limited, kubeconfig=str(no_ca_path))
    assert proc.returncode != 0
    assert "CERTIFICATE_VERIFY_FAILED" in proc.stdout or "certificate verify failed" in proc.stdout, proc.stdout[-3000:]
    assert sim.count(plural="nodes") == 0, "no request may get through an unverified connection"

    proc = run_playbook("site.yml", *limited, kubeconfig=sim.kubeconfig)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert sim.count(plural="nodes") > 0

    # Turning verification off is explicit, per inventory host.
    proc = run_playbook("site.yml", *limited, "-e", "gpudirect_validate_certs=false", kubeconfig=str(no_ca_path))
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert_token_nowhere(token, [("tls run", proc.stdout + proc.stderr)], [])


def test_redaction_of_secrets_credentials_and_kubeconfigs():
    token = planted_token()
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pull", "annotations": {
        "kubectl.kubernetes.io/last-applied-configuration": '{"data": {".dockerconfigjson": "eyJhdXRocyI6e319"}}'}},
        "type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "eyJhdXRocyI6e319"}, "stringData": {"x": "y"}}
    clean = redact_object(secret)
    assert clean["data"] == {".dockerconfigjson": REDACTED} and clean["stringData"] == {"x": REDACTED}
    assert "eyJhdXRocyI6e319" not in yaml.safe_dump(clean)
    assert clean["type"] == "kubernetes.io/dockerconfigjson"  # the type says what it is; only values go

    config = {"spec": {"token": "abc123", "password": "hunter2", "apiKey": "k", "credentials": {"user": "u", "pass": "p"},
                       "auth": "dXNlcjpwYXNz", "secretName": "keep-me", "tokenSecretRef": {"name": "also-kept"},
                       "env": [{"name": "AWS_SECRET_ACCESS_KEY", "value": "s3"}, {"name": "MODE", "value": "fast"}],
                       "embedded": "apiVersion: v1\nkind: Config\nclusters:\n- cluster: {server: x}\nusers:\n- user: {token: t}\n",
                       "header": "Authorization: Bearer abcdefghijklmnop", "note": "connects with %s" % token}}
    out = redact(config, secrets=[token])["spec"]
    assert out["token"] == out["password"] == out["apiKey"] == out["auth"] == REDACTED
    assert out["credentials"] == {"user": REDACTED, "pass": REDACTED}
    assert out["secretName"] == "keep-me" and out["tokenSecretRef"] == {"name": "also-kept"}
    assert out["env"] == [{"name": "AWS_SECRET_ACCESS_KEY", "value": REDACTED}, {"name": "MODE", "value": "fast"}]
    # A kubeconfig goes whole; in a header only the credential goes, so the message still says what happened.
    assert out["embedded"] == REDACTED and out["header"] == "Authorization: Bearer " + REDACTED
    assert token not in out["note"] and out["note"] == "connects with %s" % REDACTED
