"""Simulated operators of the simulated OpenShift cluster.

`install_controllers(sim)` is called by SimulatedCluster.start() once the server loop runs. It registers
the extra resource types (PackageManifest), unserves the CRD groups that belong to operator packages
(they appear when the package's CSV succeeds), seeds what a fresh cluster has (ClusterVersion, Nodes
from the hardware profile, MachineConfigPools, CatalogSources, PackageManifests) and subscribes the
controllers to store events. Controllers only schedule work from the store callback; the work runs on
the server loop after short delays (sim.config keys, DEFAULT_CONFIG), so every state transition can be
observed by a client.
"""

from ..catalog import Catalog
from ._base import DEFAULT_CONFIG, Runtime, config_value
from .facts_pods import FactsPodController
from .finalizers import finalizer_controllers
from .gpu_operator import GpuOperatorController
from .mco import MachineConfigController
from .network_operator import NetworkOperatorController
from .networks import NetworkController
from .nfd import NfdController
from .olm import OlmController
from .nccl_pods import NcclPodController
from .perftest_pods import PerftestPodController
from .seed import seed_cluster, sync_package_manifests
from .sriov import SriovController
from .types import CrdServing, register_types
from .workloads import WorkloadController

__all__ = ["install_controllers", "Controllers", "DEFAULT_CONFIG"]


class Controllers:
    """Handle returned to the cluster: the runtime plus each controller, for tests and debugging."""

    def __init__(self, runtime, olm, operators):
        self.runtime = runtime
        self.catalog = runtime.catalog
        self.olm = olm
        self.operators = operators

    def resync_operators(self):
        """Every simulated operator reconciles once (after its faults changed)."""
        self.olm.resync()
        for op in self.operators:
            if hasattr(op, "resync"):
                op.resync()

    def update_catalog(self, publish=(), default_channels=None):
        """A catalog update as a polled CatalogSource brings it (spec.updateStrategy.registryPoll): bundles published
        at channel heads ({"package", "channel", "csv"}) and default channels moved ({package: channel}); the
        package server shows the new content and OLM re-resolves every namespace. Runs on the server loop."""
        for entry in publish or ():
            self.catalog.publish(entry["package"], entry["channel"], entry["csv"], entry.get("bundle"))
        for package, channel in (default_channels or {}).items():
            self.catalog.set_default_channel(package, channel)
        sync_package_manifests(self.runtime)
        self.olm.resync()

    def dispatch(self, etype, rtype, obj):
        self.olm.on_event(etype, rtype, obj)
        for op in self.operators:
            op.on_event(etype, rtype, obj)


def install_controllers(sim):
    config = getattr(sim, "config", None)
    if isinstance(config, dict):
        for key, value in DEFAULT_CONFIG.items():
            config.setdefault(key, value)
    profile = sim.profile
    if profile is None:
        from ..profiles import load_profile

        profile = sim.profile = load_profile("roce-lab")
    remove = list(profile.remove_packages) + list(config_value(sim, "catalog_remove_packages") or [])
    states = dict(profile.source_states)
    states.update(config_value(sim, "catalog_source_states") or {})
    runtime = Runtime(sim, Catalog(remove_packages=remove, source_states=states, openshift_minor=profile.cluster.minor,
                                   mirror=config_value(sim, "catalog_mirror") or None,
                                   disable_default_sources=bool(config_value(sim, "catalog_disable_default_sources")),
                                   package_sources=config_value(sim, "catalog_package_sources") or None,
                                   extra_packages=config_value(sim, "catalog_extra_packages") or None))
    register_types(runtime)
    crds = CrdServing(runtime)
    crds.set_groups(runtime.catalog.owned_groups(), False)
    seed_cluster(runtime)
    olm = OlmController(runtime, crds)
    workloads = runtime.workloads = WorkloadController(runtime)
    operators = [workloads, NfdController(runtime), SriovController(runtime), NetworkOperatorController(runtime),
                 GpuOperatorController(runtime), NetworkController(runtime), MachineConfigController(runtime)]
    operators.extend([FactsPodController(runtime), PerftestPodController(runtime), NcclPodController(runtime)])
    operators.extend(finalizer_controllers(runtime))
    handle = Controllers(runtime, olm, operators)
    sim.store.subscribe(handle.dispatch)
    sim.faults.operator_faults_listeners.append(handle.resync_operators)
    return handle
