# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node-side hardware facts: sysfs/procfs readers, nvidia-smi parser, PCIe topology, readiness.

Everything in this package uses the Python standard library only, so that collector.py can run
in a pod with a bare python3 (see collector.py --write-standalone).
"""
