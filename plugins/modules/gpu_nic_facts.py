#!/usr/bin/python
# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: gpu_nic_facts
short_description: Collect NVIDIA GPU and NVIDIA/Mellanox NIC facts of a node for GPUDirect RDMA
version_added: 0.1.0
author: gpudirect.openshift maintainers (@gpudirect)
description:
  - Reads sysfs and procfs of the target node (directly, no cluster client) and, when available, the output
    of one C(nvidia-smi -q -x) call.
  - Reports every NVIDIA/Mellanox PCI function (PF and VF) with its driver, netdevs, RDMA device, ports,
    firmware, NUMA node, SR-IOV counts and PCIe link; every NVIDIA GPU; the PCIe relation of every GPU and NIC
    in C(nvidia-smi topo -m) terms with the nearest NIC per GPU; the relevant kernel modules; the peer memory path
    (C(nvidia_peermem) or DMA-BUF); and a readiness verdict listing every reason the node is not ready.
  - Without C(nvidia-smi) the GPUs come from sysfs (vendor C(0x10de), display or 3D class) with fewer details.
  - Missing files or links (partial trees, containers with part of the host mounted) give partial facts and
    entries in C(warnings), never a failure.
  - The same collector runs without Ansible inside a pod, see C(docs/facts.md).
options:
  sys_root:
    description:
      - Where the node's sysfs is mounted, for example C(/host/sys) in a pod that mounts the host's C(/sys).
    type: path
    default: /sys
  proc_root:
    description:
      - Where the node's procfs is mounted, for example C(/host/proc).
    type: path
    default: /proc
  nvidia_smi:
    description:
      - C(auto) runs C(nvidia-smi) from E(PATH) when it is there, C(skip) never runs it, any other value is the
        path of the binary to run.
      - It runs once, with C(-q -x); it only reads the GPU state.
    type: str
    default: auto
  nvidia_smi_timeout:
    description:
      - Seconds to wait for C(nvidia-smi) before giving up on it (GPUs then come from sysfs).
    type: int
    default: 60
  gather_gpus:
    description:
      - Collect GPU facts. With V(false) C(nvidia-smi) is not run and C(gpus) is empty.
    type: bool
    default: true
  gather_nics:
    description:
      - Collect NIC and RDMA device facts. With V(false) C(nics) and C(rdma_devices) are empty.
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
attributes:
  check_mode:
    support: full
    details: The module only reads; check mode gives the same facts.
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: posix
notes:
  - DMA-BUF support is inferred; C(CONFIG_DMA_SHARED_BUFFER) cannot be read from a pod. It counts as usable when
    the kernel is 5.12 or newer and the NVIDIA open kernel module (R515 or newer) is in use, read from
    C(/proc/driver/nvidia/version) (or inferred for Blackwell GPUs, which only run with the open module).
  - A kernel module counts as present when C(/proc/modules) lists it or C(/sys/module/<name>) exists (built in).
seealso:
  - name: NVIDIA GPUDirect RDMA on OpenShift
    description: The procedure this collection automates.
    link:
      https://docs.redhat.com/en/documentation/openshift_container_platform/4.18/html/hardware_accelerators/nvidia-gpudirect-remote-direct-memory-access
"""

EXAMPLES = r"""
- name: Collect GPU/NIC facts on a worker reached over SSH
  gpudirect.openshift.gpu_nic_facts:

- name: Inside a pod with the host's /sys and /proc mounted under /host, without nvidia-smi
  gpudirect.openshift.gpu_nic_facts:
    sys_root: /host/sys
    proc_root: /host/proc
    nvidia_smi: skip

- name: Stop when the node cannot do GPUDirect RDMA
  ansible.builtin.assert:
    that: ansible_facts.gpudirect.readiness.ready
    fail_msg: "{{ ansible_facts.gpudirect.readiness.reasons | join('; ') }}"

- name: Interfaces of the NIC nearest to GPU 0 (for ifNames / pfNames selectors)
  ansible.builtin.debug:
    msg: "{{ ansible_facts.gpudirect.topology.nearest_nic['0'].netdevs }}"
"""

RETURN = r"""
ansible_facts:
  description: Facts added under C(gpudirect).
  returned: always
  type: dict
  contains:
    gpudirect:
      description: GPU/NIC facts of the node.
      returned: always
      type: dict
      contains:
        schema_version:
          description: Version of this layout; bumped on incompatible changes.
          type: int
          sample: 1
        sys_root:
          description: The sysfs root read.
          type: str
          sample: /sys
        proc_root:
          description: The procfs root read.
          type: str
          sample: /proc
        kernel:
          description: Kernel facts.
          type: dict
          contains:
            release:
              description: C(/proc/sys/kernel/osrelease), null when unreadable.
              type: str
              sample: 5.14.0-427.50.1.el9_4.x86_64
        kernel_modules:
          description: >-
            For C(nvidia), C(nvidia_peermem), C(nvidia_uvm), C(mlx5_core), C(mlx5_ib), C(ib_core), C(ib_uverbs),
            C(rdma_cm), C(rdma_ucm) and C(irdma): true when loaded or built in, false when absent, null when
            C(/proc/modules) is unreadable.
          type: dict
          sample: {"nvidia": true, "nvidia_peermem": false, "mlx5_core": true, "irdma": false}
        nvidia_driver:
          description: NVIDIA kernel driver.
          type: dict
          contains:
            version:
              description: Driver version (nvidia-smi, else C(/proc/driver/nvidia/version), else
                C(/sys/module/nvidia/version)).
              type: str
              sample: 580.159.04
            open_kernel_module:
              description: True for the open GPU kernel module, false for the proprietary one, null when unknown.
              type: bool
            open_kernel_module_source:
              description: Evidence used for C(open_kernel_module).
              type: str
              sample: /proc/driver/nvidia/version
        nvidia_smi:
          description: How the nvidia-smi output was used.
          type: dict
          contains:
            used:
              description: True when GPU facts come from C(nvidia-smi -q -x).
              type: bool
            xml_schema:
              description: DTD version named by the XML (C(v11), C(v12), C(v13)).
              type: str
              sample: v13
            cuda_version:
              description: CUDA version the driver supports.
              type: str
              sample: "13.0"
        gpus:
          description: NVIDIA GPUs, in nvidia-smi order (PCI order without it).
          type: list
          elements: dict
          contains:
            index:
              description: GPU index as nvidia-smi numbers it.
              type: int
            name:
              description:
                - Product name from nvidia-smi; without it, the name of the PCI device ID in a table of data-center and
                  workstation GPUs (from pci.ids), null for an ID not in that table.
              type: str
              sample: NVIDIA H200
            uuid:
              description: GPU UUID (null without nvidia-smi).
              type: str
              sample: GPU-9afc864c-c5d7-6c43-7842-f5e9cfaba8a3
            pci_address:
              description: PCI address in sysfs form (lower case, 4-digit domain).
              type: str
              sample: "0000:00:06.0"
            pci_device_id:
              description: PCI device ID, from sysfs (nvidia-smi's value only when sysfs has none).
              type: str
              sample: "0x2335"
            architecture:
              description: GPU architecture from nvidia-smi.
              type: str
              sample: Hopper
            driver:
              description: Kernel driver bound to the function (sysfs driver link).
              type: str
              sample: nvidia
            driver_version:
              description: NVIDIA driver version.
              type: str
            cuda_version:
              description: CUDA version.
              type: str
            memory_total_mib:
              description: Framebuffer memory in MiB (null without nvidia-smi).
              type: int
              sample: 143771
            memory_source:
              description: Where the memory size comes from (C(nvidia-smi)), or null when it is unknown.
              type: str
            numa_node:
              description: NUMA node from sysfs; null when the platform reports none (-1).
              type: int
            mig_mode:
              description: MIG mode C(current) and C(pending) (C(Enabled), C(Disabled) or null when unsupported).
              type: dict
            persistence_mode:
              description: C(Enabled) or C(Disabled).
              type: str
            addressing_mode:
              description: Addressing mode (v12+ XML), for example C(None), C(HMM), C(ATS).
              type: str
            pcie:
              description: Sysfs PCIe link (current/max speed as text and GT/s, width).
              type: dict
            pcie_link:
              description: PCIe generation and width from nvidia-smi.
              type: dict
            source:
              description: C(nvidia-smi) or C(sysfs).
              type: str
            sysfs_path:
              description: Physical sysfs path (chain of bridges).
              type: str
        nics:
          description: Every NVIDIA/Mellanox (vendor C(0x15b3)) PCI function, PFs and VFs.
          type: list
          elements: dict
          contains:
            pci_address:
              description: PCI address.
              type: str
              sample: "0000:21:00.0"
            vendor_id:
              description: PCI vendor ID.
              type: str
              sample: "0x15b3"
            device_id:
              description: PCI device ID.
              type: str
              sample: "0x1021"
            model:
              description: Adapter model from the device ID table (a VF with the generic ID takes its PF's model).
              type: str
              sample: ConnectX-7
            family:
              description: Driver family, C(mlx5) or C(mlx4).
              type: str
            function:
              description: C(PF) or C(VF).
              type: str
            pf_pci_address:
              description: PCI address of the PF of a VF (physfn link), null for a PF.
              type: str
            driver:
              description: Bound kernel driver.
              type: str
              sample: mlx5_core
            numa_node:
              description: NUMA node, null when none is reported.
              type: int
            pcie:
              description: PCIe current/max link speed and width.
              type: dict
            sriov:
              description: For a PF, C(totalvfs), C(numvfs) and C(vf_addresses); null for a VF.
              type: dict
            netdevs:
              description: Network interfaces of the function (name, mtu, operstate, address, type, dev_port,
                speed_mbps).
              type: list
              elements: dict
            rdma_device:
              description: RDMA device name, null when none is registered.
              type: str
              sample: mlx5_0
            fw_ver:
              description: Firmware version.
              type: str
              sample: 28.41.1000
            node_guid:
              description: Node GUID.
              type: str
            hca_type:
              description: HCA type (C(MT) + decimal device ID).
              type: str
              sample: MT4129
            ports:
              description: >-
                RDMA ports: port, link_layer (C(InfiniBand) or C(Ethernet)), state (C(ACTIVE), C(DOWN), ...),
                state_code, phys_state, rate text and rate_gbps, lid, sm_lid, port_guid, gids
                (index, gid, type, netdev; up to 16), netdev and mtu.
              type: list
              elements: dict
            link_layers:
              description: Link layers of the ports.
              type: list
              elements: str
            sysfs_path:
              description: Physical sysfs path.
              type: str
        rdma_devices:
          description: >-
            Every C(/sys/class/infiniband) device, also those of other vendors or without a link to a PCI function,
            with name, pci_address, vendor, model, family, node_guid, sys_image_guid, fw_ver, hca_type, board_id,
            node_type and ports.
          type: list
          elements: dict
        peer_memory:
          description: How GPU memory can be registered with the NIC.
          type: dict
          contains:
            nvidia_peermem_loaded:
              description: The nvidia_peermem module is loaded.
              type: bool
            dma_buf:
              description: DMA-BUF verdict (usable true/false/null, kernel_supports, driver_supports, detail).
              type: dict
            path:
              description: C(nvidia_peermem), C(dma_buf) or null when there is none.
              type: str
        topology:
          description: PCIe relations between GPUs and NICs (C(PIX), C(PXB), C(PHB), C(NODE), C(SYS); null when
            unknown).
          type: dict
          contains:
            pairs:
              description: One entry per GPU and NIC function (gpu_index, gpu_pci_address, nic_pci_address, rdma_device,
                relation).
              type: list
              elements: dict
            matrix:
              description: GPU index (as a string) -> NIC PCI address -> relation.
              type: dict
            nearest_nic:
              description: GPU index -> nearest NIC with an RDMA device (pci_address, rdma_device, netdevs, relation).
              type: dict
        readiness:
          description: GPUDirect RDMA readiness.
          type: dict
          contains:
            ready:
              description: True when no blocking reason was found.
              type: bool
            reasons:
              description: Every blocking reason, in words.
              type: list
              elements: str
            reason_codes:
              description: >-
                Stable codes of the reasons (no_nvidia_gpu, nvidia_driver_not_loaded, no_mellanox_nic, no_rdma_device,
                no_active_rdma_port, ib_uverbs_not_loaded, no_peer_memory_path, irdma_loaded).
              type: list
              elements: str
              sample: ["no_mellanox_nic"]
            warnings:
              description: Non-blocking findings, in words.
              type: list
              elements: str
            warning_codes:
              description: Codes of the warnings (rdma_port_not_active, mlx4_only, all_pairs_sys, topology_unknown,
                nvidia_driver_unknown).
              type: list
              elements: str
        warnings:
          description: Problems met while collecting (missing links or files, nvidia-smi failures).
          type: list
          elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import collector, nvidia_smi


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sys_root=dict(type="path", default="/sys"),
            proc_root=dict(type="path", default="/proc"),
            nvidia_smi=dict(type="str", default="auto"),
            nvidia_smi_timeout=dict(type="int", default=60),
            gather_gpus=dict(type="bool", default=True),
            gather_nics=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    params = module.params
    xml_text, error = None, None
    if params["gather_gpus"] and params["nvidia_smi"] != "skip":
        if params["nvidia_smi"] == "auto":
            binary = module.get_bin_path("nvidia-smi")
        else:
            binary = params["nvidia_smi"]
        if binary:
            xml_text, error = nvidia_smi.run(binary, timeout=params["nvidia_smi_timeout"])
    facts = collector.collect(
        sys_root=params["sys_root"],
        proc_root=params["proc_root"],
        nvidia_smi_xml=xml_text,
        nvidia_smi_error=error,
        gather_gpus=params["gather_gpus"],
        gather_nics=params["gather_nics"],
    )
    module.exit_json(changed=False, ansible_facts={"gpudirect": facts})


if __name__ == "__main__":
    main()
