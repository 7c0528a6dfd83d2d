"""Judging: what a sample runs as (program.py), and how each kind of test decides its verdict: one module
per kind, found through kinds.py's table (docs/architecture.md, "The kinds of test").
"""
