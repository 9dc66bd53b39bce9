# Copyright: (c) 2025, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI identities of NVIDIA (Mellanox) network adapters and NVIDIA GPUs."""


NVIDIA_VENDOR_ID = 0x10de
MELLANOX_VENDOR_ID = 0x15b3

# PCI class codes (base class, sub class) that mark a GPU function; audio (0x0403) and NVSwitch
# bridges (0x0680) of the same vendor are not GPUs.
GPU_CLASS_PREFIXES = (0x0300, 0x0302)

# PCI device ID -> (model, function kind, kernel driver family).
# The ibstat/ibv_devinfo "CA type MTxxxx" is the decimal form of the PF device ID (MT4129 = 0x1021).
# 0x101e is one VF ID shared by every mlx5 generation from ConnectX-6 Dx on (CX-6 Dx/Lx, CX-7,
# CX-8, BlueField-2/3): the model of such a VF comes from its PF (physfn link).
MELLANOX_DEVICES = {
    0x1003: ("ConnectX-3", "PF", "mlx4"),
    0x1004: ("ConnectX-3 VF", "VF", "mlx4"),
    0x1007: ("ConnectX-3 Pro", "PF", "mlx4"),
    0x1013: ("ConnectX-4", "PF", "mlx5"),
    0x1014: ("ConnectX-4 VF", "VF", "mlx5"),
    0x1015: ("ConnectX-4 Lx", "PF", "mlx5"),
    0x1016: ("ConnectX-4 Lx VF", "VF", "mlx5"),
    0x1017: ("ConnectX-5", "PF", "mlx5"),
    0x1018: ("ConnectX-5 VF", "VF", "mlx5"),
    0x1019: ("ConnectX-5 Ex", "PF", "mlx5"),
    0x101a: ("ConnectX-5 Ex VF", "VF", "mlx5"),
    0x101b: ("ConnectX-6", "PF", "mlx5"),
    0x101c: ("ConnectX-6 VF", "VF", "mlx5"),
    0x101d: ("ConnectX-6 Dx", "PF", "mlx5"),
    0x101e: ("ConnectX VF (mlx5 generic)", "VF", "mlx5"),
    0x101f: ("ConnectX-6 Lx", "PF", "mlx5"),
    0x1021: ("ConnectX-7", "PF", "mlx5"),
    0x1023: ("ConnectX-8", "PF", "mlx5"),
    0xa2d2: ("BlueField", "PF", "mlx5"),
    0xa2d3: ("BlueField VF", "VF", "mlx5"),
    0xa2d6: ("BlueField-2", "PF", "mlx5"),
    0xa2dc: ("BlueField-3", "PF", "mlx5"),
}

GENERIC_VF_DEVICE_ID = 0x101e

# PCI device ID -> marketing name of the NVIDIA data-center and workstation GPUs, for GPUs that nvidia-smi does not
# name (facts from sysfs only). Data: the bracketed names of vendor 10de in the PCI ID Repository's pci.ids
# (https://pci-ids.ucw.cz/, github.com/pciutils/pciids, version 2026.08.22, commit c1c12547), GPL-2.0-or-later or
# BSD-3-Clause; a selection, not the whole list. An ID that is not here stays unnamed rather than guessed.
NVIDIA_GPU_MODELS = {
    0x1db1: "Tesla V100 SXM2 16GB",
    0x1db4: "Tesla V100 PCIe 16GB",
    0x1db5: "Tesla V100 SXM2 32GB",
    0x1db6: "Tesla V100 PCIe 32GB",
    0x1df6: "Tesla V100S PCIe 32GB",
    0x1eb8: "Tesla T4",
    0x20b0: "A100 SXM4 40GB",
    0x20b1: "A100 PCIe 40GB",
    0x20b2: "A100 SXM4 80GB",
    0x20b3: "A100-SXM-64GB",
    0x20b5: "A100 PCIe 80GB",
    0x20b7: "A30 PCIe",
    0x20f1: "A100 PCIe 40GB",
    0x20f3: "A800-SXM4-80GB",
    0x20f5: "A800 80GB PCIe",
    0x2230: "RTX A6000",
    0x2235: "A40",
    0x2236: "A10",
    0x2237: "A10G",
    0x2321: "H100L 94GB",
    0x2322: "H800 PCIe",
    0x2324: "H800",
    0x2329: "H20",
    0x2330: "H100 SXM5 80GB",
    0x2331: "H100 PCIe",
    0x2335: "H200 SXM 141GB",
    0x2339: "H100 SXM5 94GB",
    0x233a: "H800L 94GB",
    0x233b: "H200 NVL",
    0x2342: "GH200 120GB / 480GB",
    0x2348: "GH200 144G HBM3e",
    0x25b6: "A2 / A16",
    0x26b1: "RTX 6000 Ada Generation",
    0x26b5: "L40",
    0x26b9: "L40S",
    0x26ba: "L20",
    0x27b8: "L4",
    0x2901: "B200",
    0x2941: "HGX GB200",
    0x2bb1: "RTX PRO 6000 Blackwell Workstation Edition",
    0x2bb5: "RTX PRO 6000 Blackwell Server Edition",
}


def parse_hex_id(value):
    """'0x1021', '1021', 4129 -> 4129; None or junk -> None."""
    if value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    text = str(value).strip().lower()
    if not text:
        return None
    try:
        return int(text, 16)
    except ValueError:
        return None


def format_hex_id(value, width=4):
    """4129 -> '0x1021' (the form sysfs uses); None -> None."""
    if value is None:
        return None
    return "0x%0*x" % (width, value)


def mellanox_device(device_id):
    """Table entry for a Mellanox PCI device ID as a dict, or None when unknown."""
    entry = MELLANOX_DEVICES.get(parse_hex_id(device_id))
    if entry is None:
        return None
    model, kind, family = entry
    return {"model": model, "function": kind, "family": family}


def mellanox_model_from_hca_type(hca_type):
    """'MT4129' (the infiniband hca_type / ibstat CA type) -> table entry, or None."""
    if not hca_type:
        return None
    if isinstance(hca_type, (bytes, bytearray)):
        hca_type = hca_type.decode("utf-8", "replace")
    text = str(hca_type).strip().upper()
    if not text.startswith("MT") or not text[2:].isdigit():
        return None
    return mellanox_device(int(text[2:]))


def nvidia_gpu_model(device_id):
    """'0x2235' -> 'NVIDIA A40'; None for an ID missing from NVIDIA_GPU_MODELS."""
    name = NVIDIA_GPU_MODELS.get(parse_hex_id(device_id))
    return "NVIDIA " + name if name else None


def vf_model(vf_device_id, pf_model=None):
    """Model name of a VF: the PF's model + ' VF' for the generic mlx5 VF ID when the PF is known."""
    entry = mellanox_device(vf_device_id)
    if parse_hex_id(vf_device_id) == GENERIC_VF_DEVICE_ID and pf_model:
        return pf_model + " VF"
    if entry is not None:
        return entry["model"]
    return (pf_model + " VF") if pf_model else None


def is_gpu_class(pci_class):
    """True for an NVIDIA display (0x0300xx) or 3D controller (0x0302xx) class code."""
    value = parse_hex_id(pci_class)
    if value is None:
        return False
    return (value >> 8) in GPU_CLASS_PREFIXES
