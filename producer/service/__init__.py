"""The HTTP service (`codeexec serve`: producer/entry/commands/serve.py): SandboxFusion's HTTP API
(endpoints.py) and its batches (batch.py), each request a job of one long-lived run (dispatch.py); and its
Python client (client.py)."""
