"""gunicorn's settings in the image: `gunicorn --config python:config.gunicorn config.wsgi`.

Its own lines (workers starting, timeouts) go through settings.LOGGING like the
site's; there is no access log, since the site logs each request itself with
its request id (config/logging.py).
"""

import logging
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from django.conf import settings

# Every address of the container, so that nginx's container reaches it:
# docker-compose publishes no port of web's and puts it on the internal edge
# network, which only nginx shares with it.
bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "3"))
accesslog = None
# gunicorn's longest request line (its default is half): a long search or
# filter address reaches the site, which answers what is wrong with it in its
# own words, rather than gunicorn's bare 414 page.
limit_request_line = 8190
# Nothing here drives gunicorn through its control socket (gunicornc).
control_socket_disable = True
logconfig_dict = settings.LOGGING
logging.captureWarnings(True)
