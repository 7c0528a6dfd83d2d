"""Judging: what a sample runs as, and how each kind of test decides its verdict.

program (prompt + completion, or the code in a model's answer, run against assertions) and evalplus
(HumanEval+: called on inputs, outputs compared as EvalPlus does); one module per kind of test.
"""
