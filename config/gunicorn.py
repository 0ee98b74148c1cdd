"""gunicorn's settings in the image: `gunicorn --config python:config.gunicorn config.wsgi`.

Its own lines (workers starting, timeouts) go through settings.LOGGING like the
site's; there is no access log, since the site logs each request itself with
its request id (config/logging.py).
"""

import logging
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from django.conf import settings

bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "3"))
accesslog = None
# Nothing here drives gunicorn through its control socket (gunicornc).
control_socket_disable = True
logconfig_dict = settings.LOGGING
logging.captureWarnings(True)
