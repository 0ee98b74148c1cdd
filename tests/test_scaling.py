"""What keeps the catalog fast at arXiv's size: capped counts, deep pages, the
catalog cache, the read replica router and autovacuum's settings."""

import pytest
from django.db import connection
from django.test import RequestFactory

from catalog import cache as catalog_cache
from catalog import page_cache, pagination
from catalog.models import Paper
from config.db_routers import PrimaryAfterWriteMiddleware, ReplicaRouter
from tests.factories import PaperFactory, TagFactory


def listed_titles(response) -> list[str]:
    return [paper.title for paper in response.context["page"].object_list]


@pytest.fixture
def small_exact_limit(monkeypatch):
    monkeypatch.setattr(pagination, "EXACT_COUNT_LIMIT", 5)


@pytest.mark.django_db
def test_counts_past_the_limit_are_shown_as_about_with_no_last_link(
    client, small_exact_limit, monkeypatch
):
    monkeypatch.setattr(pagination, "estimated_count", lambda rows: 1000)
    PaperFactory.create_batch(30)

    response = client.get("/?page=2")

    html = response.content.decode()
    assert "About 1,000 papers" in html
    assert "Page 2 of about 50" in html
    assert "Last »" not in html
    assert len(listed_titles(response)) == 10


@pytest.mark.django_db
def test_a_lone_tag_or_category_is_totalled_from_its_maintained_count(
    client, small_exact_limit, monkeypatch, settings
):
    settings.PAPERS_PER_PAGE = 5
    monkeypatch.setattr(pagination, "estimated_count", lambda rows: 1000)
    tag = TagFactory(slug="agents")
    papers = PaperFactory.create_batch(12, tags=[tag])
    category = papers[0].primary_category
    papers[1].is_visible = False
    papers[1].save()

    for path in ("/?tag=agents", "/tags/agents/", "/?sort=trending&tag=agents"):
        html = client.get(path).content.decode()
        assert "11 papers" in html, path
        assert "Last »" in html, path
    in_category = Paper.objects.visible().filter(categories=category).count()
    assert f"{in_category} paper" in client.get(f"/categories/{category.code}/").content.decode()
    # Narrowed further, the list is counted.
    narrowed = client.get("/tags/agents/?q=nowhere").content.decode()
    assert "0 results for “nowhere”" in narrowed and "11 papers" not in narrowed


@pytest.mark.django_db
def test_counts_within_the_limit_stay_exact(client, small_exact_limit):
    PaperFactory.create_batch(4)

    html = client.get("/").content.decode()

    assert "4 papers" in html
    assert "About" not in html


@pytest.mark.django_db
def test_a_page_past_an_estimate_falls_back_to_the_real_last_page(client, small_exact_limit):
    papers = PaperFactory.create_batch(25)

    response = client.get("/?page=9")

    assert response.status_code == 200
    assert "There are only 2 pages; showing the last one." in response.content.decode()
    oldest_five = sorted(papers, key=lambda p: (p.listed_at, p.pk))[:5]
    assert listed_titles(response) == [p.title for p in reversed(oldest_five)]


@pytest.mark.django_db
def test_deep_pages_keep_order_filters_and_query_count(client, django_assert_num_queries):
    tag = TagFactory()
    tagged = PaperFactory.create_batch(45, tags=[tag])
    PaperFactory.create_batch(5)
    newest_first = sorted(tagged, key=lambda p: (p.listed_at, p.pk), reverse=True)

    # the chosen tag, the page's rows (their ids walked in a subquery) with
    # their count, tags, the filter form's choices
    with django_assert_num_queries(4):
        response = client.get(f"/?tag={tag.slug}&page=2")

    assert listed_titles(response) == [p.title for p in newest_first[20:40]]
    assert listed_titles(client.get(f"/?tag={tag.slug}&page=3")) == [
        p.title for p in newest_first[40:]
    ]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the estimate is PostgreSQL's")
@pytest.mark.django_db
def test_the_estimate_is_the_planners_rounded_to_two_figures():
    PaperFactory.create_batch(3)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_paper")

    estimate = pagination.estimated_count(Paper.objects.visible().values("pk"))

    assert 1 <= estimate <= 100


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the estimate is PostgreSQL's")
@pytest.mark.django_db
def test_the_estimate_is_asked_for_once_per_catalog_version(redis_cache, django_assert_num_queries):
    PaperFactory.create_batch(3)
    rows = Paper.objects.visible().values("pk")
    first = pagination.estimated_count(rows)

    with django_assert_num_queries(0):
        assert pagination.estimated_count(rows) == first
    catalog_cache.bump_catalog_version()
    with django_assert_num_queries(1):  # EXPLAIN
        pagination.estimated_count(rows)


@pytest.mark.django_db
def test_anonymous_pages_come_from_the_cache_until_the_catalog_changes(
    client, redis_cache, django_assert_num_queries
):
    paper = PaperFactory(title="First title")
    client.get("/")

    with django_assert_num_queries(0):
        cached = client.get("/")
    assert "First title" in cached.content.decode()

    paper.title = "Second title"
    paper.save()
    # The bump waits for the commit, which the test's transaction never makes.
    catalog_cache.bump_catalog_version()

    assert "Second title" in client.get("/").content.decode()


@pytest.mark.django_db
def test_a_cached_page_carries_each_readers_own_csrf_token(client, redis_cache):
    PaperFactory()
    first = client.get("/").content.decode()
    other = type(client)()

    second = other.get("/").content.decode()

    tokens = [page_cache.CSRF_INPUT.findall(page) for page in (first, second)]
    assert tokens[0] and tokens[1]
    assert page_cache.CSRF_PLACEHOLDER not in second
    assert set(tokens[0]).isdisjoint(tokens[1])
    assert other.cookies["csrftoken"].value


@pytest.mark.django_db
def test_logged_in_readers_never_get_the_anonymous_page(client, redis_cache, django_user_model):
    PaperFactory()
    client.get("/")
    user = django_user_model.objects.create_user("reader", "reader@example.org", "pw-long-enough")
    client.force_login(user)

    assert 'action="/accounts/logout/"' in client.get("/").content.decode()


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's autovacuum")
def test_autovacuum_visits_the_catalog_after_a_few_thousand_changes_indexes_included():
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'catalog_paper'")
        (options,) = cursor.fetchone()

    assert "autovacuum_vacuum_scale_factor=0.002" in options
    assert "autovacuum_vacuum_insert_scale_factor=0.002" in options
    assert "vacuum_index_cleanup=on" in options


@pytest.mark.django_db
def test_a_redis_that_is_down_only_costs_the_cache(client, settings):
    settings.CACHES = {
        **settings.CACHES,
        "catalog": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.2},
        },
    }
    PaperFactory(title="Still served")

    response = client.get("/")

    assert response.status_code == 200
    assert "Still served" in response.content.decode()
    catalog_cache.bump_catalog_version()


def test_reads_go_to_the_replica_and_writes_to_the_primary():
    router = ReplicaRouter()

    assert router.db_for_read(Paper) == "replica"
    assert router.db_for_write(Paper) == "default"
    assert router.allow_migrate("replica", "catalog") is False


def test_a_client_reads_from_the_primary_after_writing(settings):
    settings.REPLICA_STICKY_SECONDS = 15
    router, seen = ReplicaRouter(), []

    def view(request):
        from django.http import HttpResponse

        seen.append(router.db_for_read(Paper))
        return HttpResponse()

    middleware = PrimaryAfterWriteMiddleware(view)
    factory = RequestFactory()
    posted = middleware(factory.post("/saved/1/save/"))
    middleware(factory.get("/"))
    sticky = factory.get("/")
    sticky.COOKIES[PrimaryAfterWriteMiddleware.COOKIE] = posted.cookies["use_primary"].value
    middleware(sticky)

    assert seen == ["default", "replica", "default"]
    assert posted.cookies["use_primary"]["max-age"] == 15
    assert router.db_for_read(Paper) == "replica"
