"""What runs inside a candidate's process: the child-side script, split by section.

The host never imports these modules but sandbox and values: the candidate's interpreter loads them
by path, from this directory, as top-level modules (child, execute, sandbox, namespaces, values, stdin_tests for
stdin tests, testfile and bigcodebench_harness for test files, and warm for the zygote), so that each
costs it only its cached bytecode. They import nothing but built-in modules and each other. child.py
is where to start reading.
"""
