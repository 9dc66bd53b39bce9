# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure renderers: GPUDirect RDMA variables in, Kubernetes manifests out (no cluster access)."""
