"""Issue 34 (LOW): the Markdown hardware report was not escaped. Its text comes from facts that pods on the nodes
report (GPU names, node names, warnings, errors), so a node could put a link, an image (a tracking pixel) or raw HTML
into a report that people open in a Markdown viewer. The bandwidth report's Markdown cells (node names, diagnoses
quoting pod logs) go through the same escaping (reports/markup.py, issue 37)."""

import re

from ansible_collections.gpudirect.openshift.plugins.module_utils.reports import bandwidth_report, hardware_report

HOSTILE = "A100 ![x](https://tracker.example/p.png) [click](javascript:alert(1)) <img src=x onerror=alert(1)> `code` a|b"


def facts():
    return {"gpus": [{"index": 0, "pci_address": "0000:17:00.0", "name": HOSTILE, "numa_node": 0}],
            "nics": [], "warnings": [HOSTILE + "\nsecond line"]}


def test_markdown_report_turns_facts_text_into_literal_text():
    report = hardware_report.render_markdown({"gpu-0 <b>": facts()}, failed=[{"node": "[n](x)", "error": "<script>"}])
    for active in ("![x](", "[click](", "<img", "<b>", "[n](x)", "<script>", "`code`"):
        # an occurrence that is not preceded by a backslash is live Markdown
        assert re.search(r"(?<!\\)" + re.escape(active), report) is None, "%r reaches the report unescaped" % active
    assert "\\!\\[x\\](https://tracker.example/p.png)" in report and "\\<img src=x onerror=alert(1)>" in report
    assert "second line" in report and "\nsecond line" not in report


def test_html_report_escapes_the_same_text():
    report = hardware_report.render_html({"gpu-0": facts()})
    assert "<img src=x" not in report and "&lt;img src=x onerror=alert(1)&gt;" in report


def test_bandwidth_markdown_report_turns_pod_text_into_literal_text():
    pair = {"index": 0, "server_node": "a <b>", "client_node": "[n](x)", "link_rate_gbps": 400.0, "threshold_gbps": 320.0,
            "bandwidth_gbps": None, "fraction": None, "verdict": "failed",
            "diagnosis": {"code": "no_result", "message": HOSTILE + "\nsecond line"}}
    summary = {"pairs": 1, "passed": 0, "failed": 1, "all_passed": False, "min_bandwidth_gbps": None, "avg_bandwidth_gbps": None,
               "max_bandwidth_gbps": None, "threshold": 0.8}
    report = bandwidth_report.markdown({"pairs": [pair], "summary": summary})
    for active in ("![x](", "[click](", "<img", "<b>", "[n](x)", "`code`"):
        assert re.search(r"(?<!\\)" + re.escape(active), report) is None, "%r reaches the report unescaped" % active
    assert "a|b" not in report and "a\\|b" in report and "second line" in report and "\nsecond line" not in report
