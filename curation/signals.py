from django.dispatch import receiver

from curation import suggestions
from ingest import links


@receiver(links.link_request_finished, dispatch_uid="curation_settle_suggestions")
def settle_suggestions(sender, request, **kwargs) -> None:
    suggestions.settle_suggestions(request=request)
