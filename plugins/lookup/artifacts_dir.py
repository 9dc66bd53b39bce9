# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
name: artifacts_dir
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
short_description: Where this cluster's reports go on the controller
description:
  - Returns one absolute directory, C(<root>/<cluster>), that the facts, verification and diagnostics reports and
    the upgrade report share.
  - C(<root>) is C(GPUDIRECT_ARTIFACTS_DIR) when set, else C(artifacts) under the controller's working directory, as
    the process sees it (not C(PWD), which C(env -i), systemd units and some launchers leave unset or stale, and
    which would then put the reports inside the installed collection).
  - C(<cluster>) is the inventory host; for the implicit C(localhost) (the cluster from C(K8S_AUTH_*) or
    C(KUBECONFIG)) it is the cluster's name from its API server URL (C(https://api.<cluster>.<domain>:6443) gives
    C(<cluster>)), the name the reports themselves carry.
options:
  _terms:
    description: Optional path parts appended to the directory (for example C(verify)).
    type: list
    elements: str
    required: false
  cluster:
    description: The cluster's directory name instead of the inventory host (a C(localhost) alias is resolved as above).
    type: str
  root:
    description: The parent directory instead of C(GPUDIRECT_ARTIFACTS_DIR) or C(artifacts) under the working directory.
    type: str
  root_only:
    description: Return only the parent directory, without the cluster's name and the terms.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Say where the verification reports go
  ansible.builtin.debug:
    msg: "{{ lookup('gpudirect.openshift.artifacts_dir', 'verify') }}"

- name: The parent of every cluster's directory
  ansible.builtin.debug:
    msg: "{{ lookup('gpudirect.openshift.artifacts_dir', root_only=true) }}"
"""

RETURN = r"""
_raw:
  description: One absolute directory.
  type: list
  elements: str
"""

import os

from ansible.plugins.lookup import LookupBase

from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.connection import cluster_name

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def artifacts_root(environ=None, cwd=None):
    """GPUDIRECT_ARTIFACTS_DIR, else <the working directory>/artifacts, absolute."""
    environ = os.environ if environ is None else environ
    given = environ.get("GPUDIRECT_ARTIFACTS_DIR")
    return os.path.abspath(given) if given else os.path.join(cwd or os.getcwd(), "artifacts")


def _kubeconfig_server(path, context=None):
    """The API server URL of a kubeconfig's context (the current one by default), or None."""
    try:
        import yaml  # PyYAML comes with ansible-core
        with open(os.path.expanduser(path)) as handle:
            config = yaml.safe_load(handle) or {}
    except (OSError, ValueError, ImportError, AttributeError):
        return None
    except Exception:  # pylint: disable=broad-except  # a malformed file names no cluster; the modules say why
        return None
    context = context or config.get("current-context")
    contexts = {c.get("name"): c.get("context") or {} for c in config.get("contexts") or [] if isinstance(c, dict)}
    clusters = {c.get("name"): c.get("cluster") or {} for c in config.get("clusters") or [] if isinstance(c, dict)}
    return (clusters.get((contexts.get(context) or {}).get("cluster")) or {}).get("server")


def local_cluster_name(values, environ=None):
    """The name of the cluster the implicit localhost reaches, as kubernetes.core picks the connection: a host given,
    else the kubeconfig (gpudirect_kubeconfig, K8S_AUTH_KUBECONFIG, KUBECONFIG, ~/.kube/config); None when none names
    one."""
    environ = os.environ if environ is None else environ
    host = values.get("gpudirect_api_host") or environ.get("K8S_AUTH_HOST")
    if host:
        return cluster_name(host)
    path = values.get("gpudirect_kubeconfig") or environ.get("K8S_AUTH_KUBECONFIG") or \
        (environ.get("KUBECONFIG")
         or "").split(os.pathsep)[0] or os.path.join(environ.get("HOME") or "~", ".kube", "config")
    context = values.get("gpudirect_context") or environ.get("K8S_AUTH_CONTEXT")
    return cluster_name(_kubeconfig_server(path, context))


def cluster_directory(inventory_hostname, values, environ=None):
    if inventory_hostname in LOCAL_HOSTS:
        return local_cluster_name(values, environ) or inventory_hostname
    return inventory_hostname


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        variables = variables or {}
        values = {}
        for name in ("gpudirect_api_host", "gpudirect_kubeconfig", "gpudirect_context"):
            if variables.get(name) is not None:
                values[name] = self._templar.template(variables[name])
        root = os.path.abspath(self.get_option("root")) if self.get_option("root") else artifacts_root()
        if self.get_option("root_only"):
            return [root]
        host = self.get_option("cluster") or self._templar.template(variables.get("inventory_hostname", "localhost"))
        parts = [root, cluster_directory(host, values)] + [str(term) for term in terms or []]
        return [os.path.join(*parts)]
