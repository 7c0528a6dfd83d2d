"""Where a user comes in: the command line (cli.py, its flags and what it prints: display.py) and the Python
API (api.py)."""
