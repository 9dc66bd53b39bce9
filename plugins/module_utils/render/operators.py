# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Operator instances common to all six configurations: NFD, SR-IOV operator config, the
NicClusterPolicy driver section and the GPU ClusterPolicy."""


from ansible_collections.gpudirect.openshift.plugins.module_utils import names
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import rdma
from ansible_collections.gpudirect.openshift.plugins.module_utils.render import releases

# PCI classes NFD must label: network (02: 0200 Ethernet, 0207 InfiniBand), display (03, GPUs)
# and processing accelerators (12). IB-mode ConnectX ports are 0207, missed by 0200-only lists.
NFD_PCI_CLASSES = ("02", "0200", "0207", "03", "12")


def node_feature_discovery(model):
    config_data = "\n".join([
        "core:",
        "  sleepInterval: 60s",
        "sources:",
        "  pci:",
        "    deviceClassWhitelist:",
    ] + ['      - "%s"' % cls for cls in NFD_PCI_CLASSES] + [
        "    deviceLabelFields:",
        '      - "vendor"',
    ]) + "\n"
    operand = {"servicePort": 12000}
    if model.get("nfd_operand_image"):
        operand["image"] = model["nfd_operand_image"]
    return {
        "apiVersion": names.API_NFD,
        "kind": "NodeFeatureDiscovery",
        "metadata": {"name": model["nfd_instance_name"], "namespace": model["nfd_namespace"]},
        "spec": {
            "instance": "",
            "operand": operand,
            "prunerOnDelete": False,
            "topologyUpdater": False,
            "workerConfig": {"configData": config_data},
        },
    }


def sriov_operator_config(model):
    selector = {
        "node-role.kubernetes.io/%s" % model["machineconfig_role"]: "",
        "feature.node.kubernetes.io/pci-15b3.sriov.capable": "true",
    }
    # Config daemons only on the nodes the policies select (their nodeSelector is the same node_selector), so that
    # every SriovNetworkNodeState is one the policies must reach: the SR-IOV wait can then require it of all of them.
    selector.update((key, names.label_text(value)) for key, value in model["node_selector"].items())
    if model["nic_driver"] == "doca":
        # The Network Operator sets this label to false once its driver container is loaded, so the
        # config daemon never reconfigures PFs while the driver reloads. No driver container, no label.
        selector["network.nvidia.com/operator.mofed.wait"] = "false"
    spec = {
        "enableInjector": True,
        "enableOperatorWebhook": True,
        "logLevel": 2,
        "configDaemonNodeSelector": selector,
    }
    if model["sriov_disable_plugins"]:
        spec["disablePlugins"] = list(model["sriov_disable_plugins"])
    return {
        "apiVersion": names.API_SRIOV,
        "kind": "SriovOperatorConfig",
        "metadata": {"name": names.SRIOV_OPERATOR_CONFIG_NAME, "namespace": model["sriov_operator_namespace"]},
        "spec": spec,
    }


def doca_driver_section(model):
    """NicClusterPolicy.spec.ofedDriver, or None with the inbox driver."""
    if model["nic_driver"] != "doca":
        return None
    return rdma.with_pull_secrets(model, {
        "image": model["doca_driver_image"],
        "repository": model["doca_driver_repository"],
        "version": model["doca_driver_version"],
        "forcePrecompiled": False,
        "terminationGracePeriodSeconds": 300,
        "startupProbe": {"initialDelaySeconds": 10, "periodSeconds": 20},
        "livenessProbe": {"initialDelaySeconds": 30, "periodSeconds": 30},
        "readinessProbe": {"initialDelaySeconds": 10, "periodSeconds": 30},
        "upgradePolicy": {
            "autoUpgrade": True,
            "maxParallelUpgrades": model.get("driver_upgrade_max_parallel") or 1,
            "safeLoad": False,
            "drain": {"enable": True, "force": True, "podSelector": "", "timeoutSeconds": 300, "deleteEmptyDir": True},
            "waitForCompletion": {"timeoutSeconds": 0},
        },
        "env": [
            # Storage RDMA modules pin mlx5_core; unload them so the driver container can swap drivers.
            {"name": "UNLOAD_STORAGE_MODULES", "value": "true"},
            {"name": "RESTORE_DRIVER_ON_POD_TERMINATION", "value": "true"},
            {"name": "CREATE_IFNAMES_UDEV", "value": "true"},
        ],
    })


def nic_cluster_policy(model):
    """The singleton NicClusterPolicy: driver + the method's device plugin + secondary networks.

    None when nothing is left for the Network Operator (SR-IOV legacy with the inbox driver).
    """
    spec = {}
    driver = doca_driver_section(model)
    if driver:
        spec["ofedDriver"] = driver
    key, plugin = rdma.device_plugin_section(model)
    if key:
        spec[key] = plugin
    secondary = rdma.secondary_network_section(model)
    if secondary:
        spec["secondaryNetwork"] = secondary
    if not spec:
        return None
    return {
        "apiVersion": names.API_MELLANOX,
        "kind": "NicClusterPolicy",
        "metadata": {"name": names.NIC_CLUSTER_POLICY_NAME},
        "spec": spec,
    }


# gpu-operator v25.3.0 added driver.kernelModuleType (auto/open/proprietary); older ClusterPolicy CRDs have only
# the boolean driver.useOpenKernelModules (NVIDIA/gpu-operator, api/nvidia/v1/clusterpolicy_types.go at v24.9.2).
KERNEL_MODULE_TYPE_SINCE = (25, 3)
# gpu-operator v26.7 ClusterPolicy CRD: operator.defaultRuntime deprecated ("no longer used") and no longer required.
DEFAULT_RUNTIME_UNUSED_SINCE = (26, 7)


def kernel_module_fields(model):
    """The driver fields that choose the kernel modules, as the GPU Operator version in use knows them.

    Before v25.3 only open or proprietary exists: dmabuf needs the open modules, so ``auto`` means open with dmabuf
    and the operator's default (proprietary) with peermem."""
    version = releases.minor_of(model.get("gpu_operator_version"))
    kind = model["gpu_kernel_module_type"]
    if version is None or version >= KERNEL_MODULE_TYPE_SINCE:
        return {"kernelModuleType": kind}
    return {"useOpenKernelModules": kind == "open" or (kind == "auto" and model["gpu_rdma_mode"] == "dmabuf")}


def gpu_cluster_policy(model):
    """GPU ClusterPolicy with every section the CRD requires and the GPUDirect RDMA choices.

    dmabuf: GPUDirect through DMA-BUF with the open kernel modules, no nvidia-peermem
    (driver.rdma.enabled false). peermem: the driver pod loads nvidia-peermem and waits for the
    NIC driver (driver.rdma.enabled true).
    """
    peermem = model["gpu_rdma_mode"] == "peermem"
    driver = {
        "enabled": True,
        "rdma": {"enabled": peermem, "useHostMofed": bool(model["gpu_use_host_mofed"])},
        "upgradePolicy": {
            "autoUpgrade": True,
            "maxParallelUpgrades": 1,
            "maxUnavailable": "25%",
            "drain": {"enable": False, "force": False, "deleteEmptyDir": False, "timeoutSeconds": 300},
            "podDeletion": {"force": False, "deleteEmptyDir": False, "timeoutSeconds": 300},
            "waitForCompletion": {"timeoutSeconds": 0},
        },
    }
    driver.update(kernel_module_fields(model))
    if model.get("driver_upgrade_max_parallel"):
        driver["upgradePolicy"].update({"maxParallelUpgrades": model["driver_upgrade_max_parallel"],
                                        "maxUnavailable": model["driver_upgrade_max_parallel"]})
    for field, key in (("gpu_driver_repository", "repository"), ("gpu_driver_image", "image"),
                       ("gpu_driver_version", "version")):
        if model.get(field):
            driver[key] = model[field]
    operator = {"runtimeClass": "nvidia", "use_ocp_driver_toolkit": True, "initContainer": {}}
    version = releases.minor_of(model.get("gpu_operator_version"))
    if version is None or version < DEFAULT_RUNTIME_UNUSED_SINCE:
        # Required (default docker) in the ClusterPolicy CRD up to v25.x; v26.7 detects the runtime and marks it unused.
        operator["defaultRuntime"] = "crio"
    return {
        "apiVersion": names.API_NVIDIA,
        "kind": "ClusterPolicy",
        "metadata": {"name": model["gpu_cluster_policy_name"]},
        "spec": {
            "operator": operator,
            "daemonsets": {"updateStrategy": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "1"}},
            "driver": driver,
            "toolkit": {"enabled": True, "installDir": "/usr/local/nvidia"},
            "devicePlugin": {"enabled": True},
            "dcgm": {"enabled": True},
            "dcgmExporter": {"enabled": True, "serviceMonitor": {"enabled": True}},
            "gfd": {"enabled": True},
            "nodeStatusExporter": {"enabled": True},
            "migManager": {"enabled": True},
            "mig": {"strategy": "single"},
            "gdrcopy": {"enabled": bool(model["gpu_gdrcopy"])},
            "validator": {"plugin": {"env": [{"name": "WITH_WORKLOAD", "value": "false"}]}},
        },
    }
