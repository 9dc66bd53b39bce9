# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Self-contained HTML report of an NCCL all-reduce run: verdict, suspect rails, and busbw by message size (inline SVG).

Pure: input is the result of NcclAllReduceTest.run (or nccl_run.judge), output is text (markup.py escapes it).
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils.reports.markup import (
    html_text, run_page_start, size_text, svg_start)


def busbw_chart_svg(rows, expected=None, required=None, width=720, height=300):
    """busbw (GB/s) of each message size as bars, with the expected and required levels as lines."""
    if not rows:
        return ""
    top = max([row["busbw_gbs"] for row in rows] + [expected or 0, required or 0]) or 1.0
    left, bottom, plot_h = 60, 40, height - 60
    step = float(width - left - 10) / len(rows)
    parts = [svg_start(width, height, "bus bandwidth by size", view_box=False)]
    for index, row in enumerate(rows):
        bar_height = plot_h * row["busbw_gbs"] / top
        x = left + index * step
        parts.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#1f77b4"><title>%s: %.2f GB/s</title>'
                     '</rect>' % (x + 1, height - bottom - bar_height, max(step - 2, 1), bar_height,
                                  html_text(size_text(row["size_bytes"])), row["busbw_gbs"]))
        if len(rows) <= 16 or index % 4 == 0:
            parts.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>' % (
                x + step / 2, height - bottom + 14, html_text(size_text(row["size_bytes"]))))
    for level, colour, label in ((expected, "#2ca02c", "expected"), (required, "#d62728", "required")):
        if level:
            y = height - bottom - plot_h * level / top
            parts.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="4 3"/>'
                         % (left, width - 10, y, y, colour))
            parts.append('<text x="%d" y="%.1f" font-size="10" fill="%s">%s %.0f</text>'
                         % (left - 56, y + 3, colour, label, level))
    parts.append('<text x="%d" y="%d" font-size="11">busbw GB/s by message size</text></svg>' % (left, 14))
    return "".join(parts)


def html(result, title="NCCL all-reduce across the rails"):
    verdict = "PASSED" if result.get("passed") else "FAILED"
    parts = run_page_start(title) + [
        '<p><span class="%s">%s</span> (%s): %s</p>' % (verdict.lower(), verdict, html_text(result.get("code")),
                                                        html_text(result.get("reason")))]
    if result.get("measured_busbw_gbs") is not None:
        parts.append("<p>Nodes %s, %s ranks, %s rails. busbw %.2f GB/s at %s; expected %.1f GB/s (sum of one node's "
                     "rail rates / 8), "
                     "required %.1f GB/s (threshold %.0f%%). %s</p>" % (
                         html_text(", ".join(result.get("nodes") or [])), html_text(result.get("ranks")),
                         html_text(result.get("rails")), result["measured_busbw_gbs"],
                         html_text(size_text(result.get("message_size") or 0)), result["expected_busbw_gbs"],
                         result["required_busbw_gbs"], result["threshold"] * 100, html_text(result.get("formula"))))
        parts.append(busbw_chart_svg(result.get("rows") or [], result.get("expected_busbw_gbs"),
                                     result.get("required_busbw_gbs")))
    expected = result.get("expected_range")
    if expected:
        # What published real runs reach on these rails (module_utils/verify/nccl_calibration.py), each row with
        # its source.
        parts.append("<h2>Expected for this hardware</h2><p>A ring reaches %.1f-%.1f GB/s (%.0f-%.0f%% of the rails' "
                     "%.1f GB/s) in the published healthy runs below%s.</p>" % (
                         expected["low_gbs"], expected["high_gbs"], expected["low_fraction"] * 100,
                         expected["high_fraction"] * 100, expected["rails_gbs"],
                         "; a tree or NVLS run up to %.1f GB/s (%s)" % (
                             expected["tree_bound_gbs"], html_text(expected.get("tree_explanation")))
                         if expected.get("tree_bound_gbs") else ""))
        parts.append("<table><tr><th>Source</th><th>Title</th></tr>")
        for source in list(expected.get("sources") or []) + list(expected.get("tree_sources") or []):
            parts.append('<tr><td>%s</td><td><a href="%s">%s</a></td></tr>'
                         % (html_text(source["key"]), html_text(source["url"]), html_text(source["title"])))
        parts.append("</table>")
        if not result.get("passed") and expected.get("low_causes"):
            parts.append("<p>Low results in published runs came from:</p><ul>%s</ul>" % "".join(
                "<li>%s</li>" % html_text(cause) for cause in expected["low_causes"]))
    if result.get("suspects"):
        parts.append("<h2>Suspect rails (from the NIC "
                     "facts)</h2><table><tr><th>Rail</th><th>Node</th><th>NIC</th><th>RDMA "
                     "device</th><th>GPU</th><th>Problem</th></tr>")
        for suspect in result["suspects"]:
            parts.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % tuple(
                html_text(suspect.get(key)) for key in ("rail", "node", "nic", "rdma_device", "gpu", "problem")))
        parts.append("</table>")
    if result.get("rows"):
        parts.append("<table><tr><th>Size</th><th>algbw GB/s</th><th>busbw GB/s</th></tr>")
        for row in result["rows"]:
            parts.append("<tr><td>%s</td><td>%.2f</td><td>%.2f</td></tr>"
                         % (html_text(size_text(row["size_bytes"])), row["algbw_gbs"], row["busbw_gbs"]))
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
