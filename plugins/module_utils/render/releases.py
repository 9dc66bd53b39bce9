# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NicClusterPolicy component images each NVIDIA Network Operator release ships with.

From each release tag's hack/release.yaml (Mellanox/network-operator v25.1.0, v25.4.0, v26.4.1), the file the release
builds its bundle's relatedImages from. v25.4.0's file names the DOCA driver under nvcr.io/nvstaging; the published
image is the same tag under nvcr.io/nvidia/mellanox, which is what a cluster pulls.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re


def _image(repository, image, version):
    return {"repository": repository, "image": image, "version": version}


NETWORK_OPERATOR_RELEASES = {
    (25, 1): {
        "doca_driver": _image("nvcr.io/nvidia/mellanox", "doca-driver", "25.01-0.6.0.0-0"),
        "rdma_shared_device_plugin": _image("ghcr.io/mellanox", "k8s-rdma-shared-dev-plugin", "v1.5.2"),
        "sriov_device_plugin": _image("ghcr.io/k8snetworkplumbingwg", "sriov-network-device-plugin", "v3.9.0"),
        "ipoib_cni": _image("ghcr.io/mellanox", "ipoib-cni", "v1.2.1"),
    },
    (25, 4): {
        "doca_driver": _image("nvcr.io/nvidia/mellanox", "doca-driver", "25.04-0.6.1.0-2"),
        "rdma_shared_device_plugin": _image("ghcr.io/mellanox", "k8s-rdma-shared-dev-plugin", "v1.5.3"),
        "sriov_device_plugin": _image("ghcr.io/k8snetworkplumbingwg", "sriov-network-device-plugin", "v3.9.0"),
        "ipoib_cni": _image("ghcr.io/mellanox", "ipoib-cni", "v1.2.2"),
    },
    (26, 4): {
        "doca_driver": _image("nvcr.io/nvidia/mellanox", "doca-driver", "doca3.4.1-26.04-1.1.0.0-1"),
        "rdma_shared_device_plugin": _image("nvcr.io/nvidia/mellanox", "k8s-rdma-shared-dev-plugin", "network-operator-v26.4.1"),
        "sriov_device_plugin": _image("nvcr.io/nvidia/mellanox", "sriov-network-device-plugin", "network-operator-v26.4.1"),
        "ipoib_cni": _image("nvcr.io/nvidia/mellanox", "ipoib-cni", "network-operator-v26.4.1"),
    },
}


def minor_of(version):
    """'24.9.2' or 'v25.3' -> (24, 9); '' or not a version -> None (meaning the newest supported)."""
    found = re.match(r"^v?(\d+)\.(\d+)", version or "")
    return (int(found.group(1)), int(found.group(2))) if found else None


def release_key(version):
    """The release whose images an operator ``version`` uses: the newest known release not newer than its
    major.minor, the oldest for an older one, the newest when ``version`` is empty."""
    wanted = minor_of(version)
    known = sorted(NETWORK_OPERATOR_RELEASES)
    if wanted is None:
        return known[-1]
    older = [key for key in known if key <= wanted]
    return older[-1] if older else known[0]


def network_operator_images(version):
    """{component: {repository, image, version}} of the Network Operator release ``version`` belongs to."""
    return dict((k, dict(v)) for k, v in NETWORK_OPERATOR_RELEASES[release_key(version)].items())
