# SPDX-License-Identifier: MIT
"""The benchmark's report: REPORT.md (and PNG plots, when matplotlib is present) from rtbench's CSVs.

    python3 bench/report.py [--no-plots | --plots a.png,b.png] [--partial REASON] [RESULTS_DIR]
    python3 bench/report.py --parse-target DIR     (tools/target-bench.sh: target_*.csv from DIR/target/*.out)

RESULTS_DIR defaults to results/latest (what ./bench.sh writes). One package: common.py (reading,
number formatting, tables, run bookkeeping, plot styles -- shared by every section), core.py (the
summary and the sections below), stellwag.py, fma.py, trace.py, layout.py, target.py (one study
each).

The summary comes first: the status and scale of each experiment (plan.csv, experiments.csv), the
targets with their verdicts, one headline table per study; the details follow, every heading with
its scale. An experiment planned but not complete says "interrupted -- not measured in this run";
one not planned "not run at this scale (./bench.sh --full)"; without plan.csv every CSV present is
taken as complete at scale "unknown". allocators.csv says which allocators are ours (thicker lines in
the plots) and their family (the wait-free tree's variants for the Stellwag section).

Reads what `rtbench run all --csv DIR` and bench/callgrind_check.sh wrote: clock.csv, churn.csv,
small.csv, churn_cdf.csv, small_cdf.csv, memfrag.csv, inscount.csv, inscount_memfrag.csv,
inscount_selftest.csv, callgrind.csv, masmano_time.csv, masmano_frag.csv, masmano_test4.csv,
masmano_fig4.csv, masmano_instr.csv, masmano_fig3.csv, worst.csv, hardening.csv (cost of each
RT_HARDENING level), stellwag.csv, stellwag_cdf.csv (the Stellwag
section: bench/report_stellwag.py), fma.csv, fma_instr.csv, fma_cdf.csv (the FMA 1998 section:
bench/report_fma.py), trace.csv, trace_programs.csv (real programs recorded and replayed:
trace.py), layout.csv (fragmentation per block layout: layout.py), target_runs.csv, target_alloc.csv, target_memstress.csv, target_memstress_bins.csv,
target_memfrag.csv, target_worst.csv (the on-target section: bench/report_target.py, from
tools/target-bench.sh), and what `tools/footprint.sh --csv` wrote:
footprint.csv, footprint_alloc.csv, footprint_control.csv, footprint_config.csv. Missing files (without plan.csv) leave their section out (the
footprint's says "not measured"). Every table is preceded by the run's header (machine, compiler, flags,
seed, date), as doc/benchmark.md, "How to read the report" says; the footprint's by its cross compiler's.
Plots: memfrag_probes.png, memfrag_cycles.png, memfrag_instructions.png, churn_malloc_cdf.png,
small_malloc_cdf.png, masmano_fig3.png, masmano_fig4.png, masmano_fig5.png, stellwag_cdf_I.png,
stellwag_cdf_II.png, stellwag_cdf_III.png, stellwag_cdf_IV.png, fma_pages.png, fma_cdf.png,
target_memstress_bins.png, target_memfrag.png, trace_heap.png, trace_instructions.png.
"""
