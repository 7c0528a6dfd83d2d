"""`codeexec serve`: the HTTP service (SandboxFusion's /run_code, and /v1/batch): its flags, the settings they
set, and the server's process (the application itself: producer/service/endpoints.py)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from pydantic import ValidationError

from codeexec.producer.entry import flags
from codeexec.producer.inputs.files import InputError
from codeexec.producer.local.backend import backend
from codeexec.protocol.settings import get_settings

# On SIGTERM, requests in hand get this long to be answered: a /run_code cut short is lost to its client
# (its job still runs, and is forgotten), a batch is not (its client asks for it again).
_GRACE_S = 10
_FLAGS = {"host": "SERVE_HOST", "port": "SERVE_PORT", "max_queued": "SERVE_MAX_QUEUED"}

HELP = "the HTTP service (docs/service.md)"


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="where to listen (default 127.0.0.1; elsewhere needs a token)")
    parser.add_argument("--port", type=int, help="its port (default 8080)")
    parser.add_argument("--token-file", type=Path, help="a file holding the bearer token (or CODEEXEC_SERVE_TOKEN)")
    parser.add_argument("--max-queued", type=int, help="jobs waiting beyond which requests get 504/429 (default 2048)")
    flags.add_workers(parser)


def run(args: argparse.Namespace) -> int:
    """Serve until stopped: on the private Valkey with local workers, or on CODEEXEC_REDIS_URL's Redis
    (with local workers only if --workers says so: the workers may be on other hosts)."""
    import uvicorn

    from codeexec.producer.service.endpoints import Guard, create_app, is_loopback

    for flag, variable in _FLAGS.items():
        if getattr(args, flag) is not None:
            os.environ[f"CODEEXEC_{variable}"] = str(getattr(args, flag))
    if args.token_file is not None:
        try:
            os.environ["CODEEXEC_SERVE_TOKEN"] = args.token_file.read_text().strip()
        except OSError as exc:
            raise InputError(f"{args.token_file}: {exc.strerror}") from None
    get_settings.cache_clear()
    try:
        settings = get_settings()
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(f"the service's settings: {error['loc'][0]}: {error['msg']}") from None
    if settings.serve_token is None and not is_loopback(settings.serve_host):
        raise InputError(
            f"listening on {settings.serve_host} needs a bearer token (--token-file, CODEEXEC_SERVE_TOKEN): "
            "anyone who reaches the port could run programs on the workers"
        )
    for module in ("numpy", "pytest"):
        if importlib.util.find_spec(module) is None:
            print(
                f"codeexec: candidates cannot import {module}: install codeexec with its serve extra "
                "(pip install '.[serve]' in its checkout)",
                file=sys.stderr,
            )
    with backend(settings, args.workers, run_jobs=True) as client:
        url = settings.redis_url or f"unix://{client.connection_pool.connection_kwargs['path']}"
        app = Guard(create_app(settings, url), settings.serve_token, settings.serve_max_body_bytes)
        print(f"serving http://{settings.serve_host}:{settings.serve_port} (POST /run_code, /v1/batch)", flush=True)
        uvicorn.run(
            app,
            host=settings.serve_host,
            port=settings.serve_port,
            log_level="warning",
            timeout_graceful_shutdown=_GRACE_S,
        )
    return 0
