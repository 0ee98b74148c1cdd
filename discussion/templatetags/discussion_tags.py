from django import template
from django.utils.safestring import SafeString

from discussion.models import Comment
from discussion.rendering import ReaderActions

register = template.Library()


@register.simple_tag(takes_context=True)
def discussion_comment(context: template.Context, comment: Comment) -> SafeString:
    """The comment, shared by every reader, with this reader's actions
    (the page's ReaderActions, discussion/rendering.py)."""
    actions: ReaderActions = context["actions"]
    return actions.comment(comment)


@register.simple_tag(takes_context=True)
def reply_form(context: template.Context, comment: Comment) -> SafeString:
    """The form of a reply to the thread the comment starts."""
    actions: ReaderActions = context["actions"]
    return actions.reply_form(comment)
