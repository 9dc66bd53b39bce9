"""The operands each simulated operator runs: DaemonSets and Deployments with the upstream names, labels, selectors,
tolerations and images, created and kept in line by the operators; their pods and status come from workloads.py.

Read from the operators' manifests at the supported versions:
- NVIDIA Network Operator v25.4.0 and v26.4.1 `manifests/state-*/` (state-ofed-driver 0050_ofed-driver-ds.yaml,
  state-rdma-shared-device-plugin 0060_rdma-shared-dev-plugin-ds.yaml, state-sriov-device-plugin
  0030-sriov-dp-daemonset.yaml, state-ib-kubernetes 0070-deployment.yaml, state-multus-cni 0050-multus-ds.yml,
  state-container-networking-plugins 0010-container-networking-plugins-ds.yml, state-ipoib-cni 0050-ipoib-cni-ds.yml,
  state-nv-ipam-cni 040-nv-ipam-node.yaml / 040-nv-ipam-controller.yaml) and `pkg/state/state_ofed.go` (the driver
  DaemonSet per node pool, named mofed-<os><version>-<kernel hash>-ds, image <repository>/<image>:<version>-<os><version>-<arch>,
  getStringHash = FNV-32a then rand.SafeEncodeString), `pkg/state/state_skel.go` (ds-owner label, empty name suffix
  for the NicClusterPolicy).
- NVIDIA GPU Operator v24.9.2, v25.3.4 and v26.7.0 `assets/state-*/` (DaemonSet names, `app` labels, the
  `nvidia.com/gpu.deploy.<component>` node selectors, the driver's OnDelete strategy), `controllers/object_controls.go`
  (on OpenShift the driver DaemonSet's name gets the RHCOS version) and each bundle's CSV `spec.relatedImages`.
- SR-IOV Network Operator v1.6.0 `bindata/manifests/daemon/daemonset.yaml`, `plugins/sriov-device-plugin.yaml`,
  `operator-webhook/server.yaml`, `webhook/server.yaml`.
- openshift/cluster-nfd-operator `internal/daemonset`, `internal/deployment` (nfd-worker DaemonSet, nfd-master
  Deployment).
"""

import struct

NIC_NODE_LABEL = "feature.node.kubernetes.io/pci-15b3.present"
MOFED_WAIT = "network.nvidia.com/operator.mofed.wait"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
MASTER_TOLERATIONS = [{"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
                      {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]
CONTROL_PLANE_AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "node-role.kubernetes.io/master", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]}]}}}
_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery pkg/util/rand alphanums

# Operand images of each GPU Operator release: its bundle CSV's spec.relatedImages (NVIDIA/gpu-operator
# bundle/manifests/gpu-operator-certified.clusterserviceversion.yaml at the tag), by relatedImages name.
GPU_OPERAND_IMAGES = {
    "24.9": {
        "driver-image": "nvcr.io/nvidia/driver@sha256:6fe74322562c726c8fade184d8c45ebae3da7b1ea0a21f0ff9dc42c66c65e692",
        "container-toolkit-image": "nvcr.io/nvidia/k8s/container-toolkit@sha256:d934033f9ff89087d555850eb1da150eaaa27b11e5ad21db1b874b8bc0b8d35b",
        "device-plugin-image": "nvcr.io/nvidia/k8s-device-plugin@sha256:7089559ce6153018806857f5049085bae15b3bf6f1c8bd19d8b12f707d087dea",
        "gpu-feature-discovery-image": "nvcr.io/nvidia/k8s-device-plugin@sha256:7089559ce6153018806857f5049085bae15b3bf6f1c8bd19d8b12f707d087dea",
        "dcgm-exporter-image": "nvcr.io/nvidia/k8s/dcgm-exporter@sha256:857f7669ae5ce2a43a3b5691fa970085098321ef8e90a896fa8dda3dee5b1d2b",
        "dcgm-image": "nvcr.io/nvidia/cloud-native/dcgm@sha256:e8398b2451996e5c64fc3855e7a3c93b667a85f69c0e259049d3b0012c21545d",
        "mig-manager-image": "nvcr.io/nvidia/cloud-native/k8s-mig-manager@sha256:40830d3561c14743f484d45b498141f9e86b1308e16fae3978110783927264ab",
        "gpu-operator-validator-image": "registry.gitlab.com/nvidia/kubernetes/gpu-operator/staging/gpu-operator-validator:main-latest",
    },
    "25.3": {
        "driver-image": "nvcr.io/nvidia/driver@sha256:b6250c461c6226d5fb1383e3e8331e7e0bf07f9ed88a36988bbe5f6cc754d735",
        "container-toolkit-image": "nvcr.io/nvidia/k8s/container-toolkit@sha256:51c8f71d3b3c08ae4eb4853697e3f8e6f11e435e666e08210178e6a1faf8028f",
        "device-plugin-image": "nvcr.io/nvidia/k8s-device-plugin@sha256:3c54348fe5a57e5700e7d8068e7531d2ef2d5f3ccb70c8f6bac0953432527abd",
        "gpu-feature-discovery-image": "nvcr.io/nvidia/k8s-device-plugin@sha256:3c54348fe5a57e5700e7d8068e7531d2ef2d5f3ccb70c8f6bac0953432527abd",
        "dcgm-exporter-image": "nvcr.io/nvidia/k8s/dcgm-exporter@sha256:6bb786c41fa7b1a6238c023566fdeaeeea3ba842a8daec015a7bd85a8037b249",
        "dcgm-image": "nvcr.io/nvidia/cloud-native/dcgm@sha256:66c3d68ca2b35d47b5562300a10ff8711b953ba3a15df7dbc409d81613ebe5d0",
        "mig-manager-image": "nvcr.io/nvidia/cloud-native/k8s-mig-manager@sha256:3191cc0684e92d655e72fe9faf3da95fe6b8a6c2eb4ad396f75ba9b98c021aaf",
        "gpu-operator-validator-image": "ghcr.io/nvidia/gpu-operator/gpu-operator-validator:main-latest",
    },
    "26.7": {
        "driver-image": "nvcr.io/nvidia/driver@sha256:e243d778bd83de47668e7629d78f673317a130fedc99941be12aad7fc6bdfa85",
        "container-toolkit-image": "nvcr.io/nvidia/k8s/container-toolkit:v1.20.0@sha256:f8c647d581f7c8b178efdb7e6c94f5fb6eb12ebc05e2157fa314d327560fcb7a",
        "device-plugin-image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0@sha256:a61ba9fd8efb82f3a79f877f7580e02c1e8e7593f62473644bc9c79e315c3312",
        "gpu-feature-discovery-image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0@sha256:a61ba9fd8efb82f3a79f877f7580e02c1e8e7593f62473644bc9c79e315c3312",
        "dcgm-exporter-image": "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless"
                               "@sha256:613ab03c11d442fd960ff515f547e9921537454a712d08160bc8f677f89f1c35",
        "dcgm-image": "nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubi10@sha256:92080d86d04c265f7fc0b8e1cd95dff94d3ab57de6a6474c3c483e4c2ada5dea",
        "mig-manager-image": "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.15.0@sha256:cab2cf9deafc9602da69d0832a82958a7687f22f4a2f19674099dc9a5c4ea8e2",
        "gpu-operator-validator-image": "ghcr.io/nvidia/gpu-operator:main-latest",
    },
}

# ClusterPolicy spec key -> (gpu.deploy component, DaemonSet name, main container, relatedImages name), in the order
# the operator's state manager runs the states (controllers/state_manager.go addState calls).
GPU_STATES = (
    ("driver", "driver", "nvidia-driver-daemonset", "nvidia-driver-ctr", "driver-image"),
    ("toolkit", "container-toolkit", "nvidia-container-toolkit-daemonset", "nvidia-container-toolkit-ctr", "container-toolkit-image"),
    ("validator", "operator-validator", "nvidia-operator-validator", "nvidia-operator-validator", "gpu-operator-validator-image"),
    ("devicePlugin", "device-plugin", "nvidia-device-plugin-daemonset", "nvidia-device-plugin", "device-plugin-image"),
    ("dcgm", "dcgm", "nvidia-dcgm", "nvidia-dcgm-ctr", "dcgm-image"),
    ("dcgmExporter", "dcgm-exporter", "nvidia-dcgm-exporter", "nvidia-dcgm-exporter", "dcgm-exporter-image"),
    ("gfd", "gpu-feature-discovery", "gpu-feature-discovery", "gpu-feature-discovery", "gpu-feature-discovery-image"),
    ("migManager", "mig-manager", "nvidia-mig-manager", "nvidia-mig-manager", "mig-manager-image"),
    ("nodeStatusExporter", "node-status-exporter", "nvidia-node-status-exporter", "nvidia-node-status-exporter",
     "gpu-operator-validator-image"),
)


def string_hash(text):
    """network-operator pkg/state/state_ofed.go getStringHash: FNV-32a of the text, printed in decimal, each digit
    mapped through rand.SafeEncodeString's alphabet."""
    value = 0x811C9DC5
    for byte in text.encode("utf-8"):
        value ^= byte
        value = (value * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE[ord(ch) % len(_SAFE)] for ch in str(struct.unpack(">I", struct.pack(">I", value))[0]))


def image_path(section, default_image=""):
    """imagePath(repository, image, version) of the network operator's templates (pkg/render/funcs): repository/image
    then ':' + version, or '@' + version for a digest."""
    section = section or {}
    repo, image, version = section.get("repository"), section.get("image"), section.get("version")
    if not image:
        return default_image
    base = "%s/%s" % (repo, image) if repo else image
    if not version:
        return base
    return "%s%s%s" % (base, "@" if str(version).startswith("sha256:") else ":", version)


def _daemonset(name, namespace, labels, selector, container, image, node_selector=None, tolerations=None,
               affinity=None, strategy=None, pull_secrets=None, extra_containers=()):
    template_labels = dict(labels)
    template_labels.update(selector)
    spec = {"containers": [{"name": container, "image": image, "imagePullPolicy": "IfNotPresent"}] + list(extra_containers),
            "tolerations": list(tolerations or [])}
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if affinity:
        spec["affinity"] = affinity
    if pull_secrets:
        spec["imagePullSecrets"] = [{"name": s} for s in pull_secrets]
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
            "spec": {"selector": {"matchLabels": dict(selector)}, "updateStrategy": strategy or {"type": "RollingUpdate"},
                     "template": {"metadata": {"labels": template_labels}, "spec": spec}}}


def _deployment(name, namespace, labels, selector, container, image, tolerations=None, affinity=None, replicas=1):
    obj = _daemonset(name, namespace, labels, selector, container, image, tolerations=tolerations, affinity=affinity)
    obj["kind"] = "Deployment"
    spec = obj["spec"]
    spec.pop("updateStrategy")
    spec["replicas"] = replicas
    spec["strategy"] = {"type": "RollingUpdate"}
    return obj


# ---------------------------------------------------------------------------------------------- Network Operator
def node_pools(pnodes_with_labels):
    """(os, version, kernel, arch) of each node pool the driver state deploys one DaemonSet to (pkg/nodeinfo: nodes
    grouped by their NFD OS and kernel labels)."""
    pools = {}
    for node in pnodes_with_labels:
        labels = node["metadata"].get("labels") or {}
        key = (labels.get("feature.node.kubernetes.io/system-os_release.ID", "rhcos"),
               labels.get("feature.node.kubernetes.io/system-os_release.VERSION_ID", ""),
               labels.get("feature.node.kubernetes.io/kernel-version.full", ""),
               labels.get("kubernetes.io/arch", "amd64"))
        pools.setdefault(key, []).append(node["metadata"]["name"])
    return pools


def network_operands(policy, namespace, nic_nodes):
    """{state name: [workload manifests]} of a NicClusterPolicy (only the states its spec enables)."""
    spec = policy.get("spec") or {}
    owner = "nic-cluster-policy"
    tolerations = list(spec.get("tolerations") or []) + [GPU_TOLERATION]
    out = {}
    driver = spec.get("ofedDriver")
    if driver is not None:
        objs = []
        for (os_name, os_ver, kernel, arch), _names in sorted(node_pools(nic_nodes).items()):
            app = "mofed-%s%s-%s" % (os_name, os_ver, string_hash(kernel))
            image = "%s/%s:%s-%s%s-%s" % (driver.get("repository"), driver.get("image"), driver.get("version"), os_name, os_ver, arch)
            ds = _daemonset(app + "-ds", namespace,
                            {"app": app, "nvidia.com/ofed-driver": "", "mofed-ds-format-version": "1", "ds-owner": owner},
                            {"app": app}, "mofed-container", image,
                            node_selector={NIC_NODE_LABEL: "true",
                                           "feature.node.kubernetes.io/system-os_release.ID": os_name,
                                           "feature.node.kubernetes.io/system-os_release.VERSION_ID": os_ver,
                                           "feature.node.kubernetes.io/kernel-version.full": kernel},
                            tolerations=tolerations, strategy={"type": "OnDelete"}, pull_secrets=driver.get("imagePullSecrets"))
            ds["spec"]["template"]["metadata"]["labels"].update({"kernel": kernel, "nvidia.com/ofed-driver": ""})
            objs.append(ds)
        out["state-OFED"] = objs
    after_driver = {NIC_NODE_LABEL: "true", MOFED_WAIT: "false"}
    plugin = spec.get("rdmaSharedDevicePlugin")
    if plugin is not None:
        out["state-RDMA-device-plugin"] = [_daemonset(
            "rdma-shared-dp-ds", namespace, {"ds-owner": owner}, {"app": "rdma-shared-dp"}, "rdma-shared-dp",
            image_path(plugin), node_selector=after_driver, tolerations=tolerations, pull_secrets=plugin.get("imagePullSecrets"))]
    plugin = spec.get("sriovDevicePlugin")
    if plugin is not None:
        ds = _daemonset("network-operator-sriov-device-plugin", namespace, {"tier": "node", "app": "sriovdp", "ds-owner": owner},
                        {"name": "network-operator-sriov-device-plugin"}, "kube-sriovdp", image_path(plugin),
                        node_selector=after_driver, tolerations=tolerations, pull_secrets=plugin.get("imagePullSecrets"))
        ds["spec"]["template"]["metadata"]["labels"].update({"tier": "node", "app": "sriovdp"})
        out["state-SRIOV-device-plugin"] = [ds]
    ibk = spec.get("ibKubernetes")
    if ibk is not None:
        out["state-ib-kubernetes"] = [_deployment(
            "ib-kubernetes", namespace, {"ds-owner": owner}, {"name": "ib-kubernetes"}, "ib-kubernetes", image_path(ibk),
            tolerations=MASTER_TOLERATIONS + [GPU_TOLERATION], affinity=CONTROL_PLANE_AFFINITY)]
    secondary = spec.get("secondaryNetwork") or {}
    for key, state, name, app, container in (
            ("multus", "state-multus-cni", "kube-multus-ds", "multus", "kube-multus"),
            ("cniPlugins", "state-container-networking-plugins", "cni-plugins-ds", "cni-plugins", "cni-plugins"),
            ("ipoib", "state-ipoib-cni", "kube-ipoib-cni-ds", "ipoib-cni", "ipoib-cni")):
        section = secondary.get(key)
        if section is not None:
            out[state] = [_daemonset(name, namespace, {"app": app, "ds-owner": owner}, {"name": app}, container,
                                     image_path(section), tolerations=tolerations, pull_secrets=section.get("imagePullSecrets"))]
    ipam = spec.get("nvIpam")
    if ipam is not None:
        out["state-nv-ipam-cni"] = [
            _daemonset("nv-ipam-node", namespace, {"component": "nv-ipam-node", "app": "nv-ipam", "ds-owner": owner},
                       {"name": "nv-ipam-node"}, "nv-ipam-node", image_path(ipam), tolerations=tolerations),
            _deployment("nv-ipam-controller", namespace, {"component": "nv-ipam-controller", "app": "nv-ipam", "ds-owner": owner},
                        {"name": "nv-ipam-controller"}, "nv-ipam-controller", image_path(ipam),
                        tolerations=MASTER_TOLERATIONS + [GPU_TOLERATION], affinity=CONTROL_PLANE_AFFINITY)]
    return out


# ---------------------------------------------------------------------------------------------- GPU Operator
def rhcos_version(node):
    """The RHCOS build a node boots ("420.94.202510100000-0"), from its osImage; the GPU Operator suffixes the driver
    DaemonSet's name with it on OpenShift (controllers/object_controls.go, ocpDriverToolkit.currentRhcosVersion)."""
    image = ((node.get("status") or {}).get("nodeInfo") or {}).get("osImage") or ""
    for word in image.split():
        if word[:1].isdigit() and "." in word:
            return word
    return ""


def gpu_operands(policy, namespace, gpu_nodes, release, enabled):
    """{state name: [DaemonSet]} of a ClusterPolicy for the GPU Operator `release` ("25.3")."""
    spec = policy.get("spec") or {}
    images = GPU_OPERAND_IMAGES.get(release) or GPU_OPERAND_IMAGES["25.3"]
    tolerations = [GPU_TOLERATION]
    strategy = {"type": (spec.get("daemonsets") or {}).get("updateStrategy") or "RollingUpdate"}
    if strategy["type"] == "RollingUpdate":
        strategy["rollingUpdate"] = {"maxUnavailable": (spec.get("daemonsets") or {}).get("rollingUpdate", {}).get("maxUnavailable", "1")}
    out = {}
    for key, component, name, container, image_name in GPU_STATES:
        if not enabled(spec, key):
            continue
        section = spec.get(key) if isinstance(spec.get(key), dict) else {}
        image = images[image_name]
        if section.get("repository") and section.get("image"):
            image = image_path(section)
        selector = {"nvidia.com/gpu.deploy.%s" % component: "true"}
        labels = {"app": name}
        if key == "driver":
            objs = []
            versions = sorted({rhcos_version(n) for n in gpu_nodes} - {""}) or [""]
            for version in versions:
                ds_name = "%s-%s" % (name, version) if version else name
                # Upstream also selects nodes by feature.node.kubernetes.io/system-os_release.OSTREE_VERSION, a label
                # the simulated NFD does not publish; one RHCOS build per profile makes the selection the same.
                ds = _daemonset(ds_name, namespace, dict(labels, **{"app.kubernetes.io/component": "nvidia-driver"}),
                                {"app": name}, container, image, node_selector=selector, tolerations=tolerations,
                                strategy={"type": "OnDelete"})
                if version:
                    ds["metadata"]["labels"]["openshift.driver-toolkit.rhcos"] = version
                objs.append(ds)
            out["state-driver"] = objs
            continue
        out["state-%s" % component] = [_daemonset(
            name, namespace, labels, {"app": name}, container, image, node_selector=selector, tolerations=tolerations,
            strategy=strategy)]
    return out


# ---------------------------------------------------------------------------------------------- SR-IOV and NFD
SRIOV_IMAGE = "registry.redhat.io/openshift4/ose-sriov-network-%s-rhel9"


def sriov_operands(config, namespace, daemon_selector):
    spec = (config or {}).get("spec") or {}
    everything = [{"operator": "Exists"}]
    out = {"config-daemon": [_daemonset("sriov-network-config-daemon", namespace, {"app": "sriov-network-config-daemon"},
                                        {"app": "sriov-network-config-daemon"}, "sriov-network-config-daemon",
                                        SRIOV_IMAGE % "config-daemon", node_selector=daemon_selector, tolerations=everything)],
           "device-plugin": [_daemonset("sriov-device-plugin", namespace, {"app": "sriov-device-plugin"},
                                        {"app": "sriov-device-plugin"}, "sriov-device-plugin",
                                        SRIOV_IMAGE % "device-plugin", node_selector=daemon_selector, tolerations=everything)]}
    if spec.get("enableOperatorWebhook"):
        out["operator-webhook"] = [_daemonset("operator-webhook", namespace, {"app": "operator-webhook"}, {"app": "operator-webhook"},
                                              "webhook-server", SRIOV_IMAGE % "webhook", node_selector={"kubernetes.io/os": "linux"},
                                              tolerations=MASTER_TOLERATIONS, affinity=CONTROL_PLANE_AFFINITY)]
    if spec.get("enableInjector"):
        out["network-resources-injector"] = [_daemonset(
            "network-resources-injector", namespace, {"app": "network-resources-injector"}, {"app": "network-resources-injector"},
            "webhook-server", "registry.redhat.io/openshift4/ose-sriov-dp-admission-controller-rhel9",
            node_selector={"kubernetes.io/os": "linux"}, tolerations=MASTER_TOLERATIONS, affinity=CONTROL_PLANE_AFFINITY)]
    return out


def nfd_operands(cr, namespace):
    image = (((cr or {}).get("spec") or {}).get("operand") or {}).get("image") or \
        "registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9"
    return {"nfd-master": [_deployment("nfd-master", namespace, {"app": "nfd-master"}, {"app": "nfd-master"}, "nfd-master",
                                       image, tolerations=MASTER_TOLERATIONS, affinity=CONTROL_PLANE_AFFINITY)],
            "nfd-worker": [_daemonset("nfd-worker", namespace, {"app": "nfd-worker"}, {"app": "nfd-worker"}, "nfd-worker",
                                      image, tolerations=[{"operator": "Exists"}])]}


# ---------------------------------------------------------------------------------------------- apply and read
def ensure(rt, owner_obj, groups, label):
    """Create or update every workload of `groups` ({state: [manifest]}) with an ownerReference to the operator's custom
    resource and `label` set to its state (network-operator pkg/state/state_skel.go addStateSpecificLabels), and delete
    the owner's workloads that are no longer wanted (handleStaleStateObjects). Returns {state: [current objects]}."""
    meta = owner_obj["metadata"]
    ref = {"apiVersion": owner_obj.get("apiVersion", ""), "kind": owner_obj.get("kind", ""), "name": meta["name"],
           "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}
    wanted = set()
    result = {}
    for state, objs in groups.items():
        result[state] = []
        for obj in objs:
            plural = "daemonsets" if obj["kind"] == "DaemonSet" else "deployments"
            ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
            wanted.add((plural, ns, name))
            obj["metadata"]["ownerReferences"] = [ref]
            if label:
                obj["metadata"]["labels"][label] = state
            current = rt.get("apps", plural, ns, name)
            if current is None:
                current = rt.create("apps", plural, obj)
            elif current.get("spec") != obj["spec"] or (current["metadata"].get("labels") or {}) != obj["metadata"]["labels"]:
                def edit(stored, obj=obj):
                    stored["spec"] = obj["spec"]
                    stored["metadata"]["labels"] = obj["metadata"]["labels"]
                current = rt.mutate("apps", plural, ns, name, edit)
            if current is not None:
                result[state].append(current)
    for plural in ("daemonsets", "deployments"):
        for obj in rt.list("apps", plural):
            m = obj["metadata"]
            if (not label or label in (m.get("labels") or {})) and any(r.get("uid") == meta["uid"] for r in m.get("ownerReferences") or ()) \
                    and (plural, m["namespace"], m["name"]) not in wanted:
                rt.delete("apps", plural, m["namespace"], m["name"])
    return result


def state_ready(objs):
    """network-operator state_skel.go getSyncState: every object exists and each DaemonSet is ready
    (isDaemonSetReady); other kinds count as ready once they exist."""
    from .workloads import daemonset_ready

    return all(daemonset_ready(o) if o.get("kind") == "DaemonSet" else True for o in objs)


def pods_by_node(rt, obj):
    """{node: pod} of a workload's pods."""
    uid = obj["metadata"]["uid"]

    def view(pod):
        if not any(r.get("uid") == uid for r in pod["metadata"].get("ownerReferences") or ()):
            return None
        statuses = [{"name": c.get("name"), "ready": c.get("ready")} for c in (pod.get("status") or {}).get("containerStatuses") or ()]
        return (pod.get("spec") or {}).get("nodeName"), {"status": {"containerStatuses": statuses}}

    views = rt.store.scan(rt.require("", "pods"), view, obj["metadata"]["namespace"])
    return dict(v for v in views if v is not None)


def container_ready(pod, container):
    return any(c.get("name") == container and c.get("ready") for c in ((pod or {}).get("status") or {}).get("containerStatuses") or ())


def remove(rt, label, value):
    for plural in ("daemonsets", "deployments"):
        for obj in rt.list("apps", plural):
            if (obj["metadata"].get("labels") or {}).get(label) == value:
                rt.delete("apps", plural, obj["metadata"]["namespace"], obj["metadata"]["name"])


def start_seconds(rt, owner):
    """How long a new pod of `owner` takes from creation to ready, scaled (docs/simulator.md, time model): the image
    pull plus the container start, and for a driver DaemonSet its build and load."""
    labels = (owner.get("metadata") or {}).get("labels") or {}
    base = rt.cfg("operand_image_pull_seconds") + rt.cfg("operand_start_seconds")
    if "nvidia.com/ofed-driver" in labels:
        return base + rt.cfg("nic_policy_ready_seconds")
    if labels.get("app.kubernetes.io/component") == "nvidia-driver":
        return base + rt.cfg("gpu_policy_ready_seconds")
    return base
