# How often Snakemake's benchmark records (every rule's `benchmark:` file)
# sample a running job, in Snakemake's main process.
#
# Snakemake 9 samples each job every 0.5 s for its first 30 samples, then every
# 30 s. A sample reads the memory of every process of the job through psutil's
# memory_full_info, whose page-table walk costs 33 ms of system time on a
# 1.8 GB model process (AMD EPYC Zen 4). Every 5 s samples a 30-s job 6 times
# instead of 30: a forced causal_intervention job (23 CPU s) cost the main
# process 0.5-0.9 CPU s less. Each job's log ends with its exact CPU seconds
# and peak RSS (conflictlab.logs), which the records only sample. Snakemake reads the
# interval at every sample, so setting it here, where the workflow is parsed,
# is enough; tests/test_benchmark_records.py fails if that stops being so.

import snakemake.benchmark

BENCHMARK_SAMPLE_SECONDS = 5.0
snakemake.benchmark.BENCHMARK_INTERVAL_SHORT = BENCHMARK_SAMPLE_SECONDS
