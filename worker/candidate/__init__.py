"""What runs inside a candidate's process: the child-side script, a module per step of a run.

The host never imports these modules but sandbox and values: the candidate's interpreter loads them
by path, from this directory, as top-level modules (child and what it imports: record, lifeline, sandbox,
namespaces, guard, failures, assertions, calls, forked_runs, testfile, bigcodebench_harness, values; and warm
for the zygote), so that each costs it only its cached bytecode. They import nothing but built-in modules and
each other. child.py is where to start reading: its docstring says what each module is.
"""
