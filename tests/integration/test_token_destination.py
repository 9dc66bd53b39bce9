"""No cluster token leaves for a host the launcher chose (security issue, point 1).

An AWX OpenShift credential puts the token in K8S_AUTH_API_KEY and its host in K8S_AUTH_HOST; kubernetes.core
takes ``host`` from the task when one is given. A launcher who sets gpudirect_api_host must not receive the token,
neither over plain http nor over https to a host that is not the credential's. A local listener on a loopback
port stands for the attacker and records every request it receives."""

import http.server
import os
import socket
import subprocess
import threading

import pytest

from site_support import ROOT, example


class _Recorder(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        self.server.seen.append(dict(self.headers))
        self.send_response(404)
        self.end_headers()

    do_POST = do_PATCH = do_PUT = do_DELETE = do_GET

    def log_message(self, *args):
        pass


@pytest.fixture
def listener():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()


@pytest.fixture
def raw_listener():
    """A TCP port that records whether anything connected (a TLS client hello carries no header to read)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.2)
    connections = []
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn = sock.accept()[0]
            except OSError:
                continue
            connections.append(conn.recv(65536))
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield sock.getsockname()[1], connections
    stop.set()
    thread.join(2)
    sock.close()


def _run(playbook, sim, *extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("K8S_AUTH_") and k != "KUBECONFIG"}
    # What AWX injects for its OpenShift credential.
    env.update(K8S_AUTH_HOST=sim.url, K8S_AUTH_API_KEY=sim.token, K8S_AUTH_VERIFY_SSL="False", ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(["ansible-playbook", "playbooks/%s" % playbook, "-e", "@" + example("shared_device/roce")]
                          + list(extra), cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("playbook", ["site.yml", "verify.yml", "facts.yml", "teardown.yml", "must_gather.yml"])
def test_launcher_host_over_http_never_receives_the_token(playbook, listener, sim_factory):
    sim = sim_factory(profile="mixed-lab", tls=True)
    rc, out = _run(playbook, sim, "-e", "gpudirect_api_host=http://127.0.0.1:%d" % listener.server_port)
    assert rc != 0, out[-3000:]
    assert "Refusing to send" in out or "names its own cluster" in out, out[-3000:]
    assert [h for h in listener.seen if "authorization" in {k.lower() for k in h}] == [], listener.seen
    assert listener.seen == [], "nothing may be sent to the launcher's host"
    assert sim.token not in out


@pytest.mark.parametrize("playbook", ["verify.yml", "teardown.yml"])
def test_launcher_host_over_https_never_receives_the_token(playbook, raw_listener, sim_factory):
    port, connections = raw_listener
    sim = sim_factory(profile="mixed-lab", tls=True)
    rc, out = _run(playbook, sim, "-e", "gpudirect_api_host=https://127.0.0.1:%d" % port)
    assert rc != 0, out[-3000:]
    assert connections == [], "nothing may connect to the launcher's host"


def test_token_never_travels_over_plain_http_even_to_the_credentials_host(listener, sim_factory):
    sim = sim_factory(profile="mixed-lab", tls=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("K8S_AUTH_") and k != "KUBECONFIG"}
    env.update(K8S_AUTH_HOST="http://127.0.0.1:%d" % listener.server_port, K8S_AUTH_API_KEY=sim.token,
               ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(["ansible-playbook", "playbooks/verify.yml", "-e", "@" + example("shared_device/roce")],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "plain http" in out, out[-3000:]
    assert listener.seen == []
