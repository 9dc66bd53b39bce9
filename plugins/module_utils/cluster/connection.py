# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Where a module's bearer token may go, checked before the first request.

kubernetes.core fills ``api_key`` from ``K8S_AUTH_API_KEY`` (an AWX credential sets it, with ``K8S_AUTH_HOST``) but
takes ``host`` from the task when one is given: a variable that names another host would send the credential's
token there. A token also never travels over plain http, whether it comes from a parameter, K8S_AUTH_API_KEY or the
kubeconfig's user (a kubeconfig's plain-http server is accepted only on a loopback address, where the token does not
cross a network: the simulated cluster serves so). Every cluster module connects through ``connect()``, which its
ClusterModule (cluster/module_base.py) calls.
"""


import ipaddress
import os

try:
    from urllib.parse import urlsplit
except ImportError:  # pragma: no cover - Python 2; the collection needs 3.10
    from urlparse import urlsplit


def _normalise(url):
    return (url or "").strip().rstrip("/").lower()


def cluster_name(url):
    """A cluster's name for reports, from its API server URL: OpenShift serves https://api.<cluster>.<base domain>:6443,
    so 'https://api.lab-1.example.com:6443' -> 'lab-1'; any other host is named by itself; None without a URL."""
    if not isinstance(url, str) or not url.strip():
        return None
    try:
        host = urlsplit(url.strip() if "://" in url else "https://" + url.strip()).hostname
    except ValueError:
        return None
    if not host:
        return None
    labels = host.split(".")
    if len(labels) >= 3 and labels[0] in ("api", "api-int") and labels[1]:
        return labels[1]
    return host


def connection_problem(host=None, api_key=None, environ=None):
    """One sentence saying why this host and token (the connection options) would leak the token, or None."""
    environ = os.environ if environ is None else environ
    env_host, env_key = environ.get("K8S_AUTH_HOST"), environ.get("K8S_AUTH_API_KEY")
    # As kubernetes.core's client does: a parameter wins, else the K8S_AUTH_* variable.
    host, api_key = host or env_host, api_key or env_key
    if api_key and _normalise(host).startswith("http://"):
        return ("Refusing to send a bearer token over plain http to %s: give the API server's https:// URL "
                "(gpudirect_api_host or K8S_AUTH_HOST)." % host)
    if env_key and api_key == env_key and host and _normalise(host) != _normalise(env_host):
        return ("Refusing to send the token of K8S_AUTH_API_KEY (the job's credential) to %s, which is not the "
                "credential's host (K8S_AUTH_HOST=%s): remove gpudirect_api_host, or give the host its own "
                "gpudirect_api_key." % (host, env_host or "unset"))
    return None


def _kubeconfig_documents(kubeconfig, environ):
    """The kubeconfig documents the Kubernetes client would read, first file first; [] when there is none."""
    if isinstance(kubeconfig, dict):
        return [kubeconfig]
    paths = kubeconfig or environ.get("KUBECONFIG") or os.path.join("~", ".kube", "config")
    documents = []
    for path in [item for item in str(paths).split(os.pathsep) if item]:
        path = os.path.expanduser(path)
        if not os.path.isfile(path):
            continue
        try:
            import yaml

            with open(path, encoding="utf-8") as handle:
                document = yaml.safe_load(handle)
        # The Kubernetes client reports an unreadable kubeconfig itself.
        except Exception:  # pylint: disable=broad-except
            continue
        if isinstance(document, dict):
            documents.append(document)
    return documents


def _named(documents, section, name):
    # client-go clientcmd (tools/clientcmd/loader.go): when files are merged, the first file that defines a name wins.
    for document in documents:
        for entry in document.get(section) or []:
            if isinstance(entry, dict) and entry.get("name") == name:
                return entry.get(section[:-1]) or {}
    return {}


def _is_loopback(url):
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def kubeconfig_problem(host=None, api_key=None, kubeconfig=None, context=None, environ=None):
    """One sentence when the kubeconfig's user credentials would go over plain http to a host that is not loopback, or
    None (the arguments are the connection options of the same names). Tokens given as api_key or K8S_AUTH_API_KEY are
    connection_problem's."""
    environ = os.environ if environ is None else environ
    if api_key or environ.get("K8S_AUTH_API_KEY"):
        return None  # the token is not the kubeconfig's: connection_problem judges it
    documents = _kubeconfig_documents(kubeconfig or environ.get("K8S_AUTH_KUBECONFIG"), environ)
    if not documents:
        return None
    context_name = context or environ.get("K8S_AUTH_CONTEXT") or next(
        (document.get("current-context") for document in documents if document.get("current-context")), None)
    context = _named(documents, "contexts", context_name)
    # kubernetes.core builds the client from the kubeconfig, then a host option replaces its server.
    server = str(host or environ.get("K8S_AUTH_HOST")
                 or _named(documents, "clusters", context.get("cluster")).get("server") or "")
    user = _named(documents, "users", context.get("user"))
    credentials = [key for key in ("token", "tokenFile", "auth-provider", "exec", "password") if user.get(key)]
    if credentials and _normalise(server).startswith("http://") and not _is_loopback(server.strip()):
        return ("Refusing to send the kubeconfig's credentials (user %s, %s) over plain http to %s: give the "
                "cluster's https:// server in the kubeconfig." % (context.get("user"), credentials[0], server))
    return None


def check_connection(module, host=None, api_key=None, kubeconfig=None, context=None):
    """Fail the module before any request when its connection options (of the same names) would leak the token."""
    problem = connection_problem(host, api_key) or kubeconfig_problem(host, api_key, kubeconfig, context)
    if problem:
        module.fail_json(msg=problem)


def connect(module, connection, **client_options):
    """The module's ClusterClient, after check_connection; ``connection`` holds the module's connection options
    (ClusterModule.connection). kubernetes.core's client reads them from ``module`` itself."""
    # Imported here: the kubernetes.core client needs the kubernetes library, which the module reports missing.
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
    from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import DEFAULT_RETRY
    from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import ClusterClient

    check_connection(module, **{key: connection.get(key) for key in ("host", "api_key", "kubeconfig", "context")})
    # Building the client reads /version and discovery: a 5xx or a dropped connection there is as transient as on
    # any other request, so it gets the same retries.
    return ClusterClient(DEFAULT_RETRY.call(get_api_client, module), **client_options)
