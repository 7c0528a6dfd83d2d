"""codeexec serve (command.py): SandboxFusion's HTTP API (app.py) and its batches (batch.py), each request a job
of one long-lived run (dispatch.py); and its Python client (client.py)."""
