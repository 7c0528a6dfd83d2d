# The codeexec worker image: `codeexec worker` against the Redis in CODEEXEC_REDIS_URL.
# Candidates run as this image's unprivileged user, in fresh `python -I` interpreters; the image is
# meant to run with a read-only root filesystem, no capabilities and no-new-privileges (see
# docker-compose.yml). It is still not a security boundary for hostile code: see the README.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/codeexec
COPY pyproject.toml README.md ./
COPY worker ./worker
COPY producer ./producer
# Non-editable, with the monitoring extra so the same image serves the flower profile. Byte-compile
# now: the root filesystem is read-only at run time, and every candidate imports worker/child.py.
RUN pip install '.[monitor]' && python -m compileall -q /usr/local/lib/python3.11/site-packages/worker

# A fixed, unprivileged user (uid 10001): candidates run as it too.
RUN useradd --uid 10001 --no-create-home --home-dir /tmp --shell /usr/sbin/nologin codeexec
USER 10001:10001
ENV HOME=/tmp TMPDIR=/tmp

CMD ["codeexec", "worker"]
