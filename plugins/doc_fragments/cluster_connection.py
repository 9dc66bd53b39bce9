# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    # How a cluster module reaches the API server. The options are kubernetes.core's AUTH_ARG_SPEC
    # (plugins/module_utils/args_common.py), which the modules take as their argument spec, and kubernetes.core's
    # client (plugins/module_utils/k8s/client.py, _create_auth_spec and _create_headers) reads the K8S_AUTH_*
    # variables named here. The collection documents them itself so that its docs build with ansible-core alone
    # (galaxy-importer and ansible-doc resolve no fragment of another collection without it installed).
    DOCUMENTATION = r"""
options:
  host:
    description:
      - URL of the cluster's API server, for example C(https://api.ocp.example:6443).
      - When unset, the E(K8S_AUTH_HOST) environment variable is used.
    type: str
  api_key:
    description:
      - Bearer token sent to the API server, such as the token of a service account or of C(oc whoami -t).
      - When unset, the E(K8S_AUTH_API_KEY) environment variable is used.
    type: str
  kubeconfig:
    description:
      - Kubeconfig to read the cluster, user and context from; a path, several paths joined by the platform's path
        separator, or the kubeconfig's content as a dictionary.
      - When unset, the E(K8S_AUTH_KUBECONFIG) environment variable is used. With neither this nor O(host) given,
        the Kubernetes Python client reads its default kubeconfig (E(KUBECONFIG) or C(~/.kube/config)).
    type: raw
  context:
    description:
      - Which context of the kubeconfig to use instead of its current one.
      - When unset, the E(K8S_AUTH_CONTEXT) environment variable is used.
    type: str
  username:
    description:
      - User name for HTTP basic authentication. OpenShift's OAuth login is not basic authentication; use a token
        (O(api_key)) or a kubeconfig there.
      - When unset, the E(K8S_AUTH_USERNAME) environment variable is used.
    type: str
  password:
    description:
      - Password that goes with O(username).
      - When unset, the E(K8S_AUTH_PASSWORD) environment variable is used.
    type: str
  client_cert:
    description:
      - File with the client certificate that authenticates this client to the API server.
      - When unset, the E(K8S_AUTH_CERT_FILE) (or E(K8S_AUTH_CLIENT_CERT)) environment variable is used.
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - File with the private key of O(client_cert).
      - When unset, the E(K8S_AUTH_KEY_FILE) (or E(K8S_AUTH_CLIENT_KEY)) environment variable is used.
    type: path
    aliases: [key_file]
  ca_cert:
    description:
      - File with the certificate authorities that signed the API server's certificate, intermediates included.
      - When unset, the E(K8S_AUTH_SSL_CA_CERT) (or E(K8S_AUTH_CA_CERT)) environment variable is used.
    type: path
    aliases: [ssl_ca_cert]
  validate_certs:
    description:
      - Whether the API server's TLS certificate is checked. Turning it off exposes the token to whoever answers.
      - When unset, the E(K8S_AUTH_VERIFY_SSL) (or E(K8S_AUTH_VALIDATE_CERTS)) environment variable is used.
    type: bool
    aliases: [verify_ssl]
  proxy:
    description:
      - URL of an HTTP proxy between this client and the API server.
      - E(HTTP_PROXY) and E(HTTPS_PROXY) are not read; set this option or E(K8S_AUTH_PROXY).
    type: str
  no_proxy:
    description:
      - Comma-separated hosts, domains and CIDRs reached without O(proxy).
      - E(NO_PROXY) is not read; set this option or E(K8S_AUTH_NO_PROXY).
    type: str
  proxy_headers:
    description:
      - Headers sent to O(proxy).
    type: dict
    suboptions:
      proxy_basic_auth:
        description:
          - C(user:password) for the proxy's basic authentication (E(K8S_AUTH_PROXY_HEADERS_PROXY_BASIC_AUTH)).
        type: str
      basic_auth:
        description:
          - C(user:password) for a basic authentication header (E(K8S_AUTH_PROXY_HEADERS_BASIC_AUTH)).
        type: str
      user_agent:
        description:
          - User agent sent to the proxy (E(K8S_AUTH_PROXY_HEADERS_USER_AGENT)).
        type: str
  persist_config:
    description:
      - Whether a token that the Kubernetes Python client refreshes (OIDC and similar kubeconfig users) is written
        back to the kubeconfig file.
      - When unset, the E(K8S_AUTH_PERSIST_CONFIG) environment variable is used.
    type: bool
  impersonate_user:
    description:
      - User that the API server acts as for every request (the C(Impersonate-User) header).
      - When unset, the E(K8S_AUTH_IMPERSONATE_USER) environment variable is used.
    type: str
  impersonate_groups:
    description:
      - Groups that the API server acts as for every request (C(Impersonate-Group) headers).
      - When unset, the E(K8S_AUTH_IMPERSONATE_GROUPS) environment variable is used, its groups separated by commas.
    type: list
    elements: str
notes:
  - The connection code is kubernetes.core's; these modules need the kubernetes.core collection and the
    C(kubernetes) Python package on the host that runs them.
  - With O(validate_certs) on, the API server's full certificate chain must come from O(ca_cert) or the kubeconfig.
requirements:
  - python >= 3.10
  - kubernetes >= 24.2.0
attributes:
  platform:
    support: full
    platforms: posix
"""
