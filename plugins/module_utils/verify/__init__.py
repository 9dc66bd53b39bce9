# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure verification logic: benchmark output parsed and judged against what the hardware should reach, the pods'
settings and manifests, what a pod state means (no cluster access). cluster/bandwidth_run.py and cluster/nccl_run.py
run the pods."""
