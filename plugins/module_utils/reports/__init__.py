# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure report writers: gathered facts and run results in, Markdown, HTML with inline SVG and JSON out (no cluster
access). markup.py holds what every report writes the same way (escaping, numbers, sizes, tables, charts)."""
