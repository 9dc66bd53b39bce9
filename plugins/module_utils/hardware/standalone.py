# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The collector as one self-contained script (the layout of collector.py --write-standalone), built from the loaded
modules' sources: inside a module run those files sit in AnsiballZ's zip archive, not next to collector.py.
cluster/node_facts.py ships the script to the facts pods in a ConfigMap.
"""


# Imported (not only read) so that Ansible ships them with the module: their sources become the pod's script.
from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import (
    collector,
    devices,
    nvidia_smi,
    readiness,
    sysfs,
    topology,
)

SCRIPT_MODULES = (("devices", devices), ("sysfs", sysfs), ("nvidia_smi", nvidia_smi), ("topology", topology),
                  ("readiness", readiness), ("collector", collector))


def _module_source(module):
    """Source text of a hardware module, also when it is loaded from AnsiballZ's zip (no plain file)."""
    loader = getattr(module, "__loader__", None)
    source = loader.get_source(module.__name__) if loader is not None and hasattr(loader, "get_source") else None
    if source is None:
        with open(module.__file__) as handle:
            source = handle.read()
    return source


def standalone_script():
    """One self-contained collector script (the layout of collector.py --write-standalone).

    Built from the loaded modules' sources rather than from files next to collector.py, because
    inside a module run those files sit in a zip archive."""
    sources = {name: _module_source(module) for name, module in SCRIPT_MODULES}
    return collector.standalone_from_sources(sources, "gpudirect.openshift (node hardware facts)")
