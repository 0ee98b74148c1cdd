"""Discovery: paper vectors (tf-idf and an OpenAI-compatible endpoint), similar
papers on the paper page, For-you recommendations, dismissals and digests."""

import datetime
from io import StringIO

import numpy as np
import pytest
from django.core import mail
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import selectors, services, views
from accounts.models import Profile, RecommendationSent
from catalog.models import Paper, SimilarPaper
from catalog.signals import papers_stored
from discovery import for_you, neighbours, vectors
from discovery.models import DismissedPaper, PaperVector, Recommendation
from tests.accounts_factories import SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.factories import PaperFactory, TagFactory
from tests.fake_embeddings_server import fake_embeddings_server

TOPICS = {
    "proteins": (
        "protein folding structure prediction amino acid residues contact maps",
        "folding proteins with residue contact prediction and amino acid structure",
    ),
    "galaxies": (
        "galaxy cluster redshift survey dark matter halo telescope observations",
        "dark matter halos in galaxy clusters from redshift surveys and telescope data",
    ),
    "compilers": (
        "compiler optimization register allocation loop unrolling intermediate representation",
        "register allocation and loop optimization passes in an optimizing compiler",
    ),
}


@pytest.fixture(autouse=True)
def vector_dir(settings, tmp_path, monkeypatch):
    settings.VECTOR_DIR = tmp_path / "vectors"
    settings.EMBEDDING_BACKEND = "tfidf"
    settings.EMBEDDING_DIMENSIONS = 8
    neighbours._loaded.clear()
    # A topic's papers below are one text told apart by a number: copies by any
    # measure, which lists would otherwise show once. Tests about copies set it back.
    monkeypatch.setattr(neighbours, "NEAR_COPY", 2.0)
    return settings.VECTOR_DIR


def topic_papers(*, per_topic: int = 4, days_ago: int = 2) -> dict[str, list[Paper]]:
    """Papers on three topics that share no words, each topic's tag on its papers."""
    found = {}
    for topic, (title, abstract) in TOPICS.items():
        tag = TagFactory(name=topic.capitalize(), slug=topic)
        found[topic] = [
            PaperFactory(
                title=f"{title} part {n}",
                abstract=f"{abstract}. Variant {n} of the study.",
                tags=[tag] if n % 2 == 0 else [],
                published_at=timezone.now() - datetime.timedelta(days=days_ago, hours=n),
            )
            for n in range(per_topic)
        ]
    return found


def build() -> None:
    vectors.build_vectors(show_progress=False)
    neighbours.build_all(show_progress=False)


# Vectors


def test_tfidf_vectors_are_unit_length_and_close_within_a_topic(vector_dir):
    texts = [f"{t} {a}" for t, a in TOPICS.values()] + [TOPICS["proteins"][1] + " more"]
    vectors.fit_tfidf(texts=texts, directory=vector_dir, dimensions=8)
    backend = vectors.TfidfBackend(directory=vector_dir)
    embedded = backend.embed(texts)
    assert embedded.vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(embedded.vectors, axis=1), 1.0, atol=1e-5)
    likeness = embedded.vectors @ embedded.vectors.T
    assert likeness[0, 3] > likeness[0, 1] and likeness[0, 3] > likeness[0, 2]
    assert "protein" in embedded.terms[0] or "folding" in embedded.terms[0]
    assert backend.key.startswith("tfidf:")


def test_an_unfitted_model_says_so(vector_dir):
    with pytest.raises(vectors.NotFitted):
        vectors.TfidfBackend(directory=vector_dir)


def openai_backend(server, *, attempts: int = 2, batch_size: int = 8):
    return vectors.OpenAIEmbeddingBackend(
        base_url=server.base_url,
        api_key="test",
        model="fake-embed",
        dimensions=16,
        timeout=5,
        max_retries=0,
        attempts=attempts,
        batch_size=batch_size,
    )


def test_openai_compatible_backend_embeds_in_batches():
    with fake_embeddings_server(dimensions=16) as server:
        backend = openai_backend(server, batch_size=2)
        embedded = backend.embed(["dark matter halo", "dark matter survey", "register pass"])
    assert embedded.vectors.shape == (3, 16)
    assert np.allclose(np.linalg.norm(embedded.vectors, axis=1), 1.0, atol=1e-5)
    assert [len(r["input"]) for r in server.requests] == [2, 1]
    assert server.requests[0]["model"] == "fake-embed"
    assert embedded.terms[0] == ["dark", "halo", "matter"]
    likeness = embedded.vectors @ embedded.vectors.T
    assert likeness[0, 1] > likeness[0, 2]


@pytest.mark.parametrize("bad", ["wrong_size", "too_few", "malformed", "not_numbers", "zeros"])
def test_a_bad_answer_is_asked_again(bad):
    with fake_embeddings_server(dimensions=16) as server:
        server.answer(bad)
        embedded = openai_backend(server).embed(["dark matter halo", "register pass"])
    assert embedded.vectors.shape == (2, 16)
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("bad", "reported"),
    [
        ("wrong_size", "has 15 dimensions, not 16"),
        ("too_few", "expected 2 embeddings, got 1"),
        ("not_numbers", "is not numbers"),
        ("zeros", "all zeros"),
        ("malformed", "unreadable answer"),
    ],
)
def test_bad_answers_every_time_fail_and_say_why(bad, reported, caplog):
    with fake_embeddings_server(dimensions=16) as server:
        server.answer(bad, bad)
        with pytest.raises(vectors.VectorsFailed, match="in 2 attempts") as failure:
            openai_backend(server).embed(["dark matter halo", "register pass"])
    assert reported in str(failure.value)
    assert "Invalid embeddings from fake-embed" in caplog.text


def test_an_unreachable_or_refusing_endpoint():
    with fake_embeddings_server(dimensions=16) as server:
        server.answer("rate_limited")
        with pytest.raises(vectors.VectorsUnavailable):
            openai_backend(server).embed(["x y"])
        server.answer("unauthorized")
        with pytest.raises(vectors.VectorsFailed, match="HTTP 401"):
            openai_backend(server).embed(["x y"])


@pytest.mark.django_db
def test_build_vectors_with_the_openai_backend_stores_float32_bytes(settings):
    papers = topic_papers(per_topic=2)
    with fake_embeddings_server(dimensions=16) as server:
        settings.EMBEDDING_BACKEND = "openai"
        settings.EMBEDDING_BASE_URL = server.base_url
        settings.EMBEDDING_MODEL = "fake-embed"
        settings.EMBEDDING_DIMENSIONS = 16
        settings.EMBEDDING_MAX_RETRIES = 0
        run = vectors.build_vectors(show_progress=False)
    assert run.stored == 6 and not run.fitted
    row = PaperVector.objects.get(paper=papers["galaxies"][0])
    assert row.key == "openai:fake-embed:16" and row.dimensions == 16
    assert len(bytes(row.vector)) == 16 * 4
    # Nothing is missing any more: a second run asks the endpoint nothing.
    assert vectors.build_vectors(show_progress=False).stored == 0


# Similar papers


@pytest.mark.django_db
def test_neighbours_are_papers_of_the_same_topic():
    papers = topic_papers()
    build()
    for topic, members in papers.items():
        for paper in members:
            rows = list(SimilarPaper.objects.filter(paper=paper).order_by("rank"))
            assert len(rows) == 10  # every other paper, at most SIMILAR_PAPERS
            top = {row.similar_id for row in rows[:3]}
            assert top == {p.pk for p in members if p != paper}, topic
            assert rows[0].score > rows[-1].score
    row = SimilarPaper.objects.filter(paper=papers["proteins"][0], rank=1).get()
    assert set(row.terms) & {"protein", "folding", "residue", "amino", "contact", "structure"}


@pytest.mark.django_db
def test_above_the_exact_limit_an_inverted_file_finds_the_same_topics(monkeypatch):
    monkeypatch.setattr(neighbours, "EXACT_SEARCH_LIMIT", 5)
    papers = topic_papers()
    vectors.build_vectors(show_progress=False)
    run = neighbours.build_all(show_progress=False)
    assert run.index == "IndexIVFFlat"
    for topic, found in papers.items():
        similar = SimilarPaper.objects.filter(paper=found[0]).order_by("rank")
        assert {row.similar_id for row in similar[:3]} == {p.pk for p in found[1:]}, topic
    # A new paper is searched in the saved inverted file.
    neighbours._loaded.clear()
    title, abstract = TOPICS["compilers"]
    new = PaperFactory(title=title, abstract=abstract)
    neighbours.neighbours_for(paper_ids=[new.pk])
    assert neighbours.load_index()[0].nprobe == neighbours.IVF_PROBES
    nearest = SimilarPaper.objects.filter(paper=new).order_by("rank")[:4]
    assert {row.similar_id for row in nearest} == {p.pk for p in papers["compilers"]}


@pytest.mark.django_db
def test_the_paper_page_shows_similar_papers_with_why_in_the_same_queries(
    client, django_assert_num_queries
):
    papers = topic_papers()
    build()
    paper = papers["galaxies"][0]
    hidden = papers["galaxies"][1]
    Paper.objects.filter(pk=hidden.pk).update(is_visible=False)
    Paper.objects.filter(pk=paper.pk).update(author_list=["Vera Rubin", "Kent Ford"])
    Paper.objects.filter(pk=papers["galaxies"][2].pk).update(author_list=["Vera Rubin"])
    # The paper with categories, tags, code links, summaries, images, similar papers.
    with django_assert_num_queries(6):
        response = client.get(paper.get_absolute_url())
    html = response.content.decode()
    assert "Similar papers" in html
    similar = response.context["similar"]
    # The other two visible papers of the topic come first.
    assert {entry.paper.pk for entry in similar[:2]} == {p.pk for p in papers["galaxies"][2:]}
    assert hidden.pk not in {entry.paper.pk for entry in similar}
    tagged = next(e for e in similar if e.paper.pk == papers["galaxies"][2].pk)
    assert [t.slug for t in tagged.shared_tags] == ["galaxies"]
    # What they share, words first: the words both weigh most, authors, tags.
    assert tagged.terms and tagged.shared_authors == ["Vera Rubin"]
    assert (
        f"Both about {', '.join(tagged.terms)} · Both by Vera Rubin · Both tagged Galaxies" in html
    )
    untagged = next(e for e in similar if e.paper.pk == papers["galaxies"][3].pk)
    assert untagged.terms and not untagged.shared_authors and not untagged.shared_tags
    assert f"Both about {', '.join(untagged.terms)}</p>" in html


@pytest.mark.django_db
def test_a_stored_paper_gets_its_neighbours_at_once(settings, django_capture_on_commit_callbacks):
    papers = topic_papers()
    build()
    settings.DISCOVERY_AUTO = True
    new = PaperFactory(
        title="compiler register allocation for loop unrolling",
        abstract="an optimizing compiler pass with intermediate representation",
    )
    with django_capture_on_commit_callbacks(execute=True):
        papers_stored.send(sender=Paper, paper_ids=[new.pk], bulk=False)
    rows = list(SimilarPaper.objects.filter(paper=new).order_by("rank"))
    assert rows, "no neighbours for the new paper"
    assert {row.similar_id for row in rows[:4]} == {p.pk for p in papers["compilers"]}
    # A bulk import leaves it to the nightly build.
    other = PaperFactory(title="galaxy redshift", abstract="dark matter")
    with django_capture_on_commit_callbacks(execute=True):
        papers_stored.send(sender=Paper, paper_ids=[other.pk], bulk=True)
    assert not SimilarPaper.objects.filter(paper=other).exists()


@pytest.mark.django_db
def test_why_names_a_shared_word_once_whatever_its_form():
    topic_papers()
    verifiers = [
        PaperFactory(
            title=f"Verifiers that check reasoning, study {n}",
            abstract=f"A verifier checks each reasoning step; verifiers trained on traces "
            f"reward the policy. Variant {n}.",
        )
        for n in range(3)
    ]
    build()

    rows = SimilarPaper.objects.filter(paper=verifiers[0], similar__in=verifiers[1:])
    assert rows.count() == 2
    for row in rows:
        assert len({"verifier", "verifiers"} & set(row.terms)) == 1
        assert len({"check", "checks"} & set(row.terms)) <= 1
    assert neighbours.shared_terms(["verifiers", "policy", "verifier"], ["verifier"]) == [
        "verifiers"
    ]


@pytest.mark.django_db
def test_near_copies_are_listed_once(monkeypatch):
    monkeypatch.setattr(neighbours, "NEAR_COPY", 0.9)
    papers = topic_papers()
    build()
    keys = vectors.current_key()
    for members in papers.values():
        for paper in members:
            listed = list(
                SimilarPaper.objects.filter(paper=paper).values_list("similar_id", flat=True)
            )
            _, unit = vectors.vectors_of(paper_ids=listed, key=keys)
            likeness = unit @ unit.T
            np.fill_diagonal(likeness, 0)
            assert likeness.max() < 0.9
            # One of its topic's copies, the best, then the other topics' papers.
            assert len({p.pk for p in members} & set(listed)) == 1


@pytest.mark.django_db
def test_for_you_lists_one_of_near_copies(monkeypatch):
    monkeypatch.setattr(neighbours, "NEAR_COPY", 0.9)
    papers = topic_papers()
    build()
    user = reader_of(papers, saved=[papers["proteins"][0]])
    services.refresh_recommendations()
    recommended = set(Recommendation.objects.filter(user=user).values_list("paper_id", flat=True))
    # The saved paper's three copies: the best of them only.
    assert len(recommended & {p.pk for p in papers["proteins"][1:]}) == 1


@pytest.mark.django_db
def test_a_new_paper_joins_the_lists_of_older_papers_like_it(
    settings, django_capture_on_commit_callbacks
):
    papers = topic_papers(per_topic=6)
    build()
    settings.DISCOVERY_AUTO = True
    older = papers["galaxies"][0]
    assert SimilarPaper.objects.filter(paper=older).count() == 10
    new = PaperFactory(
        title="galaxy cluster redshift survey with telescope observations",
        abstract="dark matter halos in galaxy clusters from a redshift survey",
    )
    with django_capture_on_commit_callbacks(execute=True):
        papers_stored.send(sender=Paper, paper_ids=[new.pk], bulk=False)
    for paper in papers["galaxies"]:
        listed = SimilarPaper.objects.filter(paper=paper).order_by("rank")
        assert new.pk in {row.similar_id for row in listed[:6]}, paper.title
        assert listed.count() == 10
    # Papers of other topics keep their lists as they were.
    assert not SimilarPaper.objects.filter(paper=papers["proteins"][0], similar=new).exists()


@pytest.mark.django_db
def test_the_model_is_refitted_when_the_catalog_grows_by_a_quarter(
    settings, django_capture_on_commit_callbacks
):
    topic_papers(per_topic=4)
    build()
    first = vectors.current_key()
    assert vectors.refit_reason() == ""
    settings.DISCOVERY_AUTO = True
    added = [
        PaperFactory(title=f"galaxy lensing survey {n}", abstract="telescope redshift halos")
        for n in range(3)
    ]
    # 15 papers of the 12 fitted on: a quarter more, not past it.
    with django_capture_on_commit_callbacks(execute=True):
        papers_stored.send(sender=Paper, paper_ids=[p.pk for p in added], bulk=False)
    assert vectors.current_key() == first
    one_more = PaperFactory(title="galaxy lensing survey", abstract="quasar spectra")
    assert vectors.refit_reason() == "the catalog grew from 12 to 16 papers"
    with django_capture_on_commit_callbacks(execute=True):
        papers_stored.send(sender=Paper, paper_ids=[one_more.pk], bulk=False)
    # Refitted on the 16, and every paper's vector and neighbours written again.
    assert vectors.current_key() != first
    assert vectors.refit_reason() == ""
    assert set(PaperVector.objects.values_list("key", flat=True)) == {vectors.current_key()}
    assert SimilarPaper.objects.filter(paper=one_more).exists()


@pytest.mark.django_db
def test_the_model_is_refitted_when_new_papers_bring_words_it_never_saw(settings):
    topic_papers(per_topic=30)
    build()
    fitted = vectors.TfidfBackend(directory=settings.VECTOR_DIR)
    # Their words, but those in over half of them ("part", "variant", "study").
    assert fitted.fitted_papers == 90 and fitted.fitted_coverage > 0.8
    later = timezone.now() + datetime.timedelta(minutes=1)
    # Twenty papers of a field the fit never saw: 110 of the 90 fitted on is no growth rule.
    for n in range(20):
        PaperFactory(
            title=f"quantum error correction with surface codes {n}",
            abstract="logical qubits, stabilizer measurements and decoders for fault tolerance",
            added_at=later,
        )
    reason = vectors.refit_reason()
    assert reason.startswith("the 20 newest papers know 0% of their words")
    vectors.build_vectors(show_progress=False)
    assert vectors.refit_reason() == ""


@pytest.mark.django_db
def test_a_new_paper_without_a_saved_index_is_compared_with_every_vector():
    papers = topic_papers(per_topic=2)
    vectors.build_vectors(show_progress=False)
    new = PaperFactory(title="galaxy cluster redshift survey", abstract="dark matter halo")
    assert neighbours.neighbours_for(paper_ids=[new.pk]) > 0
    best = SimilarPaper.objects.get(paper=new, rank=1)
    assert best.similar_id in {p.pk for p in papers["galaxies"]}


@pytest.mark.django_db
def test_build_vectors_command():
    topic_papers(per_topic=2)
    out = StringIO()
    call_command("build_vectors", "--all", stdout=out, verbosity=0)
    text = out.getvalue()
    assert "Fitted the tf-idf model" in text and "Stored 6 vectors" in text
    assert "Similar papers of 6 papers: 30 rows (IndexFlatIP)" in text
    out = StringIO()
    call_command("build_vectors", "--missing", "--no-neighbours", stdout=out, verbosity=0)
    assert "Stored 0 vectors" in out.getvalue()


# For you


def reader_of(papers, *, saved=(), follows=()):
    user = UserFactory()
    for paper in saved:
        SavedPaperFactory(user=user, paper=paper)
    for tag in follows:
        SubscriptionFactory(user=user, tag=tag)
    return user


@pytest.mark.django_db
def test_for_you_ranks_papers_like_the_saved_ones_and_says_why(client):
    papers = topic_papers()
    build()
    saved = papers["proteins"][0]
    user = reader_of(papers, saved=[saved])
    run = services.refresh_recommendations()
    assert run.readers == 1
    client.force_login(user)
    response = client.get("/feed/for-you/")
    listed = list(response.context["page"].object_list)
    assert saved not in listed  # never what the reader saved
    assert {p.pk for p in listed[:3]} == {p.pk for p in papers["proteins"][1:]}
    html = response.content.decode()
    assert f'Because you saved <a href="{saved.get_absolute_url()}">' in html
    assert "Not interested" in html
    assert "Refreshed every night" in html


@pytest.mark.django_db
def test_for_you_follows_tags_and_keeps_to_the_period(client):
    papers = topic_papers()
    old = PaperFactory(
        title=TOPICS["galaxies"][0],
        abstract=TOPICS["galaxies"][1],
        published_at=timezone.now() - datetime.timedelta(days=90),
    )
    build()
    tag = papers["galaxies"][0].tags.get()
    user = reader_of(papers, follows=[tag])
    services.refresh_recommendations()
    client.force_login(user)
    listed = list(client.get("/feed/for-you/").context["page"].object_list)
    assert {p.pk for p in listed[:4]} == {p.pk for p in papers["galaxies"]}
    assert listed[0].because_tag_slug == "galaxies"
    assert old not in listed  # the default period is 30 days
    wider = list(client.get("/feed/for-you/?period=365d").context["page"].object_list)
    assert old in wider


@pytest.mark.django_db
def test_for_you_page_queries(client, django_assert_num_queries):
    papers = topic_papers()
    build()
    user = reader_of(papers, saved=[papers["compilers"][0]])
    services.refresh_recommendations()
    client.force_login(user)
    client.get("/feed/for-you/")
    # session, user, profile, the papers with their count, tags, filter
    # choices, the reader's ids
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/feed/for-you/")
    assert len(response.context["page"].object_list) > 3
    assert len(queries) <= 8, [q["sql"][:80] for q in queries]


@pytest.mark.django_db
def test_readers_ranked_together_get_the_lists_they_get_alone(monkeypatch):
    papers = topic_papers(per_topic=6)
    build()
    tags = {topic: found[0].tags.get() for topic, found in papers.items()}
    readers = [
        reader_of(papers, saved=[papers["proteins"][0]]),
        reader_of(papers, follows=[tags["galaxies"]]),
        reader_of(papers, saved=[papers["compilers"][1]], follows=[tags["proteins"]]),
        reader_of(papers, saved=papers["galaxies"][:2], follows=[tags["compilers"]]),
    ]
    DismissedPaper.objects.create(user=readers[3], paper=papers["galaxies"][3])

    def lists():
        return {
            user.pk: list(
                Recommendation.objects.filter(user=user)
                .order_by("-score", "paper_id")
                .values_list("paper_id", "because_paper_id", "because_tag_id")
            )
            for user in readers
        }

    services.refresh_recommendations()
    together = lists()
    # One reader at a time, and the window's papers a few at a time.
    monkeypatch.setattr(for_you, "READERS_AT_ONCE", 1)
    monkeypatch.setattr(for_you, "BLOCK_FLOATS", 10)
    services.refresh_recommendations()
    assert lists() == together
    assert all(together.values())
    saved_or_dismissed = {papers["galaxies"][0].pk, papers["galaxies"][1].pk}
    saved_or_dismissed.add(papers["galaxies"][3].pk)
    assert not saved_or_dismissed & {row[0] for row in together[readers[3].pk]}


@pytest.mark.django_db
def test_every_saved_paper_is_left_out_not_only_the_seeds(monkeypatch):
    papers = topic_papers()
    build()
    user = reader_of(papers, saved=papers["proteins"][:3])
    monkeypatch.setattr(for_you, "SEEDS", 1)
    services.refresh_recommendations()
    recommended = set(Recommendation.objects.filter(user=user).values_list("paper_id", flat=True))
    assert recommended
    assert not recommended & {paper.pk for paper in papers["proteins"][:3]}


@pytest.mark.django_db
def test_not_interested_hides_the_paper_and_pushes_similar_ones_down(client):
    papers = topic_papers()
    build()
    user = reader_of(
        papers, saved=[papers["proteins"][0]], follows=[papers["galaxies"][0].tags.get()]
    )
    services.refresh_recommendations()
    client.force_login(user)
    dismissed = papers["proteins"][1]
    like_it = papers["proteins"][2]
    before = Recommendation.objects.get(user=user, paper=like_it).score
    response = client.post(f"/feed/for-you/{dismissed.pk}/not-interested/")
    assert response.status_code == 302 and response["Location"] == "/feed/for-you/"
    assert DismissedPaper.objects.filter(user=user, paper=dismissed).exists()
    assert Recommendation.objects.get(user=user, paper=like_it).score < before
    listed = list(client.get("/feed/for-you/").context["page"].object_list)
    assert dismissed not in listed
    # The nightly run remembers it.
    services.refresh_recommendations()
    assert not Recommendation.objects.filter(user=user, paper=dismissed).exists()
    assert Recommendation.objects.get(user=user, paper=like_it).score < before
    # Only by POST, only a visible paper.
    assert client.get(f"/feed/for-you/{dismissed.pk}/not-interested/").status_code == 405
    assert client.post("/feed/for-you/999999/not-interested/").status_code == 404


@pytest.mark.django_db
def test_for_you_needs_a_login_and_a_first_visit_computes_the_list(
    client, django_capture_on_commit_callbacks
):
    papers = topic_papers()
    build()
    assert client.get("/feed/for-you/").status_code == 302
    user = reader_of(papers, saved=[papers["compilers"][0]])
    client.force_login(user)
    with django_capture_on_commit_callbacks(execute=True):
        first = client.get("/feed/for-you/")
    assert "being prepared" in first.content.decode()
    assert Profile.objects.get(user=user).recommended_at is not None
    assert Recommendation.objects.filter(user=user).exists()


@pytest.mark.django_db
def test_for_you_counts_its_window_back_from_the_newest_papers_it_can_offer(client):
    # The newest papers are older than FOR_YOU_DAYS (the demo, a mirror whose
    # ingest stopped): counted from today, the window would hold nothing.
    papers = topic_papers(days_ago=500)
    too_old = PaperFactory(
        title=TOPICS["proteins"][0],
        abstract=TOPICS["proteins"][1],
        published_at=timezone.now() - datetime.timedelta(days=500 + 400),
    )
    build()
    saved = papers["proteins"][0]
    user = reader_of(papers, saved=[saved])

    services.refresh_recommendations()

    recommended = set(Recommendation.objects.filter(user=user).values_list("paper_id", flat=True))
    assert {p.pk for p in papers["proteins"][1:]} <= recommended
    assert too_old.pk not in recommended
    profile = Profile.objects.get(user=user)
    assert profile.recommended_until == papers["compilers"][0].published_at
    client.force_login(user)
    response = client.get("/feed/for-you/")
    # The tab opens on a period holding them (any time, here) instead of an empty month.
    listed = list(response.context["page"].object_list)
    assert {p.pk for p in listed[:3]} == {p.pk for p in papers["proteins"][1:]}
    assert "No papers match these filters" not in response.content.decode()
    assert "No papers match these filters" in (
        client.get("/feed/for-you/?period=30d").content.decode()
    )


@pytest.mark.django_db
def test_for_you_opens_on_the_narrowest_period_holding_the_newest_it_could_offer():
    now = timezone.now()
    assert views.opening_period(until=None) == "30d"
    assert views.opening_period(until=now - datetime.timedelta(hours=3)) == "30d"
    assert views.opening_period(until=now - datetime.timedelta(days=40)) == "365d"
    assert views.opening_period(until=now - datetime.timedelta(days=400)) is None


@pytest.mark.django_db
@pytest.mark.parametrize("interest", ["save", "follow"])
def test_a_first_save_or_follow_computes_for_you_at_once_with_a_note_meanwhile(
    client, django_capture_on_commit_callbacks, interest
):
    papers = topic_papers()
    build()
    user = UserFactory()
    client.force_login(user)
    # A first visit with nothing to go on is computed, and finds nothing.
    with django_capture_on_commit_callbacks(execute=True):
        client.get("/feed/for-you/")
    assert not Recommendation.objects.filter(user=user).exists()

    with django_capture_on_commit_callbacks() as committed:
        if interest == "save":
            client.post(f"/saved/{papers['proteins'][0].pk}/save/")
        else:
            client.post("/tags/galaxies/subscribe/")
    # Once the interest is committed, the computation is asked for and queued.
    with django_capture_on_commit_callbacks() as queued:
        for callback in committed:
            callback()
    [compute] = queued_tasks(queued)
    # Queued, not done: the tab says it is being prepared (or, holding a saved
    # paper's likes already, updated), and asks for nothing more.
    with django_capture_on_commit_callbacks() as more:
        waiting = client.get("/feed/for-you/").content.decode()
    note = "being updated" if interest == "save" else "being prepared"
    assert note in waiting and more == []
    # Meanwhile a saved paper's likes are there already, recommended for it.
    early = Recommendation.objects.filter(user=user)
    if interest == "save":
        assert {row.because_paper_id for row in early} == {papers["proteins"][0].pk}
    else:
        assert not early.exists()
    compute()

    response = client.get("/feed/for-you/")
    assert "being prepared" not in response.content.decode()
    assert "Refreshed every night" in response.content.decode()
    listed = list(response.context["page"].object_list)
    topic = "proteins" if interest == "save" else "galaxies"
    assert {p.pk for p in listed[:3]} <= {p.pk for p in papers[topic]}

    # A second save, among the first few, updates the list; meanwhile it says so.
    with django_capture_on_commit_callbacks() as committed:
        client.post(f"/saved/{papers['compilers'][0].pk}/save/")
    with django_capture_on_commit_callbacks() as queued:
        for callback in committed:
            callback()
    assert len(queued_tasks(queued)) == 1
    assert "being updated" in client.get("/feed/for-you/").content.decode()


def queued_tasks(callbacks):
    """The background tasks among on-commit callbacks (core.background.send's)."""
    return [c for c in callbacks if getattr(c, "__qualname__", "").startswith("send.")]


@pytest.mark.django_db
def test_a_save_after_the_first_few_brings_papers_like_it_into_for_you_at_once(
    client, django_capture_on_commit_callbacks
):
    papers = topic_papers()
    build()
    first = [*papers["proteins"], papers["galaxies"][0]][: services.FIRST_INTERESTS]
    user = reader_of(papers, saved=first)
    services.refresh_recommendations()
    computed = Profile.objects.get(user=user).recommended_at
    recommended = Recommendation.objects.filter(user=user).order_by("-score").first().paper
    client.force_login(user)
    assert "being prepared" not in client.get("/feed/for-you/").content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/saved/{recommended.pk}/save/")
    # A saved paper is never recommended, at once.
    assert recommended not in client.get("/feed/for-you/").context["page"].object_list

    compiler = papers["compilers"][0]
    with django_capture_on_commit_callbacks(execute=True) as queued:
        client.post(f"/saved/{compiler.pk}/save/")
    # No ranking of the whole list for a reader with a list: the papers most like
    # the saved one come in at once, recommended for it, as likely as they are.
    assert not queued_tasks(queued)
    assert Profile.objects.get(user=user).recommended_at == computed
    response = client.get("/feed/for-you/")
    shown = response.context["page"].object_list
    others = [p for p in papers["compilers"] if p != compiler]
    assert set(others) <= set(shown[:4]), [p.title for p in shown]
    likeness = dict(SimilarPaper.objects.filter(paper=compiler).values_list("similar_id", "score"))
    for paper in others:
        row = Recommendation.objects.get(user=user, paper=paper)
        assert row.because_paper == compiler and row.score == likeness[paper.pk]
    assert f'Because you saved <a href="{compiler.get_absolute_url()}">' in (
        response.content.decode()
    )


@pytest.mark.django_db
def test_a_followed_tag_has_for_you_ranked_again_in_the_background(
    client, django_capture_on_commit_callbacks
):
    papers = topic_papers()
    build()
    user = reader_of(papers, saved=papers["proteins"][: services.FIRST_INTERESTS])
    services.refresh_recommendations()
    tag = papers["compilers"][0].tags.get()
    assert not Recommendation.objects.filter(user=user, because_tag=tag).exists()

    with django_capture_on_commit_callbacks(execute=True):
        SubscriptionFactory(user=user, tag=tag)

    assert Recommendation.objects.filter(user=user, because_tag=tag).exists()


# Digests


@pytest.mark.django_db
def test_digests_recommend_at_most_five_and_never_the_same_paper_twice():
    papers = topic_papers(per_topic=6)
    build()
    user = reader_of(papers, saved=[papers["proteins"][0], papers["galaxies"][0]])
    SubscriptionFactory(user=user, tag=papers["compilers"][0].tags.get())
    Profile.objects.filter(user=user).update(
        last_digest_at=timezone.now() - datetime.timedelta(days=2)
    )
    services.refresh_recommendations()
    services.send_due_digests()
    [message] = mail.outbox
    first = set(RecommendationSent.objects.filter(user=user).values_list("paper_id", flat=True))
    assert len(first) == 5
    assert "Recommended for you" in message.body and "Because you saved" in message.body
    # Papers the tag subscription brings are not recommended again.
    assert not first & {p.pk for p in papers["compilers"]}
    Profile.objects.filter(user=user).update(
        last_digest_at=timezone.now() - datetime.timedelta(days=2)
    )
    services.send_due_digests()
    second = set(RecommendationSent.objects.filter(user=user).values_list("paper_id", flat=True))
    assert len(second) == 10 and not (second - first) & first
    later = selectors.digest(
        user=user, since=timezone.now() - datetime.timedelta(days=1), until=timezone.now()
    )
    assert not {row.paper_id for row in later.recommended} & second


@pytest.mark.django_db(transaction=True)
def test_the_demo_shows_similar_papers_from_its_first_load(settings, client):
    settings.DISCOVERY_AUTO = True
    call_command("load_demo", stdout=StringIO())
    paper = Paper.objects.get(arxiv_id="2505.15034")
    assert SimilarPaper.objects.filter(paper=paper).count() == 10
    html = client.get(paper.get_absolute_url()).content.decode()
    assert "Similar papers" in html and "Both tagged Reinforcement Learning" in html


@pytest.mark.django_db(transaction=True)
def test_on_the_demo_a_reader_who_saves_five_papers_gets_for_you_at_once(settings, client):
    settings.DISCOVERY_AUTO = True
    call_command("load_demo", stdout=StringIO())
    user = UserFactory()
    saved = list(Paper.objects.filter(tags__slug="verifiers").order_by("pk")[:5])
    for paper in saved:
        services.save_paper(user=user, paper=paper)

    client.force_login(user)
    response = client.get("/feed/for-you/")

    html = response.content.decode()
    listed = list(response.context["page"].object_list)
    assert len(listed) >= 10 and not set(listed) & set(saved)
    assert "Because you saved" in html and "No papers match" not in html
    assert "being prepared" not in html


@pytest.mark.django_db
def test_a_first_visit_with_nothing_saved_or_followed_is_computed_once(
    client, django_capture_on_commit_callbacks
):
    topic_papers(per_topic=2)
    build()
    user = UserFactory()
    client.force_login(user)
    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = client.get("/feed/for-you/")
    assert len(queued) == 1 and response.context["page"].paginator.count == 0
    assert Profile.objects.get(user=user).recommended_at is not None
    with django_capture_on_commit_callbacks(execute=True) as queued:
        client.get("/feed/for-you/")
    assert queued == []
