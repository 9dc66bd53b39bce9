"""Operator catalog of the simulated cluster: the packages OLM can install and what each one brings.

One entry per package drives everything the generic OLM controller does (controllers/olm.py):
PackageManifest content, channel heads, install modes, the CRD groups that stay unserved until
the package's CSV succeeds, the operator Deployment and its pod, and the CSV's alm-examples.
Versions are those of an OpenShift 4.20 catalog.
"""

import copy
import json
import re

ALL_MODES = ("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces")

CATALOG_SOURCES = {
    "redhat-operators": {
        "displayName": "Red Hat Operators",
        "publisher": "Red Hat",
        "image": "registry.redhat.io/redhat/redhat-operator-index:v{minor}",
        "priority": -100,
    },
    "certified-operators": {
        "displayName": "Certified Operators",
        "publisher": "Red Hat",
        "image": "registry.redhat.io/redhat/certified-operator-index:v{minor}",
        "priority": -200,
    },
    # The other two default catalogs (openshift/operator-marketplace, defaults/): none of the four operators is in them.
    "redhat-marketplace": {
        "displayName": "Red Hat Marketplace",
        "publisher": "Red Hat",
        "image": "registry.redhat.io/redhat/redhat-marketplace-index:v{minor}",
        "priority": -300,
    },
    "community-operators": {
        "displayName": "Community Operators",
        "publisher": "Red Hat",
        "image": "registry.redhat.io/redhat/community-operator-index:v{minor}",
        "priority": -400,
    },
}

_NFD_OPERAND = "registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9@sha256:" + "3f1c" * 16
_NFD_EXAMPLE = {
    "apiVersion": "nfd.openshift.io/v1",
    "kind": "NodeFeatureDiscovery",
    "metadata": {"name": "nfd-instance", "namespace": "openshift-nfd"},
    "spec": {
        "instance": "",
        "operand": {"image": _NFD_OPERAND, "imagePullPolicy": "IfNotPresent", "servicePort": 12000},
        "prunerOnDelete": False,
        "topologyUpdater": False,
        "workerConfig": {"configData": "core:\n  sleepInterval: 60s\nsources:\n  pci:\n    deviceClassWhitelist:\n"
                                       "      - \"0200\"\n      - \"03\"\n      - \"12\"\n    deviceLabelFields:\n"
                                       "      - \"vendor\"\n"},
    },
}
_SRIOV_EXAMPLE = {
    "apiVersion": "sriovnetwork.openshift.io/v1",
    "kind": "SriovOperatorConfig",
    "metadata": {"name": "default", "namespace": "openshift-sriov-network-operator"},
    "spec": {"enableInjector": True, "enableOperatorWebhook": True, "logLevel": 2, "disableDrain": False},
}
_NCP_EXAMPLE = {
    "apiVersion": "mellanox.com/v1alpha1",
    "kind": "NicClusterPolicy",
    "metadata": {"name": "nic-cluster-policy"},
    "spec": {
        "ofedDriver": {"image": "doca-driver", "repository": "nvcr.io/nvidia/mellanox", "version": "25.04-0.6.1.0-2",
                       "upgradePolicy": {"autoUpgrade": True, "maxParallelUpgrades": 1}},
        "rdmaSharedDevicePlugin": {"image": "k8s-rdma-shared-dev-plugin", "repository": "nvcr.io/nvidia/mellanox",
                                   "version": "network-operator-v25.4.0",
                                   "config": json.dumps({"configList": [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63,
                                                                         "selectors": {"vendors": ["15b3"]}}]})},
    },
}
_CLUSTER_POLICY_EXAMPLE = {
    "apiVersion": "nvidia.com/v1",
    "kind": "ClusterPolicy",
    "metadata": {"name": "gpu-cluster-policy"},
    "spec": {
        "operator": {"defaultRuntime": "crio", "use_ocp_driver_toolkit": True, "initContainer": {}},
        "sandboxWorkloads": {"enabled": False, "defaultWorkload": "container"},
        "driver": {"enabled": True, "useNvidiaDriverCRD": False, "kernelModuleType": "auto",
                   "upgradePolicy": {"autoUpgrade": True, "maxParallelUpgrades": 1, "maxUnavailable": "25%"},
                   "repoConfig": {"configMapName": ""}, "certConfig": {"name": ""},
                   "licensingConfig": {"nlsEnabled": True, "configMapName": ""}, "virtualTopology": {"config": ""},
                   "kernelModuleConfig": {"name": ""}},
        "dcgmExporter": {"enabled": True, "config": {"name": ""}, "serviceMonitor": {"enabled": True}},
        "dcgm": {"enabled": True},
        "daemonsets": {"updateStrategy": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "1"}},
        "devicePlugin": {"enabled": True, "config": {"name": "", "default": ""}, "mps": {"root": "/run/nvidia/mps"}},
        "gfd": {"enabled": True},
        "migManager": {"enabled": True},
        "nodeStatusExporter": {"enabled": True},
        "mig": {"strategy": "single"},
        "toolkit": {"enabled": True},
        "validator": {"plugin": {"env": [{"name": "WITH_WORKLOAD", "value": "false"}]}},
        "vgpuManager": {"enabled": False},
        "vgpuDeviceManager": {"enabled": True},
        "sandboxDevicePlugin": {"enabled": True},
        "vfioManager": {"enabled": True},
        "gds": {"enabled": False},
        "gdrcopy": {"enabled": False},
    },
}


def _modes(*supported):
    return {m: (m in supported) for m in ALL_MODES}


# channels: name -> list of CSV names, oldest first; the last one is the channel head (currentCSV).
PACKAGES = {
    "nfd": {
        "catalogs": ["redhat-operators"],
        "displayName": "Node Feature Discovery Operator",
        "provider": "Red Hat",
        "defaultChannel": "stable",
        "channels": {"stable": ["nfd.4.20.0-202510140902", "nfd.4.20.0-202511041207"]},
        "installModes": _modes("OwnNamespace", "SingleNamespace"),
        "suggestedNamespace": "openshift-nfd",
        "ownedGroups": ["nfd.openshift.io", "nfd.k8s-sigs.io"],
        "ownedCRDs": [("nfd.openshift.io", "v1", "NodeFeatureDiscovery", "nodefeaturediscoveries"),
                      ("nfd.openshift.io", "v1alpha1", "NodeFeatureRule", "nodefeaturerules"),
                      ("nfd.k8s-sigs.io", "v1alpha1", "NodeFeatureRule", "nodefeaturerules")],
        "deployment": "nfd-controller-manager",
        "containers": ["kube-rbac-proxy", "manager"],
        "almExamples": [_NFD_EXAMPLE],
    },
    "sriov-network-operator": {
        "catalogs": ["redhat-operators"],
        "displayName": "SR-IOV Network Operator",
        "provider": "Red Hat",
        "defaultChannel": "stable",
        "channels": {"stable": ["sriov-network-operator.v4.20.0-202510140902", "sriov-network-operator.v4.20.0-202511041207"]},
        "installModes": _modes("OwnNamespace", "SingleNamespace"),
        "suggestedNamespace": "openshift-sriov-network-operator",
        "ownedGroups": ["sriovnetwork.openshift.io"],
        "ownedCRDs": [("sriovnetwork.openshift.io", "v1", "SriovOperatorConfig", "sriovoperatorconfigs"),
                      ("sriovnetwork.openshift.io", "v1", "SriovNetworkNodePolicy", "sriovnetworknodepolicies"),
                      ("sriovnetwork.openshift.io", "v1", "SriovNetworkNodeState", "sriovnetworknodestates"),
                      ("sriovnetwork.openshift.io", "v1", "SriovNetwork", "sriovnetworks"),
                      ("sriovnetwork.openshift.io", "v1", "SriovIBNetwork", "sriovibnetworks"),
                      ("sriovnetwork.openshift.io", "v1", "SriovNetworkPoolConfig", "sriovnetworkpoolconfigs")],
        "deployment": "sriov-network-operator",
        "containers": ["sriov-network-operator"],
        "almExamples": [_SRIOV_EXAMPLE],
    },
    "nvidia-network-operator": {
        "catalogs": ["certified-operators"],
        "displayName": "NVIDIA Network Operator",
        "provider": "NVIDIA",
        "defaultChannel": "stable",
        "channels": {
            "v25.1": ["nvidia-network-operator.v25.1.0"],
            "v25.4": ["nvidia-network-operator.v25.4.0"],
            "v26.4": ["nvidia-network-operator.v26.4.1"],
            "stable": ["nvidia-network-operator.v25.1.0", "nvidia-network-operator.v25.4.0", "nvidia-network-operator.v26.4.1"],
        },
        "installModes": _modes("OwnNamespace", "SingleNamespace"),
        "suggestedNamespace": "nvidia-network-operator",
        "ownedGroups": ["mellanox.com"],
        "crdSource": "network-operator",
        "ownedCRDs": [("mellanox.com", "v1alpha1", "NicClusterPolicy", "nicclusterpolicies"),
                      ("mellanox.com", "v1alpha1", "MacvlanNetwork", "macvlannetworks"),
                      ("mellanox.com", "v1alpha1", "HostDeviceNetwork", "hostdevicenetworks"),
                      ("mellanox.com", "v1alpha1", "IPoIBNetwork", "ipoibnetworks"),
                      ("mellanox.com", "v1alpha1", "NicNodePolicy", "nicnodepolicies")],
        "deployment": "nvidia-network-operator-controller-manager",
        "containers": ["manager"],
        "almExamples": [_NCP_EXAMPLE],
    },
    "gpu-operator-certified": {
        "catalogs": ["certified-operators"],
        "displayName": "NVIDIA GPU Operator",
        "provider": "NVIDIA Corporation",
        "defaultChannel": "v26.7",
        "channels": {
            "v24.9": ["gpu-operator-certified.v24.9.0", "gpu-operator-certified.v24.9.2"],
            "v25.3": ["gpu-operator-certified.v25.3.0", "gpu-operator-certified.v25.3.1", "gpu-operator-certified.v25.3.4"],
            "v26.7": ["gpu-operator-certified.v26.7.0"],
            "stable": ["gpu-operator-certified.v24.9.0", "gpu-operator-certified.v24.9.2", "gpu-operator-certified.v25.3.0",
                       "gpu-operator-certified.v25.3.1", "gpu-operator-certified.v25.3.4", "gpu-operator-certified.v26.7.0"],
        },
        "installModes": _modes("OwnNamespace", "SingleNamespace"),
        "suggestedNamespace": "nvidia-gpu-operator",
        "ownedGroups": ["nvidia.com"],
        "crdSource": "gpu-operator",
        "ownedCRDs": [("nvidia.com", "v1", "ClusterPolicy", "clusterpolicies"),
                      ("nvidia.com", "v1alpha1", "NVIDIADriver", "nvidiadrivers")],
        "deployment": "gpu-operator",
        "containers": ["gpu-operator"],
        "almExamples": [_CLUSTER_POLICY_EXAMPLE],
    },
}


# What each bundle declares beyond its place in a channel (BUNDLE_FIELDS), from the operators' published bundles
# (SOURCES.md beside data/): spec.minKubeVersion and spec.relatedImages of the CSV, and the
# com.redhat.openshift.versions label of bundle metadata/annotations.yaml, which decides into which OpenShift
# version's index image Red Hat's pipeline puts the bundle ("v4.12" = 4.12 and later, "v4.12-v4.17" = a range,
# "=v4.12" = only 4.12). A bundle absent here declares none of them.
# Each bundle's default-channel annotation (operators.operatorframework.io.bundle.channel.default.v1) is kept too: the
# package's default channel in an index is the one its newest bundle names.
# Read from each tag's bundle/metadata/annotations.yaml (NVIDIA/gpu-operator, Mellanox/network-operator).
BUNDLE_FIELDS = ("minKubeVersion", "relatedImages", "openshiftVersions", "defaultChannel")
BUNDLES = {
    "gpu-operator-certified.v24.9.0": {"openshiftVersions": "v4.12-v4.17", "defaultChannel": "v24.9"},
    "gpu-operator-certified.v24.9.2": {"openshiftVersions": "v4.12-v4.17", "defaultChannel": "v24.9"},
    "gpu-operator-certified.v25.3.0": {"openshiftVersions": "v4.12-v4.18", "defaultChannel": "v24.9"},
    "gpu-operator-certified.v25.3.1": {"openshiftVersions": "v4.12-v4.18", "defaultChannel": "v25.3"},
    "gpu-operator-certified.v25.3.4": {"openshiftVersions": "v4.14-v4.19", "defaultChannel": "v25.3"},
    "gpu-operator-certified.v26.7.0": {"openshiftVersions": "v4.18-v4.22", "defaultChannel": "v26.7"},
    "nvidia-network-operator.v25.1.0": {"openshiftVersions": "v4.14-v4.17", "defaultChannel": "v25.1"},
    "nvidia-network-operator.v25.4.0": {"openshiftVersions": "v4.14-v4.18", "defaultChannel": "v25.4"},
    "nvidia-network-operator.v26.4.1": {"openshiftVersions": "v4.17-v4.20", "defaultChannel": "stable"},
}


def openshift_versions_include(spec, minor):
    """Whether a com.redhat.openshift.versions value admits OpenShift ``minor`` ("4.16")."""
    if not spec:
        return True
    wanted = tuple(int(x) for x in minor.split("."))

    def parse(text):
        return tuple(int(x) for x in text.strip().lstrip("=").lstrip("v").split("."))

    spec = spec.strip()
    if "," in spec:
        return any(parse(part) == wanted for part in spec.split(","))
    if spec.startswith("="):
        return parse(spec) == wanted
    if "-" in spec:
        low, high = spec.split("-", 1)
        return parse(low) <= wanted <= parse(high)
    return parse(spec) <= wanted


def csv_version(csv_name):
    """'nfd.4.20.0-202510140902' -> '4.20.0-202510140902'; 'gpu-operator-certified.v25.3.1' -> '25.3.1'."""
    version = csv_name.split(".", 1)[1]
    return version[1:] if version.startswith("v") else version


def version_key(version):
    """'25.3.1' -> (25, 3, 1); '4.20.0-202510140902' -> (4, 20, 0, 202510140902)."""
    return tuple(int(p) for p in re.findall(r"\d+", version))


def extra_package(name, fields):
    """A PACKAGES-shaped entry from the few fields a test gives: catalogs and channels at least."""
    pkg = {"catalogs": ["redhat-operators"], "displayName": name, "provider": "", "installModes": _modes("OwnNamespace", "SingleNamespace"),
           "suggestedNamespace": name, "ownedGroups": [], "ownedCRDs": [], "deployment": name + "-controller-manager",
           "containers": ["manager"], "almExamples": []}
    pkg.update(copy.deepcopy(fields))
    if "channels" not in pkg or not pkg["channels"]:
        raise ValueError("catalog_extra_packages: package %s needs channels" % name)
    pkg.setdefault("defaultChannel", sorted(pkg["channels"])[0])
    return pkg


class Catalog:
    """The catalog one simulated cluster serves: PACKAGES minus removed ones, with per-source health."""

    def __init__(self, remove_packages=(), source_states=None, openshift_minor=None, mirror=None, disable_default_sources=False,
                 package_sources=None, extra_packages=None):
        self.packages = {k: copy.deepcopy(v) for k, v in PACKAGES.items() if k not in set(remove_packages)}
        # A test harness, not platform behaviour: any further package a catalog index might hold (same fields as
        # PACKAGES; OLM resolves and installs it like the others).
        for name, pkg in (extra_packages or {}).items():
            self.packages[name] = extra_package(name, pkg)
        self.bundles = copy.deepcopy(BUNDLES)
        # The default CatalogSources the marketplace operator creates (none with disableAllDefaultSources), and a
        # mirrored index (oc-mirror's CatalogSource) that holds every package instead; a user creates that one.
        self.seeded_sources = () if disable_default_sources else tuple(CATALOG_SOURCES)
        self.mirror = mirror
        if openshift_minor:
            # The index image of an OpenShift version holds only the bundles whose versions label admits it; a
            # package with none is not in that index at all.
            for name, pkg in list(self.packages.items()):
                for channel, entries in list(pkg["channels"].items()):
                    entries[:] = [e for e in entries if openshift_versions_include(
                        self.bundle(e).get("openshiftVersions"), openshift_minor)]
                    if not entries:
                        del pkg["channels"][channel]
                if not pkg["channels"]:
                    del self.packages[name]
                    continue
                newest = max((e for entries in pkg["channels"].values() for e in entries), key=lambda csv_name: version_key(csv_version(csv_name)))
                if self.bundle(newest).get("defaultChannel") in pkg["channels"]:
                    pkg["defaultChannel"] = self.bundle(newest)["defaultChannel"]
        self.sources = copy.deepcopy(CATALOG_SOURCES)
        if mirror:
            self.sources[mirror] = {"displayName": "Mirrored catalog", "publisher": "", "image": "", "priority": 0}
            for pkg in self.packages.values():
                pkg["catalogs"] = [mirror]
        # package -> the CatalogSources (in openshift-marketplace) that hold it, in place of its own catalog: a package
        # both a default catalog and a mirror or custom index carry is served by each (config catalog_package_sources).
        for name, sources in (package_sources or {}).items():
            if name not in PACKAGES:
                raise ValueError("catalog_package_sources: no package %s (known: %s)" % (name, ", ".join(sorted(PACKAGES))))
            pkg = self.packages.get(name)
            if pkg is None:  # removed, or not in this OpenShift version's index
                continue
            pkg["catalogs"] = [sources] if isinstance(sources, str) else list(sources)
            for source in pkg["catalogs"]:
                self.sources.setdefault(source, {"displayName": "", "publisher": "", "image": "", "priority": 0})
        self.source_states = {name: "READY" for name in self.sources}
        self.source_states.update(source_states or {})

    def package(self, name):
        return self.packages.get(name)

    def packages_in(self, source):
        return {k: v for k, v in self.packages.items() if source in v["catalogs"]}

    def bundle(self, csv_name):
        """The bundle metadata of a CSV (BUNDLE_FIELDS); {} when it declares none."""
        return self.bundles.get(csv_name) or {}

    def publish(self, package, channel, csv_name, bundle=None):
        """A new bundle becomes the head of ``channel`` (created when new), as a catalog image update brings it.

        Real catalogs are polled (CatalogSource spec.updateStrategy.registryPoll) and OLM re-resolves every
        namespace afterwards; the caller (SimulatedCluster.update_catalog) does both.
        """
        pkg = self._known(package)
        if self.package_of_csv(csv_name) not in (None, package):
            raise ValueError("CSV %s belongs to another package" % csv_name)
        unknown = sorted(set(bundle or {}) - set(BUNDLE_FIELDS))
        if unknown:
            raise ValueError("unknown bundle field(s) %s (known: %s)" % (", ".join(unknown), ", ".join(BUNDLE_FIELDS)))
        if bundle:
            self.bundles[csv_name] = dict(bundle)
        entries = pkg["channels"].setdefault(channel, [])
        if csv_name in entries:
            entries.remove(csv_name)
        entries.append(csv_name)

    def set_default_channel(self, package, channel):
        """The package's default channel moves (gpu-operator's did at each major release)."""
        pkg = self._known(package)
        if channel not in pkg["channels"]:
            raise ValueError("package %s has no channel %s (channels: %s)" % (package, channel, ", ".join(sorted(pkg["channels"]))))
        pkg["defaultChannel"] = channel

    def _known(self, package):
        pkg = self.packages.get(package)
        if pkg is None:
            raise ValueError("no package %s in the catalog" % package)
        return pkg

    def package_of_csv(self, csv_name):
        for name, pkg in self.packages.items():
            for entries in pkg["channels"].values():
                if csv_name in entries:
                    return name
        return None

    def owned_groups(self):
        return {g for pkg in self.packages.values() for g in pkg["ownedGroups"]} | {
            g for pkg in PACKAGES.values() for g in pkg["ownedGroups"]}
