"""The candidate's process, host side: start it (a fresh interpreter, or a fork of the zygote), watch
it against its deadline and caps, judge what it sends, and kill its whole tree.

runner (run_candidate) → watch (the poll loop over its record, stdout and stderr) → timelimit (what
it is charged) and split (which assertions the host compares); zygote, proctree and protections
beside them. What runs inside the process is in codeexec.worker.candidate.
"""
