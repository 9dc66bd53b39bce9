# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every report of the collection writes the same way: escaping of HTML and Markdown text, cells, numbers and
sizes, Markdown tables, the head of a run report's HTML page, and the pieces of its inline SVG charts.

Text in a report comes from pods and nodes (facts, logs, events), so every value goes through html_text or
markdown_text; nothing here reads a file or the cluster.
"""


import math
from html import escape as _html_escape

# Colours of the series of a chart, in order (matplotlib's "tab10" cycle, which people read as distinct).
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")

# The look of a run report (bandwidth, NCCL); a report adds its own rules after it.
RUN_REPORT_STYLE = ("body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}"
                    "th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;font-size:13px}th{background:#f3f3f3}"
                    ".passed{color:#2ca02c;font-weight:bold}.failed{color:#d62728;font-weight:bold}")

# Characters that make Markdown text into something else: a link or image ([..](..)), raw HTML or an autolink (<..),
# code spans, table cells, escapes (CommonMark backslash escapes).
_MARKDOWN_SPECIAL = {ch: "\\" + ch for ch in "\\`[]<|!"}


def html_text(value) -> str:
    """``value`` as HTML text, attribute-safe; None is empty."""
    return _html_escape("" if value is None else str(value), quote=True)


def cell_text(value) -> str:
    """A table cell: '-' for nothing, yes/no for a boolean, a whole float without its '.0'."""
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def html_cell(value) -> str:
    """cell_text as HTML text."""
    return _html_escape(cell_text(value), quote=True)


def markdown_text(value) -> str:
    """cell_text of ``value`` as literal Markdown text on one line."""
    text = " ".join(cell_text(value).splitlines())
    return "".join(_MARKDOWN_SPECIAL.get(ch, ch) for ch in text)


def markdown_table(header, rows) -> list:
    """The lines of a Markdown table; every cell escaped (an empty header cell stays empty)."""
    lines = ["| " + " | ".join(markdown_text(cell) if cell else "" for cell in header) + " |",
             "|" + "|".join(["---"] * len(header)) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(markdown_text(cell) for cell in row) + " |")
    return lines


def number_text(value, digits=2) -> str:
    """``value`` with ``digits`` decimals; '-' for None."""
    if value is None:
        return "-"
    return ("%%.%df" % digits) % value


def size_text(size) -> str:
    """A message size in bytes as the benchmark tools' sweeps name it: 8K, 1M, 8G when whole, else the bytes."""
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= factor and size % factor == 0:
            return "%d%s" % (size // factor, unit)
    return str(size)


def run_page_start(title, extra_style="") -> list:
    """The first lines of a run report's page, up to its heading."""
    return ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8"><title>%s</title>' % html_text(title),
            "<style>%s%s</style></head><body>" % (RUN_REPORT_STYLE, extra_style), "<h1>%s</h1>" % html_text(title)]


def svg_start(width, height, label, view_box=True) -> str:
    """The opening tag of an inline SVG chart of ``width`` x ``height`` pixels, named ``label`` for screen readers."""
    box = ' viewBox="0 0 %d %d"' % (width, height) if view_box else ""
    return '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d"%s role="img" aria-label="%s">' % (
        width, height, box, html_text(label))


def axis_ticks(maximum, count=5) -> list:
    """Values for at most about ``count`` tick labels from 0 to ``maximum``, a step of 1, 2 or 5 times a power of 10."""
    step = 10 ** math.floor(math.log10(maximum / count)) if maximum > 0 else 1
    for factor in (1, 2, 5, 10):
        if maximum / (step * factor) <= count:
            step *= factor
            break
    ticks = []
    value = 0.0
    while value <= maximum + 1e-9:
        ticks.append(round(value, 6))
        value += step
    return ticks
