from django.apps import AppConfig


class DiscussionConfig(AppConfig):
    name = "discussion"
    verbose_name = "Discussion"
