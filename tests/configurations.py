# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The six configurations as every test names them, read from the example files' names (one definition for all tests).

playbooks/vars/examples/<number>-<method>-<fabric>.yml holds configuration <number> (method with '-' for '_');
adding a configuration is adding its example file. Example files without a number (a second fabric) are variants,
listed in EXAMPLE_FILES only. Import: ``from ansible_collections.gpudirect.openshift.tests.configurations import ...``.
"""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
EXAMPLES = os.path.join(ROOT, "playbooks", "vars", "examples")
_NUMBERED = re.compile(r"^(?P<number>[0-9]+)-(?P<method>[a-z-]+)-(?P<fabric>roce|infiniband)[.]yml\Z")

# Every example variables file, numbered or not, sorted by name.
EXAMPLE_FILES = sorted(name for name in os.listdir(EXAMPLES) if name.endswith(".yml"))


def _numbered():
    found = []
    for name in EXAMPLE_FILES:
        match = _NUMBERED.match(name)
        if match:
            found.append((int(match.group("number")), match.group("method").replace("-", "_"), match.group("fabric"), name))
    return sorted(found)


# (number, method, fabric, example file name) of each configuration, by number.
NUMBERED = tuple(_numbered())
# "<method>/<fabric>" -> example file name, in configuration-number order.
CONFIGURATIONS = dict(("%s/%s" % (method, fabric), name) for _number, method, fabric, name in NUMBERED)
# (method, fabric) pairs in configuration-number order.
METHOD_FABRICS = tuple((method, fabric) for _number, method, fabric, _name in NUMBERED)


def example_path(name):
    """The path of an example file, given its file name or its "<method>/<fabric>" configuration name."""
    return os.path.join(EXAMPLES, CONFIGURATIONS.get(name, name))
