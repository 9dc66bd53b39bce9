# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every line under plugins/ fits in 120 columns (issue 37): code, module documentation, doc fragments and the
filters' documentation files alike. ansible-test's pep8 stage allows 160, so this test holds the tighter limit.

The one exception is pycodestyle's own (its E501 check): a line that is a single word, alone or after ``#``, such as
a URL or an image digest in documentation, which no wrapping can shorten. ``# noqa`` exempts nothing here.
"""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMIT = 120
CHECKED = (".py", ".yml", ".yaml")


def long_lines(path, limit=LIMIT):
    """[(line number, length)] of the lines of ``path`` longer than ``limit`` that could be wrapped."""
    found = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.rstrip("\r\n")
            if len(line) <= limit:
                continue
            words = line.split()
            if len(words) == 1 or (len(words) == 2 and words[0] == "#"):
                continue
            found.append((number, len(line)))
    return found


def plugin_files():
    for directory, _dirs, files in os.walk(os.path.join(ROOT, "plugins")):
        for name in sorted(files):
            if name.endswith(CHECKED):
                yield os.path.join(directory, name)


def test_every_plugins_line_fits_in_120_columns():
    files = list(plugin_files())
    assert len(files) > 100, files  # the walk found the collection's plugins
    over = {}
    for path in files:
        for number, length in long_lines(path):
            over["%s:%d" % (os.path.relpath(path, ROOT), number)] = length
    assert over == {}, "lines over %d columns (wrap them; see docs/contributing.md): %s" % (LIMIT, over)


def test_a_long_line_is_found_and_an_unbreakable_word_is_not(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("x = 1\n"
                      "y = '%s'  # noqa: E501\n"
                      "# https://example.com/%s\n"
                      "    %s\n"
                      "z = '%s'\n" % ("a" * 120, "b" * 120, "c" * 130, "d" * 113), encoding="utf-8")
    assert long_lines(str(sample)) == [(2, 140)]
