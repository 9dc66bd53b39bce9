# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NicClusterPolicy component images each NVIDIA Network Operator release ships with.

From each release tag's hack/release.yaml (Mellanox/network-operator v25.1.0, v25.4.0, v26.4.1), the file the release
builds its bundle's relatedImages from. v25.4.0's file names the DOCA driver under nvcr.io/nvstaging; the published
image is the same tag under nvcr.io/nvidia/mellanox, which is what a cluster pulls.

The device plugins and the IPoIB CNI are pinned by digest with the tag kept for reading (``tag@sha256:...``): each
digest is the one the same release's operator bundle lists for that image (bundle/manifests/
nvidia-network-operator.clusterserviceversion.yaml, spec.relatedImages, which hack/release.go --with-sha256 resolves
from hack/release.yaml). The operator joins repository, image and a non-digest version with ':' (pkg/render/render.go
imagePath), giving ``repository/image:tag@sha256:...``, which CRI-O pulls by the digest (cri-o/cri-o#3060).

The DOCA driver stays on a tag: the operator appends the node pool's OS and architecture to a tag
(pkg/state/state_ofed.go mofedImageFormat), so one digest would be one OS's image for every pool; the bundle lists one
digest per OS build (doca-driver-0, -1, ...). It is on the not-yet-pinned list (UNPINNED_DEFAULT_IMAGES).
"""


import re


def _image(repository, image, version):
    return {"repository": repository, "image": image, "version": version}


def _pinned(repository, image, tag, digest):
    return _image(repository, image, "%s@sha256:%s" % (tag, digest))


NETWORK_OPERATOR_RELEASES = {
    (25, 1): {
        "doca_driver": _image("nvcr.io/nvidia/mellanox", "doca-driver", "25.01-0.6.0.0-0"),
        "rdma_shared_device_plugin": _pinned(
            "ghcr.io/mellanox", "k8s-rdma-shared-dev-plugin", "v1.5.2",
            "9f468fdc4449e65e4772575f83aa85840a00f97165f9a00ba34695c91d610fbd"),
        "sriov_device_plugin": _pinned(
            "ghcr.io/k8snetworkplumbingwg", "sriov-network-device-plugin", "v3.9.0",
            "cabce074d10a0f1d62135e2cc5442d65b49094b95b8297fdd024a1a5f461319f"),
        "ipoib_cni": _pinned(
            "ghcr.io/mellanox", "ipoib-cni", "v1.2.1",
            "56f19687b0b956ba45bf079cf3a655b0d1bad0314da9d5ecfe0f4d98ff31fc86"),
    },
    (25, 4): {
        "doca_driver": _image("nvcr.io/nvidia/mellanox", "doca-driver", "25.04-0.6.1.0-2"),
        "rdma_shared_device_plugin": _pinned(
            "ghcr.io/mellanox", "k8s-rdma-shared-dev-plugin", "v1.5.3",
            "1eb5ab7f4b6f0cf89c954cf7ac8eb2e6fb2290a4f5f57417136a5302f20b12c8"),
        "sriov_device_plugin": _pinned(
            "ghcr.io/k8snetworkplumbingwg", "sriov-network-device-plugin", "v3.9.0",
            "cabce074d10a0f1d62135e2cc5442d65b49094b95b8297fdd024a1a5f461319f"),
        "ipoib_cni": _pinned(
            "ghcr.io/mellanox", "ipoib-cni", "v1.2.2",
            "513d88d639a01ef98b65365f711cee7fbaa166137a56245b7ab32818f745418e"),
    },
    (26, 4): {
        "doca_driver": _image("nvcr.io/nvidia/mellanox", "doca-driver", "doca3.4.1-26.04-1.1.0.0-1"),
        "rdma_shared_device_plugin": _pinned(
            "nvcr.io/nvidia/mellanox", "k8s-rdma-shared-dev-plugin", "network-operator-v26.4.1",
            "464970d3197fe982b779c48cce74d90f7563ede5daef834bf169db39ee4541c7"),
        "sriov_device_plugin": _pinned(
            "nvcr.io/nvidia/mellanox", "sriov-network-device-plugin", "network-operator-v26.4.1",
            "c24d0993feb97c0a1952bf30ab51f7452dc57d5846684e481aaa4455cd56e1aa"),
        "ipoib_cni": _pinned(
            "nvcr.io/nvidia/mellanox", "ipoib-cni", "network-operator-v26.4.1",
            "e5eb2d3c746a06a44bad7e8e451ff7a4d14251b1a254f9a411f17dd529c41f0f"),
    },
}

# Default images not pinned by digest, with why (docs/upgrades.md lists them): everything else the collection renders or
# runs by default carries a digest (tests/unit/plugins/module_utils/render/test_image_pins.py).
UNPINNED_DEFAULT_IMAGES = {
    "nvcr.io/nvidia/mellanox/doca-driver": "the operator appends each node pool's OS and architecture to the tag",
    "quay.io/edge-infrastructure/nvidia-tools": "no digest for the 0.1.5 tag in any source this collection can cite",
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
    return {k: dict(v) for k, v in NETWORK_OPERATOR_RELEASES[release_key(version)].items()}
