# The codeexec worker image: `codeexec worker` against the Redis in CODEEXEC_REDIS_URL.
# Candidates run as this image's unprivileged user, in fresh `python -I` interpreters; the image is
# meant to run with a read-only root filesystem, no capabilities and no-new-privileges (see
# docker-compose.yml). It is still not a security boundary for hostile code: see docs/security.md.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/codeexec
# The package codeexec: this root's __init__.py, with producer/ and worker/ (pyproject.toml maps them).
COPY pyproject.toml README.md __init__.py py.typed ./
COPY protocol ./protocol
COPY worker ./worker
COPY producer ./producer
# Non-editable, with the monitoring extra so the same image serves the flower profile. Byte-compile
# now: the root filesystem is read-only at run time, and every candidate imports worker/candidate/.
RUN pip install '.[monitor]' && python -m compileall -q /usr/local/lib/python3.11/site-packages/codeexec

# The toolchains of programs in other languages (docs/languages.md), Debian's (and npm's, where Debian has
# none: SandboxFusion's tsx and Jest): none unless asked for, e.g.
#   docker build --build-arg LANGUAGES=all .        or        --build-arg LANGUAGES="cpp java javascript"
# (codeexec's names of them: `codeexec doctor` lists them); each language's packages are its module's.
ARG LANGUAGES=""
RUN if [ -n "$LANGUAGES" ]; then \
        packages=$(python -c "from codeexec.worker.languages import packages; print(packages('$LANGUAGES'))") && \
        npm=$(python -c "from codeexec.worker.languages import npm_packages; print(npm_packages('$LANGUAGES'))") && \
        apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages && \
        if [ -n "$npm" ]; then \
            { command -v npm || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends npm; } && \
            npm install -g --no-fund --no-audit $npm && npm cache clean --force; \
        fi && \
        rm -rf /var/lib/apt/lists/*; \
    fi

# A fixed, unprivileged user (uid 10001): candidates run as it too.
RUN useradd --uid 10001 --no-create-home --home-dir /tmp --shell /usr/sbin/nologin codeexec
USER 10001:10001
ENV HOME=/tmp TMPDIR=/tmp

CMD ["codeexec", "worker"]
