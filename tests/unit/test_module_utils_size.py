# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No file of plugins/module_utils reaches 600 lines (issue 37): a file that grows past it holds more than one
concern and is split by concern (pure rules apart from the code that talks to the API, tables apart from checks)."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMIT = 600


def test_every_module_utils_file_stays_under_the_limit():
    sizes = {}
    for directory, _dirs, files in os.walk(os.path.join(ROOT, "plugins", "module_utils")):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                with open(path) as handle:
                    sizes[os.path.relpath(path, ROOT)] = sum(1 for _line in handle)
    assert len(sizes) > 50, sizes  # the walk found the package
    assert {path: lines for path, lines in sizes.items() if lines >= LIMIT} == {}
