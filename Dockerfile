# syntax=docker/dockerfile:1
# The site's image: `docker compose up --build` (docker-compose.yml) runs it as
# web, workers and beat.

# Wheels for exactly the locked packages, each download checked against its hash.
FROM python:3.11-slim AS wheels
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
COPY requirements.lock /tmp/
RUN pip wheel --require-hashes --wheel-dir /wheels -r /tmp/requirements.lock

# The runtime: those wheels installed, no build tools, an unprivileged user.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN groupadd --gid 10001 papershelf \
 && useradd --uid 10001 --gid papershelf --no-create-home --home-dir /app \
      --shell /usr/sbin/nologin papershelf
RUN --mount=type=bind,from=wheels,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --no-deps /wheels/*.whl && pip check
WORKDIR /app
COPY . .
# Code and static files stay root's, read-only to the site; uploaded media
# (preview images) and the workers' vectors (VECTOR_DIR) are the site's own,
# in the volumes mounted on /app/media and /app/data/vectors.
RUN SECRET_KEY=collectstatic python manage.py collectstatic --noinput \
 && mkdir -p media data/vectors && chown 10001:10001 media data/vectors
# By number, so that a runtime can tell it is not root without reading /etc/passwd.
USER 10001:10001
EXPOSE 8000
CMD ["gunicorn", "--config", "python:config.gunicorn", "config.wsgi"]
