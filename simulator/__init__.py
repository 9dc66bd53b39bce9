"""Simulated OpenShift API server (aiohttp on loopback) for tests; see docs/simulator.md."""

from .cluster import SimulatedCluster
from .errors import ApiError
from .store import ResourceType, Store

__all__ = ["SimulatedCluster", "ApiError", "ResourceType", "Store"]
