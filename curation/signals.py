from typing import Any

from django.dispatch import receiver

from curation import suggestions
from ingest import links
from ingest.models import LinkRequest


@receiver(links.link_request_finished, dispatch_uid="curation_settle_suggestions")
def settle_suggestions(sender: object, request: LinkRequest, **kwargs: Any) -> None:
    suggestions.settle_suggestions(request=request)
