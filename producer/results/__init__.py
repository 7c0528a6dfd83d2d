"""What a run came to: pass@k and reports, comparisons, per-sample lines, and the reference harnesses' own
results files (EvalPlus's, BigCodeBench's), all read from Redis through producer/run.py's Run."""
