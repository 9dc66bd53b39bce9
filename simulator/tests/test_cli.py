"""`python -m simulator serve|stop` as a separate process (what a playbook run or molecule uses)."""

import json
import os
import signal
import subprocess
import sys
import time

from kubernetes import config
from kubernetes.dynamic import DynamicClient


def _serve(tmp_path, *extra):
    ready = tmp_path / "ready.json"
    kubeconfig = tmp_path / "kc" / "config"
    proc = subprocess.Popen([sys.executable, "-m", "simulator", "serve", "--profile", "roce-lab", "--no-controllers",
                             "--kubeconfig", str(kubeconfig), "--ready-file", str(ready), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while not ready.exists():
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline, "server did not become ready"
        time.sleep(0.05)
    return proc, json.loads(ready.read_text()), kubeconfig


def test_serve_until_sigterm(tmp_path):
    proc, info, kubeconfig = _serve(tmp_path, "--token", "fixed-token", "--set", "olm_step_seconds=0.5")
    try:
        assert info["token"] == "fixed-token" and info["kubeconfig"] == str(kubeconfig)
        client = DynamicClient(config.new_client_from_config(config_file=str(kubeconfig)),
                               cache_file=str(tmp_path / "cache.json"))
        names = {n.metadata.name for n in client.resources.get(api_version="v1", kind="Namespace").get().items}
        assert "openshift-marketplace" in names
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _err = proc.communicate(timeout=20)
    assert proc.returncode == 0, out
    assert info["url"] in out and not (tmp_path / "ready.json").exists()


def test_stop_with_pid_file(tmp_path):
    pid_file = tmp_path / "sim.pid"
    proc, info, _kubeconfig = _serve(tmp_path, "--pid-file", str(pid_file))
    assert int(pid_file.read_text()) == proc.pid == info["pid"]
    stop = subprocess.run([sys.executable, "-m", "simulator", "stop", "--pid-file", str(pid_file)],
                          capture_output=True, text=True, timeout=30, env=dict(os.environ), check=False)
    assert stop.returncode == 0, stop.stderr
    assert proc.wait(timeout=20) == 0
