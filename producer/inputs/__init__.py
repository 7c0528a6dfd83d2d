"""Reading problems and samples, every input checked whole before anything is stored (files.py names the file
and line of what is wrong): problems.py (the problem sets, and a problems file's records, each read by the
shape that fits it: shapes/, a module per shape, which builds its kind's tests) and samples.py.
"""
