"""Resource types the controllers add, and serving/unserving of operator-owned CRD groups.

The API server derives `customresourcedefinitions` from the served flag of each type, so turning a
group's types on and off is all it takes for `oc get crd ...` and discovery to follow.
"""

from ..store import ResourceType
from ._base import log

PACKAGEMANIFEST = ("packages.operators.coreos.com", "packagemanifests")

# The package server caches one PackageManifest per (CatalogSource, namespace, package): a package two catalogs hold is
# listed twice under one name, and a GET by name answers the first of the namespace's list that has that name
# (operator-lifecycle-manager v0.46.0, pkg/package-server/provider/registry.go: PackageManifestKeyFunc, Get, List).
PACKAGEMANIFEST_TYPE = ResourceType(
    group=PACKAGEMANIFEST[0], version="v1", kind="PackageManifest", plural=PACKAGEMANIFEST[1], namespaced=True,
    singular="packagemanifest", verbs=("get", "list", "watch"), categories=("olm", "packages"),
    instance_field=("status", "catalogSource"),
)


def register_types(rt):
    if rt.rtype(*PACKAGEMANIFEST) is None:
        rt.store.register(PACKAGEMANIFEST_TYPE)


class CrdServing:
    """Turns the CRDs of an operator package on (CSV succeeded) and off (simulator start)."""

    def __init__(self, rt):
        self.rt = rt

    def set_groups(self, groups, served):
        done = set()
        for t in self.rt.store.resource_types():
            key = (t.group, t.plural)
            if t.group in groups and key not in done and t.served != served:
                done.add(key)
                self.rt.store.set_served(t.group, t.plural, served)
                log.debug("%s.%s served=%s", t.plural, t.group, served)
