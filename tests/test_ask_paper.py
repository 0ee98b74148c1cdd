"""Asking a paper: passages found in its stored text, the model's answer from
them streamed as it is written, every quote checked against the text before
the answer is shown or kept, and the reader's and the site's limits."""

import json
import os
import threading
import time

import pytest
import requests
from django.core.cache import cache
from django.test import Client

from answers import model
from answers.models import Answer, AnswerDay
from answers.passages import best_passages
from answers.quotes import Refused, check
from catalog.models import FullText
from discovery import search, vectors
from enrichment.fulltext import ParsedSection, ParsedText, store_fulltext
from tests.accounts_factories import UserFactory
from tests.factories import PaperFactory
from tests.fake_llm_server import running_fake_llm

pytestmark = pytest.mark.django_db

QUESTION = "How much does StepCheck improve accuracy on GSM8K?"
# The passage the question finds first, as the model sees it numbered.
GSM8K = "StepCheck improves accuracy by 7.2 points over self-consistency on GSM8K."
GOOD = (
    "StepCheck raises accuracy on GSM8K by 7.2 points "
    '[1: "improves accuracy by 7.2   points over\nself-consistency"].'
)
INVENTED = 'StepCheck doubles accuracy [1: "doubles accuracy on every benchmark"].'
STREAM = {"HTTP_ACCEPT": "text/event-stream"}


def stored_paper():
    paper = PaperFactory(title="StepCheck: verifying reasoning step by step")
    parsed = ParsedText(
        source=FullText.Source.HTML,
        sections=[
            ParsedSection(
                heading="1 Introduction",
                level=1,
                paragraphs=[
                    "Large language models often fail at multi-step arithmetic.",
                    "We propose StepCheck, a verifier trained on ten thousand reasoning traces.",
                ],
            ),
            ParsedSection(
                heading="4 Experiments",
                level=1,
                paragraphs=[GSM8K, "Most verification errors occur in the first two steps."],
            ),
        ],
    )
    store_fulltext(paper=paper, parsed=parsed, pictures=[])
    FullText.objects.filter(paper=paper).update(version=1)
    return paper


@pytest.fixture
def paper():
    return stored_paper()


@pytest.fixture
def reader(client):
    cache.clear()  # the reader's question count starts at nothing
    user = UserFactory()
    client.force_login(user)
    yield user
    cache.clear()


def ask(client, paper, question=QUESTION, **headers):
    return client.post(f"/ask/{paper.pk}/", {"question": question}, **headers)


def events(response) -> list[tuple[str, dict]]:
    text = b"".join(response.streaming_content).decode()
    parsed = []
    for block in text.split("\n\n"):
        if block:
            name, data = block.split("\n")
            parsed.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return parsed


def test_the_paper_page_offers_the_question_to_readers_of_a_paper_with_text(client, paper, reader):
    page = client.get(paper.get_absolute_url()).content.decode()

    assert '<h2 id="ask-title">Ask the paper</h2>' in page
    assert f'action="/ask/{paper.pk}/"' in page and 'name="question"' in page
    assert "js/ask" in page


def test_anonymous_readers_are_asked_to_log_in(client, paper):
    page = client.get(paper.get_absolute_url()).content.decode()

    assert 'name="question"' not in page
    assert f'href="/accounts/login/?next=/papers/{paper.arxiv_id}/">Log in</a> to ask' in page


def test_a_paper_without_text_says_it_is_not_available_yet(client, reader):
    paper = PaperFactory()

    page = client.get(paper.get_absolute_url()).content.decode()
    refused = ask(client, paper)
    streamed = ask(client, paper, **STREAM)

    assert "The paper's text is not available yet: questions can be asked" in page
    assert 'name="question"' not in page
    assert refused.status_code == streamed.status_code == 409
    assert "The paper's text is not available yet: questions can be" in refused.content.decode()
    assert "The paper&#x27;s text is not available yet." in streamed.content.decode()


def test_the_read_view_gives_each_paragraph_its_anchor(client, paper):
    page = client.get(f"/papers/{paper.arxiv_id}/read/").content.decode()

    assert f'<p id="section-2-paragraph-1">{GSM8K}</p>' in page
    assert '<p id="section-1-paragraph-2">We propose StepCheck' in page


def test_passages_are_the_paragraphs_sharing_the_questions_words_best_first(paper):
    passages = best_passages(paper=paper, question=QUESTION)

    assert (passages[0].number, passages[0].section, passages[0].paragraph) == (1, 1, 0)
    assert passages[0].text == GSM8K and passages[0].anchor == "section-2-paragraph-1"
    # Every paragraph naming StepCheck, none of the others.
    assert {p.anchor for p in passages} == {"section-2-paragraph-1", "section-1-paragraph-2"}
    assert best_passages(paper=paper, question="the of and?") == []


def test_with_the_sites_text_vectors_a_passage_close_in_meaning_is_found_too(settings, tmp_path):
    # The tf-idf model discovery fits on the catalog, as in the list's hybrid search.
    settings.VECTOR_DIR, settings.EMBEDDING_BACKEND = tmp_path, "tfidf"
    settings.EMBEDDING_DIMENSIONS = 8
    search._tfidf.clear()
    topics = {
        "Protein folding with deep networks": "Amino acid chains fold into stable structures",
        "Galaxy surveys and redshift": "Telescopes measure the light of distant galaxies",
        "Compiler optimisation passes": "Register allocation and loop unrolling speed programs",
    }
    for title, abstract in topics.items():
        for n in range(4):
            PaperFactory(title=f"{title} {n}", abstract=f"{abstract}, variant {n}.")
    paper = PaperFactory()
    parsed = ParsedText(
        source=FullText.Source.PDF,
        sections=[
            ParsedSection(heading="", level=1, paragraphs=[f"{a}." for a in topics.values()])
        ],
    )
    store_fulltext(paper=paper, parsed=parsed, pictures=[])
    question = "Which protein?"
    # No paragraph holds the word.
    assert best_passages(paper=paper, question=question) == []

    vectors.build_vectors(show_progress=False)
    found = best_passages(paper=paper, question=question)

    assert [passage.text for passage in found] == ["Amino acid chains fold into stable structures."]


def test_an_answer_whose_quotes_are_in_the_text_is_streamed_shown_and_kept(
    client, paper, reader, fake_llm
):
    fake_llm.say(GOOD)

    response = ask(client, paper, **STREAM)
    got = events(response)

    assert response["Content-Type"] == "text/event-stream; charset=utf-8"
    assert response["X-Accel-Buffering"] == "no"
    assert [name for name, _ in got[:-1]] == ["delta"] * (len(got) - 1)
    assert "".join(data["text"] for _, data in got[:-1]) == GOOD
    name, done = got[-1]
    assert name == "done"
    link = f'<a href="/papers/{paper.arxiv_id}/read/#section-2-paragraph-1">'
    assert (
        f'<q class="answer-quote">{link}improves accuracy by 7.2 points over '
        'self-consistency</a></q>&nbsp;<span class="answer-source">[1]</span>'
    ) in done["html"]
    assert "StepCheck raises accuracy on GSM8K by 7.2 points" in done["html"]
    assert "fake-model-7b" in done["html"]
    # The model was given the numbered passages and nothing else to go on.
    (request,) = fake_llm.requests
    assert request["stream"] is True
    assert f"[1] (4 Experiments)\n{GSM8K}" in request["messages"][1]["content"]
    assert request["messages"][1]["content"].endswith(f"Question: {QUESTION}")
    kept = Answer.objects.get()
    assert (kept.paper, kept.version, kept.status) == (paper, 1, Answer.Status.ANSWERED)
    assert kept.question_key == "how much does stepcheck improve accuracy on gsm8k"
    assert kept.passages[0] == [1, 0, "4 Experiments"]


def test_the_answer_streams_before_the_model_has_finished(client, paper, reader, fake_llm):
    fake_llm.say(GOOD)
    fake_llm.hold = threading.Event()

    chunks = iter(ask(client, paper, **STREAM).streaming_content)
    first = next(chunks).decode()

    # The model has sent its first words and waits: they are already out.
    assert first.startswith("event: delta\n")
    assert json.loads(first.split("data: ", 1)[1])["text"] == GOOD[:12]
    assert not Answer.objects.exists()
    fake_llm.hold.set()
    rest = b"".join(chunks).decode()
    assert rest.rstrip().split("\n\n")[-1].startswith("event: done\n")
    assert Answer.objects.count() == 1


def test_an_event_stream_is_not_compressed(client, paper, reader, fake_llm):
    fake_llm.say(GOOD)

    response = ask(client, paper, HTTP_ACCEPT_ENCODING="gzip", **STREAM)

    assert not response.has_header("Content-Encoding")
    assert events(response)[-1][0] == "done"


@pytest.mark.parametrize(
    "written",
    [
        INVENTED,
        # A real quote, but of a passage the model was not given.
        f'StepCheck helps [9: "{GSM8K[:20]}"].',
        # A claim with no quote after it.
        GOOD + " It also works on code.",
        # No quote at all.
        "StepCheck improves accuracy by 7.2 points.",
    ],
)
def test_an_answer_with_a_quote_not_in_the_text_is_refused_for_the_passages(
    client, paper, reader, fake_llm, written
):
    fake_llm.say(written)

    name, done = events(ask(client, paper, **STREAM))[-1]

    assert name == "done"
    assert "quoted words that are not in the paper, so it is not shown" in done["html"]
    assert "answer-quote" not in done["html"]
    # The reader gets the passages, the question's words marked.
    assert (
        f'<a href="/papers/{paper.arxiv_id}/read/#section-2-paragraph-1">4 Experiments</a>'
        in done["html"]
    )
    assert "<mark>StepCheck improves accuracy</mark>" in done["html"]
    assert not Answer.objects.exists()


def test_quotes_are_checked_verbatim_but_for_whitespace(paper):
    passages = best_passages(paper=paper, question=QUESTION)

    checked = check('It gains [1: "by 7.2\tpoints  over"].', passages=passages)
    assert [piece.text for piece in checked.pieces] == ["It gains ", "by 7.2 points over"]
    for changed in ("by 7.3 points", "By 7.2 points", "by 7.2 pts", "by 7.2points", ""):
        with pytest.raises(Refused):
            check(f'It gains [1: "{changed}"].', passages=passages)


def test_a_question_the_passages_do_not_answer_is_said_so_and_kept(client, paper, reader, fake_llm):
    fake_llm.say("NOT_IN_TEXT")

    done = events(ask(client, paper, "Does StepCheck need a GPU?", **STREAM))[-1][1]

    assert "The paper's text does not answer this" in done["html"]
    assert Answer.objects.get().status == Answer.Status.NOT_IN_TEXT


def test_a_question_no_passage_shares_a_word_with_asks_no_model(client, paper, reader, fake_llm):
    done = events(ask(client, paper, "Who funded the zebrafish?", **STREAM))[-1][1]

    assert "The paper's text does not answer this" in done["html"]
    assert fake_llm.requests == []
    assert not AnswerDay.objects.exists()


def test_a_question_in_another_language_finds_passages_by_the_papers_terms_in_it(
    client, paper, reader, fake_llm
):
    fake_llm.say(GOOD)

    korean = events(ask(client, paper, "StepCheck는 GSM8K에서 정확도를 얼마나 높였나요?", **STREAM))
    only_korean = events(ask(client, paper, "정확도는 얼마나 올랐나요?", **STREAM))

    assert "answer-quote" in korean[-1][1]["html"]
    assert f"[1] (4 Experiments)\n{GSM8K}" in fake_llm.requests[0]["messages"][1]["content"]
    assert "No word of your question can be looked up in the paper" in only_korean[-1][1]["html"]
    assert len(fake_llm.requests) == 1


def test_an_answer_is_served_again_from_storage_for_the_same_version_and_question(
    client, paper, reader, fake_llm
):
    fake_llm.say(GOOD, GOOD)
    events(ask(client, paper, **STREAM))

    respelled = "  how much does STEPCHECK improve accuracy on gsm8k "
    again = events(ask(client, paper, respelled, **STREAM))

    assert len(fake_llm.requests) == 1
    assert 'class="answer-quote"' in again[-1][1]["html"]
    assert [name for name, _ in again] == ["done"]
    assert Answer.objects.get().served == 1
    # A new version of the text is a new text: the question is answered anew.
    FullText.objects.filter(paper=paper).update(version=2)
    events(ask(client, paper, **STREAM))
    assert len(fake_llm.requests) == 2
    assert sorted(Answer.objects.values_list("version", flat=True)) == [1, 2]


def test_a_plain_form_post_gets_the_page_with_the_whole_answer(client, paper, reader, fake_llm):
    fake_llm.say(GOOD)

    response = ask(client, paper)

    page = response.content.decode()
    assert response.status_code == 200
    assert page.startswith("<!DOCTYPE html>") or "<html" in page
    assert f'href="/papers/{paper.arxiv_id}/read/#section-2-paragraph-1"' in page
    assert 'value="How much does StepCheck improve accuracy on GSM8K?"' in page


def test_the_question_page(client, paper, reader):
    page = client.get(f"/papers/{paper.arxiv_id}/ask/")
    versioned = client.get(f"/papers/{paper.arxiv_id}v1/ask/")

    assert page.status_code == 200 and 'name="question"' in page.content.decode()
    assert versioned.status_code == 301 and versioned["Location"].endswith(
        f"/papers/{paper.arxiv_id}/ask/"
    )


def test_without_a_model_the_reader_gets_the_best_passages_marked(client, paper, reader, settings):
    settings.LLM_MODEL = ""

    done = events(ask(client, paper, **STREAM))[-1][1]

    assert "No language model answers questions here" in done["html"]
    assert "<mark>GSM8K</mark>." in done["html"]
    assert done["html"].index("section-2-paragraph-1") < done["html"].index("section-1-paragraph-2")
    assert not Answer.objects.exists()


def test_the_passages_math_and_headings_are_sent_for_typesetting(client, reader, settings):
    settings.LLM_MODEL = ""
    paper = PaperFactory()
    parsed = ParsedText(
        source=FullText.Source.HTML,
        sections=[
            ParsedSection(
                heading=r"3 Results on $\textsc{LongBench}$",
                level=1,
                paragraphs=[r"Strided attention costs $O(n \sqrt{n})$ where dense costs <more>."],
            )
        ],
    )
    store_fulltext(paper=paper, parsed=parsed, pictures=[])

    done = events(ask(client, paper, "What does strided attention cost?", **STREAM))[-1][1]

    # The TeX is left for KaTeX, as in the Read view and a search's passages,
    # never shown as dollar signs; the text around it is escaped.
    assert r'<span class="math">O(n \sqrt{n})</span>' in done["html"]
    assert r'3 Results on <span class="math">\textsc{LongBench}</span></a>' in done["html"]
    assert "$" not in done["html"]
    assert "<mark>Strided attention costs</mark>" in done["html"]
    assert "&lt;more&gt;" in done["html"]


def test_a_model_that_fails_leaves_the_reader_the_passages(client, paper, reader, fake_llm):
    fake_llm.answer("unavailable", "unavailable")

    response = ask(client, paper, **STREAM)

    assert response.status_code == 200
    assert "could not answer just now" in events(response)[-1][1]["html"]
    assert not Answer.objects.exists()


def test_an_answer_too_slow_for_the_web_worker_is_given_up_for_the_passages(
    client, paper, reader, fake_llm, monkeypatch
):
    monkeypatch.setattr(model, "ANSWER_SECONDS", 0.0)
    fake_llm.say(GOOD)

    got = events(ask(client, paper, **STREAM))

    assert got[0] == ("delta", {"text": GOOD[:12]})
    assert "could not answer just now" in got[-1][1]["html"]
    assert not Answer.objects.exists()


def test_a_reader_asks_at_most_their_allowance(client, paper, reader, fake_llm, settings):
    settings.RATELIMIT_ENABLE = True
    settings.ASK_READER_RATE_LIMIT = "2/m"
    fake_llm.say(GOOD, GOOD)

    asked = [ask(client, paper, f"{QUESTION} {n}", **STREAM) for n in range(3)]

    assert [response.status_code for response in asked] == [200, 200, 429]
    assert "You have asked many questions; try again in" in asked[2].content.decode()
    # Another reader has their own allowance.
    client.force_login(UserFactory())
    assert ask(client, paper, **STREAM).status_code == 200


def test_the_days_budget_holds_across_the_site(client, paper, reader, fake_llm, settings):
    settings.ASK_DAILY_BUDGET = 1
    fake_llm.say(GOOD, GOOD)

    first = events(ask(client, paper, **STREAM))[-1][1]
    client.force_login(UserFactory())
    second = events(ask(client, paper, "What does StepCheck improve?", **STREAM))[-1][1]

    assert "answer-quote" in first["html"]
    assert "Today's answers are used up" in second["html"]
    assert "<mark>StepCheck</mark>" in second["html"]
    assert len(fake_llm.requests) == 1
    assert AnswerDay.objects.get().answers == 1
    # A kept answer costs nothing from the budget.
    assert "answer-quote" in events(ask(client, paper, **STREAM))[-1][1]["html"]


def test_no_budget_means_passages_alone(client, paper, reader, fake_llm, settings):
    settings.ASK_DAILY_BUDGET = 0

    done = events(ask(client, paper, **STREAM))[-1][1]

    assert "Today's answers are used up" in done["html"]
    assert fake_llm.requests == [] and not AnswerDay.objects.exists()


@pytest.mark.parametrize(
    ("data", "status", "message"),
    [
        ({}, 400, "Please write a question."),
        ({"question": "   "}, 400, "Please write a question."),
        ({"question": "ab"}, 400, "Please write a question of a few words."),
        ({"question": "why " * 80}, 400, "A question is at most 300 characters."),
        ({"question": ["one", "two"]}, 200, ""),
    ],
)
def test_bad_questions_are_refused_with_a_message(client, paper, reader, data, status, message):
    streamed = client.post(f"/ask/{paper.pk}/", data, **STREAM)
    plain = client.post(f"/ask/{paper.pk}/", data)

    assert streamed.status_code == plain.status_code == status
    if message:
        assert message in streamed.content.decode() and message in plain.content.decode()


def test_bad_addresses_and_methods_are_not_errors(client, paper, reader):
    hidden = PaperFactory(is_visible=False)

    assert client.post("/ask/999999999/", {"question": QUESTION}).status_code == 404
    assert client.post(f"/ask/{hidden.pk}/", {"question": QUESTION}).status_code == 404
    assert client.get(f"/ask/{paper.pk}/").status_code == 405
    assert client.post("/ask/99999999999999999999999/", {"question": QUESTION}).status_code == 404
    assert client.get("/papers/no-such-paper/ask/").status_code == 404
    client.logout()
    anonymous = client.post(f"/ask/{paper.pk}/", {"question": QUESTION})
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


def test_queries_of_a_new_answer(client, paper, reader, fake_llm, django_assert_num_queries):
    fake_llm.say(GOOD)
    client.get("/")  # the session's row read once

    # the session, the user, the paper with its text's row, the kept answer
    # looked for, the paper's sections, the day's budget, the answer kept
    # (in a savepoint: two more)
    with django_assert_num_queries(9):
        events(ask(client, paper, **STREAM))


def test_queries_of_a_kept_answer(client, paper, reader, fake_llm, django_assert_num_queries):
    fake_llm.say(GOOD)
    events(ask(client, paper, **STREAM))

    # the session, the user, the paper with its text's row, the kept answer, its count served
    with django_assert_num_queries(5):
        events(ask(client, paper, **STREAM))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_behind_nginx_each_event_reaches_the_reader_as_it_is_written(tmp_path, settings):
    from tests.faults.processes import database_url, gunicorn, manage, nginx

    with running_fake_llm(settings) as fake:
        paper = stored_paper()
        user = UserFactory()
        client = Client()
        client.force_login(user)
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "REDIS_URL": "",
            "DEBUG": "0",
            # The session the test client made is good with the same key.
            "SECRET_KEY": settings.SECRET_KEY,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "STATIC_ROOT": str(tmp_path / "static"),
            "LOG_LEVEL": "WARNING",
            "LLM_BASE_URL": fake.base_url,
            "LLM_MODEL": "fake-model-7b",
        }
        assert manage(env, "collectstatic", "--noinput").returncode == 0
        fake.say(GOOD)
        fake.hold = threading.Event()
        with gunicorn(env) as base, nginx(base.removeprefix("http://")) as proxy:
            browser = requests.Session()
            browser.cookies.set("sessionid", client.cookies["sessionid"].value)
            browser.get(f"{proxy}{paper.get_absolute_url()}", timeout=10)
            started = time.monotonic()
            with browser.post(
                f"{proxy}/ask/{paper.pk}/",
                {"question": QUESTION, "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
                headers={
                    "Accept": "text/event-stream",
                    "Accept-Encoding": "gzip",
                    "Referer": f"{proxy}/",
                },
                stream=True,
                timeout=10,
            ) as response:
                chunks = response.iter_content(chunk_size=None)
                first = next(chunks).decode()
                # Out through nginx while the model still holds the rest.
                assert time.monotonic() - started < 5 and not fake.hold.is_set()
                fake.hold.set()
                rest = b"".join(chunks).decode()
            assert response.headers["Content-Type"].startswith("text/event-stream")
            assert "Content-Encoding" not in response.headers
            assert first.startswith("event: delta\n") and "event: done" not in first
            assert "answer-quote" in rest
