from django.http import HttpRequest, HttpResponse
from ninja.openapi.views import openapi_view

from api.api import api
from core.http import safe_methods


@safe_methods
def docs(request: HttpRequest) -> HttpResponse:
    """The interactive docs (Swagger UI, served from ninja's static files) of /api/v1/."""
    return openapi_view(request, api)
