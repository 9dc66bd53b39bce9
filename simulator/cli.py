"""Command line: `python -m simulator serve ...` runs the simulated API server until SIGINT/SIGTERM;
`python -m simulator stop --pid-file F` stops one started with --pid-file."""

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time

import yaml


def _parse_set(values):
    """--set key=value (value parsed as YAML: numbers, booleans, lists) into a config dict."""
    config = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit("--set expects key=value, got %r" % item)
        config[key] = yaml.safe_load(value) if value else ""
    return config


def serve(args):
    from .cluster import SimulatedCluster

    cluster = SimulatedCluster(profile=args.profile, crd_dir=args.crd_dir, token=args.token, faults=args.faults,
                               config=_parse_set(args.set), port=args.port, host=args.host,
                               controllers=not args.no_controllers, tls=args.tls,
                               admin_manifests=[] if args.bare else None)
    stop = threading.Event()

    def on_signal(_signum, _frame):
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    cluster.start()
    try:
        if args.kubeconfig:
            cluster.write_kubeconfig(args.kubeconfig)
        kubeconfig = args.kubeconfig or cluster.kubeconfig
        info = {"url": cluster.url, "kubeconfig": os.path.abspath(kubeconfig), "token": cluster.token,
                "pid": os.getpid()}
        if cluster.profile is not None:
            info["profile"] = {"name": cluster.profile.name, "description": " ".join(cluster.profile.description.split()),
                               "openshift": cluster.profile.cluster.version}
        if args.pid_file:
            with open(args.pid_file, "w", encoding="utf-8") as fh:
                fh.write("%d\n" % os.getpid())
        if args.ready_file:
            tmp = args.ready_file + ".tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(info, fh)
            os.replace(tmp, args.ready_file)
        print("simulated OpenShift API server: %s" % cluster.url, flush=True)
        print("kubeconfig: %s" % info["kubeconfig"], flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        cluster.stop()
        for path in (args.pid_file, args.ready_file):
            if path and os.path.exists(path):
                os.unlink(path)
    return 0


def _alive(pid):
    """True while pid runs (an exited child its parent has not reaped yet, a zombie, counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def stop(args):
    try:
        with open(args.pid_file, encoding="utf-8") as fh:
            pid = int(fh.read().strip())
    except (OSError, ValueError) as exc:
        print("cannot read pid file %s: %s" % (args.pid_file, exc), file=sys.stderr)
        return 1
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        print("no process %d" % pid, file=sys.stderr)
        return 1
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return 0
        time.sleep(0.1)
    print("process %d did not exit within %ss" % (pid, args.timeout), file=sys.stderr)
    return 1


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m simulator", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="run the simulated API server until SIGINT/SIGTERM")
    p.add_argument("--profile", default="roce-lab", help="hardware profile name or path (default roce-lab)")
    p.add_argument("--kubeconfig", help="also write a kubeconfig (context 'simulated') to this path")
    p.add_argument("--crd-dir", default=None, help="CRD directory (default $GPUDIRECT_CRD_DIR)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="TCP port (default: any free port)")
    p.add_argument("--token", default=None, help="bearer token (default: random)")
    p.add_argument("--faults", default=None, help="fault rules file (JSON or YAML)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="timing knob for the simulated operators")
    p.add_argument("--ready-file", help="write {url, kubeconfig, token, pid} as JSON here once serving")
    p.add_argument("--pid-file", help="write the process id here (for `stop`)")
    p.add_argument("--tls", action="store_true", help="serve https with a self-signed certificate (kubectl and oc "
                   "send bearer tokens only over TLS)")
    p.add_argument("--no-controllers", action="store_true", help="API server only, no simulated operators")
    p.add_argument("--bare", action="store_true",
                   help="skip what an administrator applies first (deploy/rbac/workloads.yml: facts and verify SCCs)")
    p.add_argument("--log-level", default="INFO")
    p.set_defaults(func=serve)
    s = sub.add_parser("stop", help="stop a server started with --pid-file")
    s.add_argument("--pid-file", required=True)
    s.add_argument("--timeout", type=float, default=20)
    s.set_defaults(func=stop)
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(args, "log_level", "INFO").upper(),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return args.func(args)
