# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Reports of a GPUDirect RDMA bandwidth run: Markdown, and self-contained HTML with inline SVG charts, and the
artifacts folder that holds them with the results and the pods' logs (write_artifacts).

Pure: input is the result of BandwidthTest.run (pairs and summary), output is text (markup.py escapes it).
"""


import json
import math
import os

from ansible_collections.gpudirect.openshift.plugins.module_utils.reports.markup import (
    PALETTE,
    axis_ticks,
    html_text,
    markdown_table,
    markdown_text,
    number_text,
    run_page_start,
    size_text,
    svg_start,
)


def _pair_label(pair):
    label = "%s -> %s" % (_short(pair["server_node"]), _short(pair["client_node"]))
    rail = pair.get("rail") or {}
    # The same node pair appears once per rail: tell them apart.
    return "%s rail %s" % (label, rail.get("index")) if rail.get("count", 1) > 1 else label


def _rails(result):
    """The rails of a run with several (one-rail reports keep their old layout)."""
    rails = result["summary"].get("rails") or []
    return rails if len(rails) > 1 else []


def _rail_cell(pair):
    rail = pair.get("rail") or {}
    return "%s: %s (%s)" % (rail.get("index"), rail.get("network"), rail.get("nic") or rail.get("resource") or "-")


def _short(node):
    return str(node).split(".", 1)[0]


def threshold_text(summary):
    if summary.get("threshold") is None:
        return "each pair judged at the calibrated low end of its expected range"
    return "threshold %.0f%% of each pair's bound (link rate or PCIe)" % (summary["threshold"] * 100)


def path_text(pair):
    """'PIX' or 'PIX / SYS' (server / client): nvidia-smi's name of the GPU-NIC path of each side; '-' unknown."""
    paths = pair.get("path") or {}
    server, client = paths.get("server") or "-", paths.get("client") or "-"
    return server if server == client else "%s / %s" % (server, client)


def pcie_cell(pair):
    client = (pair.get("pcie") or {}).get("client") or {}
    return "%s / %s" % (client.get("gpu") or "-", client.get("nic") or "-")


def expected_cell(pair):
    expectation = pair.get("expected")
    if not expectation:
        return "-"
    return "%s-%s" % (number_text(expectation.get("low_gbps")), number_text(expectation.get("high_gbps")))


def _sources(pairs):
    seen = []
    for pair in pairs:
        for source in (pair.get("expected") or {}).get("sources") or []:
            entry = (source.get("key"), source.get("title"), source.get("url"))
            if entry not in seen:
                seen.append(entry)
    return seen


def markdown(result, title="GPUDirect RDMA bandwidth test"):
    summary = result["summary"]
    lines = ["# %s" % title, ""]
    lines.append("- Cluster: %s" % result.get("cluster", "-"))
    lines.append("- Configuration: %s" % result.get("configuration", "-"))
    lines.append("- Test: `%s %s`" % (result.get("binary", "ib_write_bw"), result.get("arguments", "")))
    lines.append("- Pairs: %d, passed: %d, failed: %d" % (summary["pairs"], summary["passed"], summary["failed"]))
    lines.append("- Bandwidth (Gb/s): min %s, avg %s, max %s; %s"
                 % (number_text(summary["min_bandwidth_gbps"]), number_text(summary["avg_bandwidth_gbps"]),
                    number_text(summary["max_bandwidth_gbps"]), threshold_text(summary)))
    lines.append("- Verdict: **%s**" % ("PASSED" if summary["all_passed"] else "FAILED"))
    lines.append("")
    rails = _rails(result)
    if rails:
        lines += ["## Rails", ""] + markdown_table(
            ["Rail", "Network", "Resource", "NIC", "Pairs", "Passed", "Min BW Gb/s", "Verdict"],
            [[rail.get("index"), rail.get("network"), rail.get("resource") or "-", rail.get("nic") or "-",
              rail["pairs"], rail["passed"], number_text(rail.get("min_bandwidth_gbps")),
              "PASSED" if rail["all_passed"] else "FAILED"] for rail in rails])
        lines += ["", "## Pairs", ""]
    header = ["Server node", "Client node", "Devices", "Path", "PCIe GPU / NIC", "Link Gb/s", "Expected Gb/s",
              "Threshold Gb/s", "BW average Gb/s", "Fraction", "Verdict", "Diagnosis"]
    rows = []
    for pair in result["pairs"]:
        diagnosis = pair.get("diagnosis") or {}
        rows.append(([_rail_cell(pair)] if rails else []) + [
            pair["server_node"], pair["client_node"],
            "%s / %s" % (pair.get("server_device") or "auto", pair.get("client_device") or "auto"),
            path_text(pair), pcie_cell(pair),
            number_text(pair.get("link_rate_gbps"), 0), expected_cell(pair), number_text(pair.get("threshold_gbps")),
            number_text(pair.get("bandwidth_gbps")),
            "%.1f%%" % (pair["fraction"] * 100) if pair.get("fraction") is not None else "-",
            pair.get("verdict"), "%s: %s" % (diagnosis.get("code"), diagnosis.get("message"))
            if pair.get("verdict") != "passed" else "ok"])
    lines += markdown_table((["Rail"] if rails else []) + header, rows)
    sources = _sources(result["pairs"])
    if sources:
        lines += ["", "## Expected ranges", "",
                  "Each pair is judged against its bound (link rate, PCIe payload rate of its GPU and NIC) and the "
                  "range that published runs on such hardware reach (docs/verify.md#expected-bandwidth). Why a pair's "
                  "bound is lower:", ""]
        for pair in result["pairs"]:
            expectation = pair.get("expected") or {}
            if expectation.get("why"):
                lines.append("- %s: %s" % (markdown_text(_pair_label(pair)),
                                           markdown_text("; ".join(expectation["why"]))))
        lines += ["", "Sources:", ""] + ["- %s: %s (%s)" % (key, title, url) for key, title, url in sources]
    sweeps = [p for p in result["pairs"] if p.get("sweep")]
    if sweeps:
        lines += ["", "## Bandwidth by message size (Gb/s)", ""]
        sizes = sorted({row["bytes"] for p in sweeps for row in p["sweep"]})
        rows = []
        for size in sizes:
            values = [[row["bw_avg_gbps"] for row in pair["sweep"] if row["bytes"] == size] for pair in sweeps]
            rows.append([size] + [number_text(value[0]) if value else "-" for value in values])
        lines += markdown_table(["Bytes"] + [_pair_label(p) for p in sweeps], rows)
    return "\n".join(lines) + "\n"


def bar_chart_svg(pairs, width=720, bar_height=26):
    """Horizontal bars of BW average per pair, with the threshold of each pair as a red tick and the link rate as a grey
    one."""
    rows = list(pairs)
    label_width = 260
    top = 30
    height = top + bar_height * max(1, len(rows)) + 40
    scale_max = max([p.get("link_rate_gbps") or 0 for p in rows] + [p.get("bandwidth_gbps") or 0 for p in rows] + [1])
    plot = width - label_width - 70

    def x(value):
        return label_width + plot * (value or 0) / scale_max

    out = [svg_start(width, height, "Bandwidth per pair"),
           '<text x="%d" y="18" font-size="13" font-family="sans-serif">BW average per pair (Gb/s); red: threshold, '
           'grey: link rate</text>'
           % label_width]
    for index, pair in enumerate(rows):
        y = top + index * bar_height
        passed = pair.get("verdict") == "passed"
        out.append('<text x="%d" y="%d" font-size="12" font-family="sans-serif" text-anchor="end">%s</text>'
                   % (label_width - 8, y + bar_height * 0.65, html_text(_pair_label(pair))))
        value = pair.get("bandwidth_gbps")
        if value is not None:
            out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>' % (
                label_width, y + 4, max(1.0, x(value) - label_width), bar_height - 8,
                "#2ca02c" if passed else "#d62728",
                html_text("%s: %.2f Gb/s" % (_pair_label(pair), value))))
            out.append('<text x="%.1f" y="%d" font-size="11" font-family="sans-serif">%.1f</text>'
                       % (x(value) + 4, y + bar_height * 0.65, value))
        else:
            out.append('<text x="%d" y="%d" font-size="11" font-family="sans-serif" fill="#d62728">no result: '
                       '%s</text>' % (label_width + 4, y + bar_height * 0.65,
                                      html_text((pair.get("diagnosis") or {}).get("code"))))
        if pair.get("threshold_gbps"):
            tx = x(pair["threshold_gbps"])
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#d62728" stroke-width="2" '
                       'stroke-dasharray="4,2"/>'
                       % (tx, y + 1, tx, y + bar_height - 1))
        if pair.get("link_rate_gbps"):
            lx = x(pair["link_rate_gbps"])
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#7f7f7f" stroke-width="1"/>'
                       % (lx, y + 1, lx, y + bar_height - 1))
    axis_y = top + bar_height * max(1, len(rows)) + 4
    out.append(
        '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>' % (label_width, axis_y, label_width + plot, axis_y))
    for tick in axis_ticks(scale_max):
        out.append('<text x="%.1f" y="%d" font-size="10" font-family="sans-serif" text-anchor="middle">%g</text>'
                   % (x(tick), axis_y + 14, tick))
    out.append("</svg>")
    return "\n".join(out)


def sweep_chart_svg(pairs, width=720, height=360):
    """Bandwidth against message size (log2 axis), one line per pair, with each pair's threshold dashed."""
    series = [p for p in pairs if p.get("sweep")]
    left, right, top, bottom = 60, 180, 30, 40
    sizes = sorted({row["bytes"] for p in series for row in p["sweep"]}) or [1, 2]
    low, high = math.log2(sizes[0]), math.log2(sizes[-1]) if sizes[-1] > sizes[0] else math.log2(sizes[0]) + 1
    ymax = max([row["bw_avg_gbps"] for p in series
                for row in p["sweep"]] + [p.get("link_rate_gbps") or 0 for p in series] + [1])
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(size):
        return left + plot_w * (math.log2(size) - low) / (high - low)

    def y(value):
        return top + plot_h * (1 - value / ymax)

    out = [svg_start(width, height, "Bandwidth by message size"),
           '<text x="%d" y="18" font-size="13" font-family="sans-serif">BW average (Gb/s) by message size '
           '(bytes)</text>' % left,
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>' % (left, top + plot_h, left + plot_w, top + plot_h),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>' % (left, top, left, top + plot_h)]
    for tick in axis_ticks(ymax):
        out.append('<text x="%d" y="%.1f" font-size="10" font-family="sans-serif" text-anchor="end">%g</text>'
                   % (left - 4, y(tick) + 3, tick))
    for size in sizes[::max(1, len(sizes) // 8)]:
        out.append('<text x="%.1f" y="%d" font-size="10" font-family="sans-serif" text-anchor="middle">%s</text>'
                   % (x(size), top + plot_h + 14, size_text(size)))
    for index, pair in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        points = " ".join("%.1f,%.1f" % (x(row["bytes"]), y(row["bw_avg_gbps"]))
                          for row in sorted(pair["sweep"], key=lambda r: r["bytes"]))
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"><title>%s</title></polyline>' % (
            color, points, html_text(_pair_label(pair))))
        if pair.get("threshold_gbps"):
            ty = y(pair["threshold_gbps"])
            out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-dasharray="4,3"/>'
                       % (left, ty, left + plot_w, ty, color))
        out.append('<text x="%d" y="%d" font-size="11" font-family="sans-serif" fill="%s">%s</text>' % (
            left + plot_w + 8, top + 14 * (index + 1), color, html_text(_pair_label(pair))))
    out.append("</svg>")
    return "\n".join(out)


def html(result, title="GPUDirect RDMA bandwidth test"):
    summary = result["summary"]
    verdict = "PASSED" if summary["all_passed"] else "FAILED"
    parts = run_page_start(title, "pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:11px;"
                                  "max-height:24em}") + [
        "<p>Cluster <b>%s</b>, configuration <b>%s</b>: <span class=\"%s\">%s</span></p>" % (
            html_text(result.get("cluster", "-")), html_text(result.get("configuration", "-")), verdict.lower(),
            verdict),
        "<p>Test: <code>%s %s</code></p>" % (html_text(result.get("binary", "ib_write_bw")),
                                             html_text(result.get("arguments", ""))),
        "<p>%d pair(s), %d passed, %d failed. BW average min %s, avg %s, max %s Gb/s; %s.</p>" % (
            summary["pairs"], summary["passed"], summary["failed"], number_text(summary["min_bandwidth_gbps"]),
            number_text(summary["avg_bandwidth_gbps"]), number_text(summary["max_bandwidth_gbps"]),
            html_text(threshold_text(summary))),
        bar_chart_svg(result["pairs"])]
    if any(p.get("sweep") for p in result["pairs"]):
        parts.append("<h2>Bandwidth by message size</h2>")
        parts.append(sweep_chart_svg(result["pairs"]))
    rails = _rails(result)
    if rails:
        parts.append("<h2>Rails</h2><table><tr><th>Rail</th><th>Network</th><th>Resource</th><th>NIC</th>"
                     "<th>Pairs</th><th>Passed</th><th>Min BW Gb/s</th><th>Verdict</th></tr>")
        for rail in rails:
            rail_verdict = "passed" if rail["all_passed"] else "failed"
            parts.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%s</td>"
                         "<td class=\"%s\">%s</td></tr>"
                         % (html_text(rail.get("index")), html_text(rail.get("network")),
                            html_text(rail.get("resource") or "-"), html_text(rail.get("nic") or "-"), rail["pairs"],
                            rail["passed"], number_text(rail.get("min_bandwidth_gbps")), rail_verdict,
                            rail_verdict.upper()))
        parts.append("</table>")
    parts.append("<table><tr>%s<th>Server node</th><th>Client node</th><th>Devices</th><th>Path</th><th>PCIe GPU / "
                 "NIC</th><th>Link Gb/s</th><th>Expected Gb/s</th><th>Threshold Gb/s</th>"
                 "<th>BW average Gb/s</th><th>Fraction</th><th>Verdict</th><th>Diagnosis</th></tr>"
                 % ("<th>Rail</th>" if rails else ""))
    for pair in result["pairs"]:
        diagnosis = pair.get("diagnosis") or {}
        row = "<tr><td>%s</td>" % html_text(_rail_cell(pair)) if rails else "<tr>"
        parts.append(row + "<td>%s</td><td>%s</td><td>%s / "
                           "%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
                     "<td class=\"%s\">%s</td><td>%s</td></tr>" % (
                         html_text(pair["server_node"]), html_text(pair["client_node"]),
                         html_text(pair.get("server_device") or "auto"), html_text(pair.get("client_device") or "auto"),
                         html_text(path_text(pair)), html_text(pcie_cell(pair)),
                         number_text(pair.get("link_rate_gbps"), 0), html_text(expected_cell(pair)),
                         number_text(pair.get("threshold_gbps")), number_text(pair.get("bandwidth_gbps")),
                         "%.1f%%" % (pair["fraction"] * 100) if pair.get("fraction") is not None else "-",
                         html_text(pair.get("verdict")), html_text(pair.get("verdict")),
                         "ok" if pair.get("verdict") == "passed"
                         else html_text("%s: %s" % (diagnosis.get("code"), diagnosis.get("message")))))
    parts.append("</table>")
    for pair in result["pairs"]:
        if pair.get("verdict") == "passed":
            continue
        parts.append("<h3>%s</h3>" % html_text(_pair_label(pair) + (" (%s)" % _rail_cell(pair) if rails else "")))
        parts.append("<p>Server pod: %s; client pod: %s</p>" % (html_text(pair.get("server_state")),
                                                                html_text(pair.get("client_state"))))
        for role in ("client", "server"):
            if pair.get("%s_log" % role):
                parts.append("<p>%s log</p><pre>%s</pre>" % (role.capitalize(), html_text(pair["%s_log" % role])))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_artifacts(directory, report_input, result, settings, message):
    """results.json, report.md, report.html and one file per pod log in `directory`; returns the file names."""
    if not os.path.isdir(directory):
        os.makedirs(directory)
    pairs = report_input["pairs"]
    results = {"cluster": result["cluster_name"], "run_id": result["run_id"], "arguments": result["arguments"],
               "configuration": settings["configuration_label"], "summary": result["summary"],
               "passed": result["passed"], "message": message or "", "rounds": result["rounds"],
               "pairs": [{k: v for k, v in pair.items() if k not in ("server_log", "client_log")} for pair in pairs]}
    files = [("results.json", json.dumps(results, indent=4, sort_keys=True) + "\n"),
             ("report.md", markdown(report_input)), ("report.html", html(report_input))]
    for pair in pairs:
        for role in ("server", "client"):
            files.append(("pair-%s-%s.log" % (pair["index"], role), pair.get("%s_log" % role) or ""))
    for name, content in files:
        with open(os.path.join(directory, name), "w") as handle:
            handle.write(content)
    return [name for name, _content in files]
