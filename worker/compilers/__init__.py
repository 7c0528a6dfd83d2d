"""Compiling once: what a compile made, kept for the same program again (cache.py); what a worker builds once
for its programs to read (prebuilt.py: C++'s precompiled headers, Go's build cache); and compilers kept running,
program after program (persistent.py). worker/judging/helpers/steps.py is their one user."""
