# Entry points. Each target sources hack/env.sh (virtualenv, collection path, shared directories).
#   make test    every test and quality gate (hack/test.sh)
#   make site    the main job against the simulated cluster (hack/site.sh)
#   make bench   every benchmark, printed as tables and written to docs/benchmarks.md
#                (BENCH_CONFIGS=1,3 for some configurations only; NAIVE_DELAY=10 for the baseline polls;
#                BENCH_SCALE=2,100 for the GPU worker counts of the scale table)
SHELL := /bin/bash
BENCH_CONFIGS ?= 1,2,3,4,5,6
NAIVE_DELAY ?= 10
BENCH_SCALE ?= 2,100,1000

.PHONY: bench test site

bench:
	source hack/env.sh && python tests/bench/run_all.py --configs "$(BENCH_CONFIGS)" --naive-delay "$(NAIVE_DELAY)" --scale-nodes "$(BENCH_SCALE)" --write

test:
	hack/test.sh

site:
	hack/site.sh
