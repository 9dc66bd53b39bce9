"""SimulatedCluster: the simulated OpenShift API server running on loopback in a background thread."""

import asyncio
import concurrent.futures
import dataclasses
import importlib
import inspect
import logging
import os
import secrets
import shutil
import socket
import tempfile
import threading
import uuid

import yaml
from aiohttp import web

from . import admission_policy, rbac
from .app import ApiServer
from .builtins import register_builtins
from .crds import (available_crd_refs, crd_ref_for_version, crd_resource_types, default_crd_dir, load_crds,
                   served_crd_refs, source_crd_documents)
from .errors import ApiError
from .faults import FaultInjector
from .requestlog import RequestLog
from .store import Store
from .watch import close_all

log = logging.getLogger("simulator")

# Timing knobs the simulated operators read (S2's controllers add their own keys; unknown keys are kept).
DEFAULT_CONFIG = {
    "olm_step_seconds": 0.05,
    "watch_bookmark_interval_s": 5.0,
    "watch_default_timeout_s": 1800,
}


class ScheduledCall:
    """Handle of a schedule()d call; cancel() is thread-safe."""

    def __init__(self, loop):
        self._loop = loop
        self._handle = None
        self.cancelled = False

    def cancel(self):
        self.cancelled = True
        if self._handle is not None:
            self._loop.call_soon_threadsafe(self._handle.cancel)


def default_admin_manifests():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "deploy", "rbac", "workloads.yml")
    return [path] if os.path.exists(path) else []


class SimulatedCluster:
    def __init__(self, profile="roce-lab", crd_dir=None, token=None, faults=None, config=None, port=0,
                 host="127.0.0.1", history_limit=10000, controllers=True, tls=False, crd_refs=None, admin_manifests=None):
        self.store = Store(history_limit=history_limit)
        self.faults = FaultInjector.from_spec(faults)
        self.config = dict(DEFAULT_CONFIG)
        self.config.update(config or {})
        self.pod_logs = {}
        self.requests = RequestLog()
        self.token = token or secrets.token_urlsafe(24)
        # bearer token -> user; the kubeconfig's token is a cluster administrator (system:masters)
        self.users = {self.token: rbac.admin_user()}
        self.crd_dir = crd_dir if crd_dir is not None else default_crd_dir()
        self.crd_refs = dict(crd_refs or {})  # {source: ref}: which version of an operator's CRDs to serve
        self.crds = {}
        self.profile_spec = profile
        self.profile = None
        self.controllers = None
        self.host = host
        self.port = port
        # A per-start path prefix gives every instance its own discovery cache file in the kubernetes clients
        # (they key it by server URL); the server answers with and without it.
        self.path_prefix = ""
        self.url = None
        self.kubeconfig = None
        self._want_controllers = controllers
        self.tls = tls
        self.ca_file = None
        self._loop = None
        self._thread = None
        self._runner = None
        self._tmpdir = None
        self._server = None
        self._listener = None  # the listening asyncio.Server (ours, so that kill() can close it at once)
        self._started = False
        # API server outage (kill()/restart()): the store (etcd) and this process's loop live on.
        self._down = False
        self._down_task = None
        self._comeback = None  # the timer of kill(down_seconds=...)
        self._held = []  # controller work due while the API server was down, run on restart()
        self.up = threading.Event()
        self.kills = 0
        self.scheduled_errors = []
        # What a cluster administrator applied before the collection runs (None: the repository's
        # deploy/rbac/workloads.yml, as docs/least-privilege.md asks; []: a bare cluster).
        self.admin_manifests = default_admin_manifests() if admin_manifests is None else list(admin_manifests)

    def service_account_token(self, namespace, name):
        """A bearer token that authenticates as service account ``namespace/name`` (RBAC applies to it)."""
        token = secrets.token_urlsafe(24)
        self.users[token] = rbac.service_account_user(namespace, name)
        return token

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        if self._started:
            return self
        self.crds = load_crds(self.store, self.crd_dir, self.crd_refs)
        self.crd_refs_served = served_crd_refs(self.crd_dir, self.crd_refs) if os.path.isdir(self.crd_dir or "") else {}
        register_builtins(self.store)
        self.profile = self._load_profile(self.profile_spec)
        if self.profile is not None and not admission_policy.served(int(self.profile.cluster.kubernetes_version.split(".")[1])):
            for plural in (admission_policy.POLICIES, admission_policy.BINDINGS):
                self.store.set_served(admission_policy.GROUP, plural, False)
        self._server = ApiServer(self)
        for path in self.admin_manifests:
            self._server.apply_as_admin(path)
        self._tmpdir = tempfile.mkdtemp(prefix="simulated-cluster-")
        self._ssl = None
        if self.tls:
            from .tlscert import server_ssl_context

            self._ssl, self.ca_file = server_ssl_context(self._tmpdir)
        self._down, self._down_task, self._comeback, self._held = False, None, None, []  # a start() after stop()
        ready = threading.Event()
        failure = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, args=(ready, failure), name="simulated-apiserver",
                                        daemon=True)
        self._thread.start()
        ready.wait(30)
        if failure:
            self._thread.join(5)
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            raise failure[0]
        self.path_prefix = "/sim-" + uuid.uuid4().hex[:12]
        self.root_url = "%s://%s:%d" % ("https" if self.tls else "http", self.host, self.port)
        self.url = self.root_url + self.path_prefix
        self.kubeconfig = os.path.join(self._tmpdir, "kubeconfig")
        self.write_kubeconfig(self.kubeconfig)
        self._started = True
        try:
            self._install_controllers()
        except BaseException:
            self.stop()
            raise
        log.info("simulated API server at %s (kubeconfig %s)", self.url, self.kubeconfig)
        return self

    def _run_loop(self, ready, failure):
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported to start()
            failure.append(exc)
            ready.set()
            return
        ready.set()
        self._loop.run_forever()
        # Shutdown: cancel what controllers left behind, then close the loop.
        pending = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()

    async def _serve(self):
        app = self._server.make_app()
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))  # after restart(): the same port, as an API server's clients expect
        except OSError:
            sock.close()
            await runner.cleanup()
            raise
        self.port = sock.getsockname()[1]
        # No aiohttp site: its listener is private, and kill() must stop accepting within the current loop step.
        self._listener = await asyncio.get_running_loop().create_server(runner.server, sock=sock, ssl=self._ssl, backlog=128)
        self._runner = runner
        self.up.set()

    def _load_profile(self, spec):
        if spec is None:
            return None
        try:
            module = importlib.import_module(__package__ + ".profiles")
        except ModuleNotFoundError as exc:
            if exc.name != __package__ + ".profiles":
                raise
            log.info("simulator.profiles is not present: starting without a profile")
            return None
        return module.load_profile(spec)

    def _install_controllers(self):
        if not self._want_controllers:
            return
        try:
            module = importlib.import_module(__package__ + ".controllers")
        except ModuleNotFoundError as exc:
            if exc.name != __package__ + ".controllers":
                raise
            log.info("simulator.controllers is not present: starting without simulated operators")
            return
        self.controllers = module.install_controllers(self)

    def stop(self):
        if self._loop is None:
            return
        loop = self._loop
        if self._thread is not None and self._thread.is_alive():
            async def shutdown():
                self._go_down()
                if self._down_task is not None:
                    await self._down_task

            try:
                asyncio.run_coroutine_threadsafe(shutdown(), loop).result(15)
            except (concurrent.futures.TimeoutError, RuntimeError) as exc:
                log.warning("simulated API server did not shut down cleanly: %s", exc)
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(15)
        self._loop = None
        self._thread = None
        self._started = False
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    # ------------------------------------------------------------------ API server outage
    # kill() is the API server process dying; restart() is it coming back on the same address. The store is etcd:
    # every object survives. The simulated operators run in this process against the store; real ones cannot write
    # while the API server is down, so work that falls due meanwhile is held and runs on restart() (in order).
    def kill(self, down_seconds=None):
        """Stop answering: the port refuses connections, open watches end (as at their timeout), other connections
        close once their request is answered. With
        ``down_seconds`` the server comes back by itself that much later. Thread-safe; no-op when down."""
        if self.in_loop():
            self._kill_now(down_seconds)
            return
        self.call(self._kill_now, down_seconds)
        self.call(self._wait_down)

    def restart(self, timeout=15):
        """Serve again on the same port; held controller work runs. No-op when up."""
        self.call(self._come_back, timeout=timeout)

    @property
    def api_server_up(self):
        return self.up.is_set()

    def _kill_now(self, down_seconds=None):
        """On the loop: stop accepting in this step (a client's retry must be refused, not served by a dying
        server), then shut the connections down in a task. The request being handled may still get its answer."""
        if self._down or self._listener is None:
            return
        self.kills += 1
        self._go_down()
        if down_seconds is not None:
            self._comeback = self._loop.call_later(float(down_seconds), lambda: asyncio.ensure_future(self._come_back()))

    def _go_down(self):
        if self._down:
            return
        self._down = True
        self.up.clear()
        self._server.shutting_down = True
        close_all(self._server)
        listener, runner = self._listener, self._runner
        self._listener = self._runner = None
        if listener is not None:
            listener.close()

        async def cleanup():
            if runner is not None:
                await runner.cleanup()

        self._down_task = asyncio.ensure_future(cleanup())

    async def _wait_down(self):
        if self._down_task is not None:
            await self._down_task

    async def _come_back(self):
        if self._comeback is not None:
            self._comeback.cancel()
            self._comeback = None
        if not self._down or self._loop is None:
            return
        await self._wait_down()
        self._server.shutting_down = False
        await self._serve()
        self._down = False
        held, self._held = self._held, []
        for run in held:
            self._loop.call_soon(run)

    def _task_done(self, fn, task):
        if not task.cancelled() and task.exception() is not None:
            self._background_error(fn, task.exception())

    def _background_error(self, fn, exc):
        """A scheduled call raised. ApiErrors (404/409 races) are what real controllers retry on: logged only.
        Anything else is a simulator bug: logged and kept in errors (the pytest fixtures fail on it)."""
        if isinstance(exc, ApiError):
            log.info("scheduled call %r: %r", fn, exc)
            return
        log.error("scheduled call %r failed", fn, exc_info=exc)
        self.scheduled_errors.append((fn, exc))

    @property
    def errors(self):
        """Unexpected exceptions raised by scheduled calls and store subscribers (controller bugs)."""
        return list(self.scheduled_errors) + [(cb, exc) for cb, _t, _p, exc in self.store.subscriber_errors]

    @property
    def running(self):
        return self._started

    # ------------------------------------------------------------------ loop helpers
    @property
    def loop(self):
        return self._loop

    def in_loop(self):
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def schedule(self, delay_s, fn, *args):
        """Run fn(*args) (plain function or coroutine function) on the server loop after delay_s. Thread-safe.
        Exceptions are logged, not raised. Returns a handle with cancel()."""
        loop = self._loop
        handle = ScheduledCall(loop)
        if loop is None or loop.is_closed():
            # After stop(): store writes from a test must not fail because a controller reacts to them.
            log.debug("schedule(%r) ignored: the simulated cluster is stopped", fn)
            handle.cancelled = True
            return handle

        def run():
            if handle.cancelled:
                return
            if self._down:  # the API server is down: the operator cannot act until it is back
                self._held.append(run)
                return
            try:
                result = fn(*args)
                if inspect.isawaitable(result):
                    task = asyncio.ensure_future(result)
                    task.add_done_callback(lambda t: self._task_done(fn, t))
            except Exception as exc:
                self._background_error(fn, exc)

        def arm():
            handle._handle = loop.call_later(max(0.0, float(delay_s)), run)

        if self.in_loop():
            arm()
        else:
            try:
                loop.call_soon_threadsafe(arm)
            except RuntimeError:  # closed between the check and now
                handle.cancelled = True
        return handle

    def call(self, fn, *args, timeout=30):
        """Run fn(*args) on the server loop and return its result (awaited when it is a coroutine)."""
        if self.in_loop():
            raise RuntimeError("call() from the server loop would deadlock; call fn directly")

        async def runner():
            result = fn(*args)
            if inspect.isawaitable(result):
                result = await result
            return result

        return asyncio.run_coroutine_threadsafe(runner(), self._loop).result(timeout)

    # ------------------------------------------------------------------ kubeconfig
    def kubeconfig_dict(self, token=None):
        return {
            "apiVersion": "v1", "kind": "Config", "preferences": {},
            "clusters": [{"name": "simulated", "cluster": self._cluster_entry()}],
            "users": [{"name": "simulated-admin", "user": {"token": token or self.token}}],
            "contexts": [{"name": "simulated", "context": {"cluster": "simulated", "user": "simulated-admin",
                                                           "namespace": "default"}}],
            "current-context": "simulated",
        }

    def _cluster_entry(self):
        entry = {"server": self.url}
        if self.tls:
            import base64

            from .tlscert import serving_cert

            entry["certificate-authority-data"] = base64.b64encode(serving_cert()[0]).decode()
        return entry

    def write_kubeconfig(self, path, token=None):
        """A kubeconfig for this server: the administrator's token, or ``token`` (service_account_token)."""
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            yaml.safe_dump(self.kubeconfig_dict(token), fh, sort_keys=False)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
        return path

    def api_client(self):
        """A kubernetes.client.ApiClient configured for this cluster."""
        from kubernetes import client, config

        return config.new_client_from_config(config_file=self.kubeconfig, context="simulated",
                                             persist_config=False) if hasattr(config, "new_client_from_config") \
            else client.ApiClient()

    def dynamic_client(self):
        from kubernetes.dynamic import DynamicClient

        return DynamicClient(self.api_client())

    # ------------------------------------------------------------------ request log
    @property
    def request_log(self):
        """Every answered request as a list of dicts (copies)."""
        return self.requests.entries()

    def count(self, verb=None, writes_only=False, include_dry_run=False, since=0, effective_only=False, **match):
        """Requests in the log (see RequestLog.count)."""
        return self.requests.count(verb=verb, writes_only=writes_only, include_dry_run=include_dry_run, since=since,
                                   effective_only=effective_only, **match)

    def mark(self):
        """Index into the request log, for count(since=...)."""
        return len(self.requests)

    def reset_request_log(self):
        self.requests.reset()

    # ------------------------------------------------------------------ convenience for tests/controllers
    def type(self, api_version, kind):
        return self.store.find_kind(api_version, kind)

    def update_catalog(self, publish=(), default_channels=None):
        """Publish bundles and move default channels at run time (see Controllers.update_catalog)."""
        return self.call(self.controllers.update_catalog, list(publish or ()), dict(default_channels or {}))

    def serve_operator_version(self, source, version):
        """OLM applies the CRDs of the bundle it installs (operator-lifecycle-manager,
        pkg/controller/operators/catalog/operator.go ExecutePlan, step.go: create, or update after
        validateV1CRDCompatibility): serve source's CRDs of the ref that ships with operator ``version``.
        A ref pinned by crd_refs= stays. Returns the ref served."""
        current = self.crd_refs_served.get(source)
        if current is None or source in self.crd_refs:
            return current
        ref = crd_ref_for_version(available_crd_refs(self.crd_dir).get(source, []), version)
        if ref is None or ref == current:
            return current
        with self.store.lock:
            served = {(t.group, t.plural): t.served for t in self.store.resource_types()}
            for crd in source_crd_documents(self.crd_dir, source, ref):
                key = (crd["spec"]["group"], crd["spec"]["names"]["plural"])
                for rtype in crd_resource_types(crd):
                    self.store.register(dataclasses.replace(rtype, served=served.get(key, rtype.served)))
                self.crds[key] = crd
            self.crd_refs_served[source] = ref
        return ref

    def set_served(self, group, plural, served=True):
        self.store.set_served(group, plural, served)
