from django.contrib import admin

from accounts.forms import AdminLoginForm
from accounts.models import Profile, SavedPaper, Subscription

# The admin's log-in shares the site's throttle and lock-out.
admin.site.login_form = AdminLoginForm


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "digest_frequency", "last_digest_at", "feed_seen_at", "display_name"]
    list_filter = ["digest_frequency", "public_profile"]
    search_fields = ["user__email", "user__username", "display_name"]
    raw_id_fields = ["user"]
    readonly_fields = ["feed_seen_at", "feed_new_since", "feed_token"]


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["user", "tag", "category", "created_at"]
    list_filter = ["tag"]
    search_fields = ["user__email", "tag__name", "category__code"]
    raw_id_fields = ["user", "tag", "category"]
    list_select_related = ["user", "tag", "category"]


@admin.register(SavedPaper)
class SavedPaperAdmin(admin.ModelAdmin):
    list_display = ["user", "paper", "created_at"]
    search_fields = ["user__email", "paper__title", "paper__arxiv_id"]
    raw_id_fields = ["user", "paper"]
    list_select_related = ["user", "paper"]
