"""GET throughput and latency of the simulated API server on loopback.

    python -m simulator.bench [--seconds 3] [--threads 4] [--client kubernetes|aiohttp]

`kubernetes`: the real kubernetes Python client (CoreV1Api.read_namespaced_config_map) in threads of a separate
process, as ansible modules and pytest clients in other processes see it.
`aiohttp`: an aiohttp client in this process with concurrent requests (near the server's own ceiling).
The server runs in this process (its own thread and loop), as in the tests.
"""

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import threading
import time

from .cluster import SimulatedCluster


def _percentiles(samples_ms):
    samples = sorted(samples_ms)

    def pct(p):
        return samples[min(len(samples) - 1, int(round(p / 100.0 * (len(samples) - 1))))]

    return {"p50": pct(50), "p90": pct(90), "p99": pct(99), "max": samples[-1], "mean": statistics.fmean(samples)}


def _kubernetes_worker(kubeconfig, seconds, threads):
    from kubernetes import client, config

    latencies = []
    lock = threading.Lock()
    apis = [client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig)) for _thread in range(threads)]
    for api in apis:  # connections set up outside the measurement
        api.read_namespaced_config_map("bench", "default")
    deadline = time.perf_counter() + seconds

    def worker(api):
        mine = []
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            # Raw JSON as the DynamicClient (kubernetes.core) reads it, without the generated-model decoding.
            json.loads(api.read_namespaced_config_map("bench", "default", _preload_content=False).data)
            mine.append((time.perf_counter() - t0) * 1000.0)
        with lock:
            latencies.extend(mine)

    started = time.perf_counter()
    pool = [threading.Thread(target=worker, args=(api,)) for api in apis]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return latencies, time.perf_counter() - started


def bench_kubernetes(cluster, seconds, threads):
    out = subprocess.run([sys.executable, "-m", "simulator.bench", "--worker", cluster.kubeconfig, "--seconds",
                          str(seconds), "--threads", str(threads)], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    return data["latencies"], data["elapsed"]


def bench_aiohttp(cluster, seconds, concurrency):
    import aiohttp

    async def run():
        latencies = []
        deadline = time.perf_counter() + seconds
        headers = {"Authorization": "Bearer " + cluster.token}
        url = cluster.url + "/api/v1/namespaces/default/configmaps/bench"
        async with aiohttp.ClientSession(headers=headers) as session:
            async def worker():
                while time.perf_counter() < deadline:
                    t0 = time.perf_counter()
                    async with session.get(url) as resp:
                        await resp.read()
                        assert resp.status == 200
                    latencies.append((time.perf_counter() - t0) * 1000.0)

            started = time.perf_counter()
            await asyncio.gather(*(worker() for _worker in range(concurrency)))
            return latencies, time.perf_counter() - started

    return asyncio.run(run())


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m simulator.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--threads", type=int, default=4, help="client threads / concurrent requests")
    parser.add_argument("--client", choices=("kubernetes", "aiohttp", "both"), default="both")
    parser.add_argument("--worker", metavar="KUBECONFIG", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        latencies, elapsed = _kubernetes_worker(args.worker, args.seconds, args.threads)
        print(json.dumps({"latencies": latencies, "elapsed": elapsed}))
        return 0
    with SimulatedCluster(profile=None, controllers=False) as cluster:
        cluster.store.create(cluster.store.find_type("", "v1", "configmaps"),
                             {"metadata": {"name": "bench", "namespace": "default"}, "data": {"k": "v" * 64}})
        clients = ("kubernetes", "aiohttp") if args.client == "both" else (args.client,)
        for name in clients:
            fn = bench_kubernetes if name == "kubernetes" else bench_aiohttp
            latencies, elapsed = fn(cluster, args.seconds, args.threads)
            p = _percentiles(latencies)
            print("%-10s GET configmap: %6d requests in %.2fs = %7.1f req/s; latency ms p50 %.2f p90 %.2f p99 %.2f "
                  "max %.2f (%d concurrent)" % (name, len(latencies), elapsed, len(latencies) / elapsed, p["p50"],
                                                p["p90"], p["p99"], p["max"], args.threads))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
