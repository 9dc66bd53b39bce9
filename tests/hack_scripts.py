"""The scripts of hack/ as Python modules, for tests that call their functions.

hack/ is not a package (its scripts run as ``python hack/<name>.py``), so a test loads a script from its path; every
test does it through ``load_hack_script`` here, not with a copy of the loader. Import:
``from ansible_collections.gpudirect.openshift.tests.hack_scripts import load_hack_script``.
"""

import importlib.util
import os

HACK_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hack")


def load_hack_script(name):
    """A fresh module object of hack/<name>.py, its top level run once (a test that changes its attributes changes
    no other test's copy). It is not put in sys.modules, as running the script does not put it there either."""
    path = os.path.join(HACK_DIR, name + ".py")
    if not os.path.isfile(path):
        raise FileNotFoundError("no script %s" % path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
