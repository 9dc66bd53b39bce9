"""hack/test.sh in lanes (what CI runs with no argument): every stage of every lane runs, each stage's output is
printed whole, and one failing stage fails the command and is named."""

import os
import re
import subprocess

from site_support import ROOT


def test_lanes_run_every_stage_print_each_whole_and_fail_on_one_failure(tmp_path):
    env = dict(os.environ, GPUDIRECT_TEST_LOG_DIR=str(tmp_path / "logs"), GPUDIRECT_TEST_WORKERS="0")
    duration_file = os.path.join(ROOT, ".cache", "last-test-duration")
    duration_before = os.stat(duration_file).st_mtime if os.path.exists(duration_file) else None
    # "no-such-stage" fails at once, and docs still runs after it; unit runs meanwhile in the other lane.
    proc = subprocess.run(["bash", "hack/test.sh", "--lanes", "no-such-stage docs", "unit"], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "FAILED stages: no-such-stage (" in out, out
    assert "<== docs passed in" in out and "<== unit passed in" in out, out
    assert "<== no-such-stage FAILED (rc 2)" in out and "unknown stage no-such-stage" in out, out
    # A stage's block is never cut by another's: between "==> X" and "<== X" no other stage starts or ends.
    blocks = re.findall(r"^==> (\S+)\n(.*?)^<== (\S+) ", out, re.S | re.M)
    assert len(blocks) == 3 and all(first == last and "==>" not in body for first, body, last in blocks), out
    assert sorted(os.listdir(tmp_path / "logs")) == [".print", "docs.log", "failed", "no-such-stage.log", "unit.log"]
    # Only a full run is the test command's duration.
    assert (os.stat(duration_file).st_mtime if os.path.exists(duration_file) else None) == duration_before
