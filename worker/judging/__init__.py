"""Judging: what a sample runs as (sample_program.py), and how each kind of test decides its verdict: one module
per kind in kinds/, found by its table (kind.py says what a kind is), the helpers several judges share in
helpers/ (docs/architecture.md, "The kinds of test").
"""
