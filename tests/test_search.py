"""search_memory's ranking and answer (docs/contract.md §4.2): files the agent is about to touch,
words weighed by rarity, plurals and identifier parts, the lean block, and an answer sized to what
is relevant, in-process through sentinel_memory.tools."""

from __future__ import annotations

import json
import re

import pytest

from sentinel_memory.record.store import memory_path
from sentinel_memory.errors import InvalidInput
from sentinel_memory.tools.render import FOCUS_ANSWER, SMALL_ANSWER, estimate_tokens
from sentinel_memory.search import STRONG
from sentinel_memory.search.terms import terms
from sentinel_memory.tools.answers import log, search
from sentinel_memory.tools.memory import ranked_matches, strong_matches
from gitrepos import T0, T1, env, make_repo, put, rec  # noqa: F401  (env: a fixture)


def listed(answer: str) -> list[str]:
    """The ids of the records an answer lists, in order."""
    return re.findall(r"^#\d+ ([0-9a-f]{16}) \|", answer, re.M)


def saved(output: str) -> str:
    return re.search(r"record ([0-9a-f]{16})", output).group(1)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    for name in ("src/pay/refund.py", "src/pay/vat.py", "src/auth/login.py", "docs/notes.md", "README.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    return root


@pytest.fixture
def path(project):
    return memory_path(project)


def filler(path, count: int, topic: str = "misc") -> list[str]:
    """`count` ordinary records that share no word with the queries below."""
    return [
        saved(
            log(
                path,
                f"{topic}{i % 4}",
                f"the build {i} needed a flag nobody wrote down",
                f"pass the flag for build number {i} and keep the cache warm between runs",
            )
        )
        for i in range(count)
    ]


# ------------------------------------------------------------------------------------------ files


def test_records_citing_the_files_come_first_then_their_directory(path):
    """With files, the records that cite them come first, then those citing a file in the same
    directory, then the rest, whatever the query's words say."""
    words = saved(log(path, "pay", "the refund query words", "refund refund vat", files=["docs/notes.md"]))
    near = saved(log(path, "pay", "vat rounding", "round half up", files=["src/pay/vat.py"]))
    cites = saved(log(path, "pay", "keys", "send the idempotency key", files=["src/pay/refund.py"]))
    answer = search(path, "refund vat", files=["src/pay/refund.py"])
    assert listed(answer) == [cites, near, words]
    assert "citing src/pay/refund.py" in answer
    assert listed(search(path, "refund vat"))[0] == words  # without files, the words decide


def test_a_file_git_renamed_counts_as_near(tmp_path, env):
    """A record citing the path a file had before git renamed it is ranked with the same
    directory's: the agent names today's path."""
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / "lib").mkdir()
    (repo.path / "lib" / "old_name.py").write_text("x\n")
    (repo.path / "other.py").write_text("x\n")
    repo.commit("files")
    put(
        repo.memory,
        rec("lib", "before the rename", "a lesson", created=T0, files=["lib/old_name.py"]),
        rec("other", "unrelated", "another lesson", created=T1, files=["other.py"]),
    )
    repo.git("mv", "lib/old_name.py", "core_new.py")
    repo.commit("rename")
    first = listed(search(repo.memory, "", files=["core_new.py"]))[0]
    assert first == rec("lib", "before the rename", "a lesson")["id"]


@pytest.mark.parametrize(
    "files, says",
    [
        (["/etc/passwd"], "is absolute"),
        (["../outside.py"], "uses '..'"),
        (["src/pay"], "is a directory"),
        ([".context/memory_log.jsonl"], "inside .git/ or .context/"),
        ([f"src/f{i}.py" for i in range(11)], "at most 10"),
        ("src/pay/refund.py", "must be a list"),
    ],
)
def test_bad_files_are_refused_in_one_sentence_and_nothing_is_searched(path, files, says):
    log(path, "pay", "m", "l")
    with pytest.raises(InvalidInput) as caught:
        search(path, "q", files=files)
    assert says in str(caught.value) and str(caught.value).endswith("Nothing was searched.")


def test_a_file_not_written_yet_may_be_named(path):
    """The agent may be about to create the file: a path that does not exist yet is accepted, and
    records citing its directory rank first."""
    other = saved(log(path, "auth", "m", "l", files=["src/auth/login.py"]))
    near = saved(log(path, "pay", "m2", "l2", files=["src/pay/vat.py"]))
    assert listed(search(path, "", files=["src/pay/new_module.py"])) == [near, other]


# ------------------------------------------------------------------------------------------ words


def test_a_rare_word_outweighs_a_common_one(path):
    """A record holding the query's rare word comes before newer ones holding only a common one."""
    rare = saved(log(path, "net", "calls hung", "set a timeout on every outbound call"))
    common = [saved(log(path, "net", f"flaky step {i}", f"retry the step {i} once")) for i in range(5)]
    filler(path, 24)
    assert listed(search(path, "timeout retry"))[0] == rare
    assert set(listed(search(path, "timeout retry"))[1:6]) == set(common)


@pytest.mark.parametrize("query", ["sessions", "samesite cookie", "refund"])
def test_plurals_identifier_parts_and_cited_paths_match(path, query):
    """ "sessions" finds "session"; the parts of SESSION_COOKIE_SAMESITE are words; a cited path's
    segments are searchable."""
    filler(path, 12)
    target = {
        "sessions": lambda: log(path, "web", "a session expired early", "extend the session"),
        "samesite cookie": lambda: log(path, "web", "cross-site posts failed", "set SESSION_COOKIE_SAMESITE=Lax"),
        "refund": lambda: log(path, "pay", "double charge", "send the key", files=["src/pay/refund.py"]),
    }[query]()
    assert listed(search(path, query))[0] == saved(target)


# ------------------------------------------------------------------------------------------ block


def test_a_block_leaves_out_empty_fields_and_keeps_the_text_verbatim(path):
    lesson = "Keep  two spaces, a\ttab and 결제 text as written"
    rid = saved(log(path, "pay", "what was missing", lesson))
    answer = search(path, "")
    block = answer.split(f"#1 {rid} | pay | ", 1)[1]
    assert "\nmissing: what was missing\n" in block and f"\nlesson: {lesson}" in block
    assert "ask" not in block and "ask_next_time: -" not in answer and "type=log" not in answer
    with_question = saved(log(path, "pay", "other", "l", "Which region?"))
    assert "\nask: Which region?" in search(path, "").split(with_question, 1)[1]


# ----------------------------------------------------------------------------------- answer size


def test_a_small_memory_is_listed_whole(path):
    ids = filler(path, 20)
    answer = search(path, "nothing matches this")
    assert sorted(listed(answer)) == sorted(ids) and "NOT SHOWN" not in answer
    assert estimate_tokens(answer) <= SMALL_ANSWER


def test_past_a_small_answer_only_principles_and_matches_are_listed_and_the_rest_counted(path):
    """A memory whose whole answer is over SMALL_ANSWER: the answer lists the principles and the
    records that match, and counts the rest by topic, truthfully."""
    filler(path, 90)
    target = saved(log(path, "payment", "VAT differs by country", "check the 세율 table"))
    principle = saved(log(path, "style", "", "prefer small modules", type="principle"))
    answer = search(path, "세율 VAT")
    assert listed(answer) == [principle, target]
    assert "NOT SHOWN: 90 records of 92 (none of them matches the query)" in answer
    counts = dict(re.findall(r"(misc\d) \((\d+)\)", answer.split("By topic:", 1)[1]))
    assert counts == {"misc0": "23", "misc1": "23", "misc2": "22", "misc3": "22"}
    assert 'topic="<one of the topics above>"' in answer and "files=[" in answer
    assert estimate_tokens(answer) < SMALL_ANSWER
    # Only the principle listed, which matches nothing: the header does not speak of matches below.
    nothing = search(path, "quantum entanglement")
    assert listed(nothing) == [principle]
    assert "no record listed matches at all" in nothing and "the records below share" not in nothing
    assert "the records below share" in search(path, "fix the VAT")  # VAT: rare; fix: generic


def test_many_matches_fill_about_the_focus_size_and_the_rest_are_counted_as_matching(path):
    """When many records match, the best are listed up to about FOCUS_ANSWER tokens; the notice
    says how many more match."""
    ids = [
        saved(
            log(
                path,
                f"t{i % 3}",
                f"cache miss {i} on the warm path",
                f"the cache key {i} must hold the tenant, the locale and the version of the schema",
            )
        )
        for i in range(150)
    ]
    answer = search(path, "cache")
    shown = listed(answer)
    assert 20 < len(shown) < 150 and set(shown) <= set(ids)
    assert f"NOT SHOWN: {150 - len(shown)} records of 150 (they match the query less than those above)" in answer
    assert FOCUS_ANSWER * 0.8 < estimate_tokens(answer) < FOCUS_ANSWER * 1.2


def test_the_budget_setting_still_caps_the_answer(path, monkeypatch):
    filler(path, 40)
    monkeypatch.setenv("SENTINEL_MEMORY_SEARCH_TOKENS", "600")
    answer = search(path, "build flag")
    assert "to stay within about 600 tokens (setting SENTINEL_MEMORY_SEARCH_TOKENS) and 38,000 bytes" in answer
    assert estimate_tokens(answer) <= 600
    monkeypatch.setenv("SENTINEL_MEMORY_SEARCH_TOKENS", "0")
    assert len(listed(search(path, "build flag"))) == 40


def test_without_a_query_or_files_a_large_memory_lists_the_newest(path):
    filler(path, 90)
    stored = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    newest = [r["id"] for r in sorted(stored, key=lambda r: (r["meta"]["created"], r["id"]), reverse=True)]
    answer = search(path, "")
    shown = listed(answer)
    assert 20 < len(shown) < 90 and shown == newest[: len(shown)]
    assert f"NOT SHOWN: {90 - len(shown)} records of 90 (older than those shown)" in answer


# ------------------------------------------------------------------------ specific evidence first


def test_a_record_sharing_two_rarely_cited_files_beats_one_sharing_a_file_most_cite(project, path):
    """A file most records cite is weak evidence: the record citing the two files few records cite
    comes first, though a newer one cites the common file too."""
    for i in range(8):
        (project / f"src/pay/step{i}.py").write_text("x\n")
    rare = saved(log(path, "pay", "two rare files", "keep them in step", files=["src/pay/vat.py", "docs/notes.md"]))
    for i in range(8):
        saved(log(path, f"pay{i}", f"common {i}", f"lesson {i}", files=["README.md", f"src/pay/step{i}.py"]))
    answer = search(path, "", files=["README.md", "src/pay/vat.py", "docs/notes.md"])
    assert listed(answer)[0] == rare


def test_a_lesson_about_the_files_comes_before_a_commit_that_changed_many_files(project, path):
    """Nearness is divided by the square root of the files a record cites: the record about the two
    files asked about comes first, then the one about one of them, then the sweeping change that
    touched both among eight others, though it cites the most of them."""
    others = [f"src/pay/part{i}.py" for i in range(8)]
    for name in others:
        (project / name).write_text("x\n")
    filler(path, 20)
    sweeping = saved(
        log(
            path,
            "style",
            "reformat everything",
            "run the formatter",
            files=["src/pay/refund.py", "src/pay/vat.py", *others],
        )
    )
    one = saved(log(path, "pay", "refund keys", "send the idempotency key", files=["src/pay/refund.py"]))
    both = saved(
        log(path, "pay", "refund and vat share rounding", "round once", files=["src/pay/refund.py", "src/pay/vat.py"])
    )
    answer = search(path, "", files=["src/pay/refund.py", "src/pay/vat.py"])
    assert listed(answer)[:3] == [both, one, sweeping]
    # Citing a file asked about still comes before citing only other files in their directories.
    (project / "src/auth/session.py").write_text("x\n")
    sibling = saved(
        log(path, "pay", "the neighbours", "keep them small", files=["src/pay/vat.py", "src/auth/session.py"])
    )
    order = listed(search(path, "", files=["src/pay/refund.py", "src/auth/login.py"]))
    assert order.index(sweeping) < order.index(sibling)


def test_stop_words_and_generic_path_parts_match_nothing(project, path):
    """`the`, `of`, `does` and a path's `py` or `src` are no words: a query made of them matches
    nothing, and the answer says that nothing matches strongly."""
    for i in range(12):
        log(path, f"mod{i}", f"the module {i} of the app", f"it does keep state {i}", files=["src/pay/vat.py"])
    db = saved(log(path, "db", "pool exhausted", "close cursors", files=["src/auth/login.py"]))
    answer = search(path, "the of does")
    assert "Nothing matches strongly" in answer and "NOT SHOWN" not in answer
    assert listed(search(path, "src/auth/login.py"))[0] == db  # login is rare; src and py count for nothing
    assert terms("does goes") == {"go"} and terms("src/app.py", path=True) == set()


def test_korean_particles_match_nothing_alone_and_do_not_stop_a_match(path):
    """결제 모듈에서 finds 결제모듈을 (particles stripped, pairs of the stem); the particle 에서 alone
    matches nothing."""
    target = saved(log(path, "결제", "결제모듈을 고칠 때 세율을 확인", "환불 금액은 반올림한다"))
    other = saved(log(path, "로그인", "서버에서 세션을 읽는다", "쿠키에서 만료 시간을 확인"))
    filler(path, 10)
    assert listed(search(path, "결제 모듈에서"))[0] == target
    assert "Nothing matches strongly" in search(path, "에서 으로 을")
    assert listed(search(path, "세션 만료"))[0] == other


def test_a_korean_word_a_record_holds_whole_matches_no_word_that_merely_shares_two_characters(path):
    """프로퍼티 is held whole by the record about properties: the record about 프로세스 (process),
    which shares only the pair 프로, does not match; a compound no record holds whole still finds its
    parts written apart (결제모듈 finds 결제 모듈)."""
    filler(path, 10)
    process = saved(log(path, "deploy", "프로세스 id 찾기", "pid 파일을 먼저 읽는다"))
    properties = saved(log(path, "oauth", "프로퍼티 파일 등록", "키는 환경 변수로 읽는다"))
    payment = saved(log(path, "payment", "결제 모듈 환불", "환불은 반올림한다"))
    matching = [m.record["id"] for m in ranked_matches(path, "Oauth 프로퍼티 등록")[0]]
    assert matching[0] == properties and process not in matching
    assert [m.record["id"] for m in ranked_matches(path, "결제모듈")[0]] == [payment]


def test_a_latin_name_with_a_korean_particle_is_the_name(path):
    """LottoNumber를 is the name LottoNumber and its particle: it finds the record that says
    LottoNumber는, before one that shares only another word; a particle standing alone (after a
    quoted name) is no word."""
    filler(path, 10)
    lotto = saved(log(path, "lotto", "LottoNumber는 1부터 45까지만 허용한다", "범위 밖의 숫자는 예외로 막는다"))
    view = saved(log(path, "view", "입력 검증은 InputView에서 한다", "빈 입력은 다시 묻는다"))
    matching = [m.record["id"] for m in ranked_matches(path, "LottoNumber를 검증")[0]]
    assert matching == [lotto, view]
    assert terms("`save` 를 Board의 입력") == {"save", "board", "입력"}


def test_the_character_pairs_of_a_korean_word_weigh_together_as_one_word(path):
    """프로퍼티, which no record holds, is looked for by its pairs (프로, 로퍼, 퍼티): together they
    weigh as one word, so the records sharing the whole word 등록 come before the one sharing only
    the pair 프로 (of 프로세스)."""
    filler(path, 10)
    process = saved(log(path, "deploy", "프로세스 id 찾기 수정", "pid 파일을 먼저 읽는다"))
    ignore = saved(log(path, "git", "gitignore 등록", "키 파일은 커밋하지 않는다"))
    google = saved(log(path, "security", "시큐리티 구글 정보 등록", "클라이언트 정보는 환경 변수로 읽는다"))
    matching = [m.record["id"] for m in ranked_matches(path, "Oauth 프로퍼티 등록")[0]]
    assert set(matching[:2]) == {ignore, google} and matching[2:] == [process]


# ---------------------------------------------------------------------------------- strong matches


def test_strong_matches_name_their_reasons_and_weak_ones_are_left_out(project, path):
    """A cited file, an identifier, the exact topic or rare words make a match strong, with the
    reasons; common words alone do not; the file is not written."""
    filler(path, 20)
    refund = saved(
        log(path, "refund", "refunds rounded down", "call round_half_even first", files=["src/pay/refund.py"])
    )
    before = path.read_bytes(), path.stat().st_mtime_ns
    assert [(m.record["id"], m.reasons) for m in strong_matches(path, "", ["src/pay/refund.py"])] == [
        (refund, ("file src/pay/refund.py",))
    ]
    by_identifier = strong_matches(path, "where is round_half_even used")
    assert by_identifier[0].record["id"] == refund and "identifier round_half_even" in by_identifier[0].reasons
    assert strong_matches(path, "the refund topic")[0].reasons[0] == "topic refund"
    assert strong_matches(path, "pass the build flag") == []  # words most records hold
    assert strong_matches(path, "the of and") == []
    assert all(m.strong and m.strength >= STRONG for m in strong_matches(path, "refunds rounded", limit=1))
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_the_names_of_installed_dependencies_are_no_words_of_the_project(project, path):
    """A commit that upgraded Yarn's zero-install cache cites files named after packages: a prompt
    about local storage does not match it on `local` and `storage` from
    `@algolia-cache-browser-local-storage-npm-….zip`, and the lesson that says local storage does.
    Asked about, such a file still finds the record that cites it."""
    filler(path, 20)
    archive = "web/.yarn/cache/@algolia-cache-browser-local-storage-npm-4.22.1-8d6e0ef8e0-18dfe05cab.zip"
    for name in (archive, "web/node_modules/storage-local/index.js", "web/.pnp.cjs"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes(b"x")
    cache = saved(
        log(path, "deps", "bumped the web dependencies", "run yarn install after a pull",
            files=[archive, "web/node_modules/storage-local/index.js", "web/.pnp.cjs"])
    )
    theme = saved(log(path, "theme", "the theme reset on reload", "keep the theme choice in local storage"))
    found = [m.record["id"] for m in strong_matches(path, "remember the browser's dark mode choice in local storage")]
    assert found == [theme]
    assert [m.record["id"] for m in strong_matches(path, "", [archive])] == [cache]


def test_the_kind_of_change_a_task_starts_with_names_no_topic(path):
    """`build: ...`, `style(ui): ...` or `[FEAT]` at the start of a task (as commit subjects and
    pull-request titles write it) says what kind of work it is: it names no topic, while the same
    word in the task's text still does."""
    for i in range(20):
        log(path, f"misc{i % 4}", f"the cache {i} was cold", f"warm the cache {i} before the runs")
    release = saved(log(path, "build", "the release build needs the signing key", "read it from the CI secret"))
    sheet = saved(log(path, "style", "the dark style sheet loaded first", "import it after the base sheet"))
    assert strong_matches(path, "build: raise the Android target API level") == []
    assert strong_matches(path, "[style] darker buttons") == []
    assert [m.record["id"] for m in strong_matches(path, "the build fails on the CI runner")] == [release]
    assert [m.record["id"] for m in strong_matches(path, "chore: the build fails on the CI runner")] == [release]
    assert [m.record["id"] for m in strong_matches(path, "fix(style): darker buttons")] == [sheet]


def test_a_web_address_in_the_task_counts_by_the_names_in_its_path(path):
    """A link pasted into a task (a dependency bot's "compare/v0.11.0...v0.12.0", a release page)
    counts by the names in its path (the project and the package): its scheme, host, the parts
    every address of the site has and its version numbers (https, com, compare, v0) make no match
    strong, while the same words written in the task still do."""
    filler(path, 20)
    bump = saved(
        log(
            path,
            "deps",
            "Bumps pytest-asyncio. Notes: https://github.com/pytest-dev/pytest-asyncio/releases "
            "and https://github.com/pytest-dev/pytest-asyncio/compare/v0.15.1...v0.16.0",
            "pin it in requirements",
        )
    )
    linked = "locafero, see https://github.com/sagikazarmark/locafero/compare/v0.11.0...v0.12.0"
    assert strong_matches(path, linked) == []
    assert strong_matches(path, "locafero, see <www.github.com/sagikazarmark/locafero/compare/v0.11.0>") == []
    assert [m.record["id"] for m in strong_matches(path, "compare the asyncio releases")] == [bump]
    same_package = "see https://github.com/pytest-dev/pytest-asyncio/compare/v0.16.0...v0.17.0"
    assert [m.record["id"] for m in strong_matches(path, same_package)] == [bump]
    # the project's name before a project file the address ends in (docs/news.rst) still counts
    wheel = saved(log(path, "wheel", "the release notes were missed", "add a news entry for each change"))
    notes = "https://github.com/pypa/wheel/blob/main/docs/news.rst"
    assert [m.record["id"] for m in strong_matches(path, notes)] == [wheel]


def test_a_class_name_in_the_prompt_is_an_identifier_a_product_name_is_not(path):
    """PascalCase of eight characters or more with a capital inside (PaymentGateway, ResultView)
    is a class name: a record holding it matches strongly, as parse_args does; YouTube is a
    product's name, which a record sharing it does not match strongly on that word alone."""
    filler(path, 20)
    gateway = saved(log(path, "checkout", "the PaymentGateway retried twice", "wrap its calls in one retry"))
    video = saved(log(path, "embeds", "the YouTube player lost its size", "set the frame's height"))
    found = strong_matches(path, "why does PaymentGateway time out")
    assert [(m.record["id"], m.reasons) for m in found] == [(gateway, ("identifier PaymentGateway",))]
    assert video not in [m.record["id"] for m in strong_matches(path, "why does YouTube time out")]


def test_strong_matches_come_in_the_searchs_order(project, path):
    """Of the strong matches, those most about the file asked about come first, as search ranks
    them, though a change that touched it among many others shares more of the prompt's words."""
    filler(path, 20)
    for name in ["net/retry.py", *(f"m{i}.py" for i in range(8))]:
        (project / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (project / "src" / name).write_text("x = 1\n", encoding="utf-8")
    sweep = saved(
        log(
            path,
            "cleanup",
            "the retry backoff and jitter were inconsistent",
            "Unify retry backoff jitter across modules",
            files=["src/net/retry.py", *(f"src/m{i}.py" for i in range(8))],
        )
    )
    focused = saved(
        log(path, "retry", "retries hammered the server", "Cap the retry delay", files=["src/net/retry.py"])
    )
    prompt = "make the retry backoff jitter smaller in src/net/retry.py"
    found = strong_matches(path, prompt, ["src/net/retry.py"])
    assert [m.record["id"] for m in found] == [focused, sweep]
    assert found[1].strength > found[0].strength  # the strength gates; the ranking orders


def test_words_of_any_task_neither_make_a_record_match_nor_a_match_strong(path):
    """`fix`, `add`, `update`, `typo`... say what is done, not what about: "fix the bug" matches
    nothing strongly even where a record alone holds them, and beside a subject word they do not
    lift the record that shares them above one that shares the subject."""
    filler(path, 20)
    log(path, "misc", "fixed a typo", "update the bug tracker link")
    subject = saved(log(path, "offsets", "entry offsets drifted", "count offsets in bytes"))
    generic = saved(log(path, "entries", "fix the multi entries bug", "fix it first"))
    assert strong_matches(path, "fix the bug") == []
    assert "Nothing matches strongly" in search(path, "fix a typo, update the link")
    order = listed(search(path, "fix the offsets bug"))
    assert order.index(subject) < order.index(generic)


def test_korean_words_of_any_task_neither_make_a_record_match_nor_a_match_strong(path):
    """수정 (fix), 추가 (add), 리팩토링 (refactoring) say what is done, as in English: "로그인 버그 수정"
    brings in the lessons about 로그인, not one that shares only 수정, and "코드 리팩토링 수정" matches
    nothing strongly, not even through the character pairs of 리팩토링."""
    filler(path, 20)
    fixed = saved(log(path, "misc", "설정 파일 수정", "리팩토링 후 수정 사항 추가"))
    login = saved(log(path, "login", "로그인 세션이 만료된다", "세션 쿠키 만료를 확인한다"))
    assert [m.record["id"] for m in ranked_matches(path, "로그인 버그 수정")[0]] == [login]
    assert [m.record["id"] for m in ranked_matches(path, "설정 수정")[0]] == [fixed]  # its subject, 설정
    assert strong_matches(path, "코드 리팩토링 수정") == []
    assert strong_matches(path, "리팩토링을 했다") == []


def test_a_korean_word_finds_the_lesson_about_the_code_that_names_it_in_english(project, path):
    """회원 (member) in a Korean request finds the lesson about MemberService.java, written in
    English, which shares no Korean with it; it ranks the lesson, and its reason says so, but is
    no evidence of a strong match. 생성 (create) is a word of any task: it brings in no record that
    says create."""
    (project / "src" / "member").mkdir(parents=True, exist_ok=True)
    (project / "src" / "member" / "MemberService.java").write_text("class MemberService {}\n", encoding="utf-8")
    filler(path, 20)
    signup = saved(log(path, "accounts", "signup failed for a taken email", "check the email before saving",
                       files=["src/member/MemberService.java"]))
    log(path, "reports", "the report did not create a summary", "create it after the totals")
    found = ranked_matches(path, "회원 가입 오류")[0]
    assert [(m.record["id"], m.reasons) for m in found] == [(signup, ("code names: member (회원)",))]
    assert strong_matches(path, "회원 가입 오류") == []
    assert ranked_matches(path, "보고서 생성")[0] == []
    # the answer says why it is listed, and does not call it a record that shares only common words
    answer = search(path, "회원 가입 오류")
    assert "the English code name of one of its Korean words" in answer and "share only common" not in answer


def test_words_of_any_task_order_the_records_that_share_the_subject(path):
    """Among the records that hold the query's subject word, one that also holds its generic or
    common words comes first: for "revert the offsets change", the lesson about reverting an
    offsets change comes before a newer, shorter one that only mentions offsets (unless the files
    asked about order them)."""
    filler(path, 20)
    reverted = saved(
        log(
            path,
            "entries",
            "the offsets change broke old files",
            "revert it and count offsets in bytes",
            files=["src/pay/vat.py"],
        )
    )
    mentions = saved(log(path, "entries", "offsets listed", "see offsets", files=["src/pay/vat.py"]))
    assert listed(search(path, "revert the offsets change"))[:2] == [reverted, mentions]
    assert listed(search(path, "offsets"))[:2] == [mentions, reverted]  # the subject alone: the newer, shorter first
    assert strong_matches(path, "revert the change") == []
    # Near the files asked about, nearness and the subject order, as for the subject alone.
    assert listed(search(path, "revert the offsets change", files=["src/pay/vat.py"]))[:2] == [mentions, reverted]


def test_a_release_query_orders_the_lessons_of_earlier_releases_first(path):
    """A version number (v2.5.0, 3.0.0-rc1) says the task is a release: "Release 3.1.0" brings
    the lessons of earlier releases first, though they share no word with it but generic ones, and
    beside a subject word it orders them as other generic words do. A decimal is no version, and
    a version matches nothing strongly."""
    filler(path, 20)
    for i in range(4):
        log(path, "misc", f"the release notes {i} were late", f"release the notes {i} together")
    earlier = saved(log(path, "init", "2.5.0-dev was not bumped", "bump __init__ before tagging v2.5.0"))
    decimal = saved(log(path, "timing", "a wait of 0.5 s was too short", "wait 2 s for the release"))
    assert listed(search(path, "Release 3.1.0"))[0] == earlier
    assert listed(search(path, "Release v3.1"))[0] == earlier
    assert earlier not in listed(search(path, "release after 0.5 s"))[:1]
    assert strong_matches(path, "Release 3.1.0") == []
    assert [m.record["id"] for m in ranked_matches(path, "wait for 3.1.0")[0]][:1] == [decimal]


def test_a_topic_in_snake_case_is_named_by_its_words(path):
    """Topic bug_report is named by "bug report" (and by bug_report); "report" alone does not name it."""
    filler(path, 20)
    target = saved(log(path, "bug_report", "the template asks for the version", "keep the version field"))
    assert [m.reasons[0] for m in strong_matches(path, "shorten the bug report")] == ["topic bug_report"]
    assert strong_matches(path, "bug_report wording")[0].record["id"] == target
    assert all(not r.startswith("topic") for m in strong_matches(path, "report") for r in m.reasons)


def test_a_snake_case_topic_of_generic_words_only_is_named_by_no_task(path):
    """The topic of a lesson about _version.py is _version: "release version 8.4.1" names it only
    through the generic word version, so no strong match, as for a topic version; its own name
    still finds it first."""
    filler(path, 20)
    target = saved(log(path, "_version", "the version file is generated", "never edit _version.py by hand"))
    assert strong_matches(path, "release version 8.4.1") == []
    assert strong_matches(path, "fix the version string") == []
    assert listed(search(path, "_version"))[0] == target
    how = saved(log(path, "how_to", "the guides live in the wiki", "link the page, do not copy it"))
    assert [m.record["id"] for m in strong_matches(path, "add a how to page")] == [how]  # not generic words


def test_a_topic_named_only_inside_a_compound_word_counts_where_the_record_holds_that_word(path):
    """ "Add a dark-mode toggle" names the topic `mode` (the project's run mode) only inside
    "dark-mode", which its record never mentions: no strong match. "bump go-toml" names the topic
    `toml` inside "go-toml", which the earlier bump's lesson holds: strong. The whole compound, or the
    word on its own, names a topic as before."""
    filler(path, 20)
    mode = saved(log(path, "mode", "release mode hides the debug routes", "check the mode before routing"))
    toml = saved(log(path, "toml", "the parser's v2 changed key order", "bump go-toml with the golden files"))
    assert strong_matches(path, "Add a dark-mode toggle to the settings page") == []
    assert [m.record["id"] for m in strong_matches(path, "chore: bump go-toml to 2.1")] == [toml]
    assert [m.record["id"] for m in strong_matches(path, "switch the mode to release")] == [mode]
    dark = saved(log(path, "dark_mode", "the toggle forgot the choice", "keep it in local storage"))
    assert dark in [m.record["id"] for m in strong_matches(path, "the dark-mode switch")]


def test_a_topic_that_is_an_everyday_word_naming_a_cited_project_file_is_as_weak_as_that_file(path):
    """A lesson about an editor's `.vscode/settings.json` has the topic `settings`: "a settings
    page" in a web app's task is not about it (found on a logging library's memory, shown for that
    task in three clients). A tool's name stays a topic: "the dependabot config" names the lesson
    on `.github/dependabot.yml`."""
    for name in (".vscode/settings.json", ".github/dependabot.yml"):
        (path.parent.parent / name).parent.mkdir(parents=True, exist_ok=True)
        (path.parent.parent / name).write_text("x\n")
    filler(path, 20)
    log(path, "settings", "the formatter differed per editor", "black is the VS Code default formatter",
        files=[".vscode/settings.json"])
    bot = saved(log(path, "dependabot", "actions were never bumped", "list github-actions in the config",
                    files=[".github/dependabot.yml"]))
    assert strong_matches(path, "Add a dark-mode toggle to the settings page and keep it in local storage") == []
    assert [m.record["id"] for m in strong_matches(path, "include githubactions in the dependabot config")] == [bot]
    # the same word as the topic of a lesson that cites no such file is a topic as before
    prefs = saved(log(path, "settings", "the page lost unsaved changes", "warn before leaving the page"))
    assert [m.record["id"] for m in strong_matches(path, "Add a toggle to the settings page")] == [prefs]


def test_a_topic_named_only_by_a_project_files_name_is_as_weak_as_that_file(path):
    """ "chore(build.gradle.kts): add a preloader dependency" names the topic `gradle` only inside
    the name of a file every Gradle project has: as weak as naming the file, so no strong match
    (found on another project's task, which got this project's lessons of topic build). Named as a
    word of its own, the topic is strong as before."""
    filler(path, 20)
    gradle = saved(log(path, "gradle", "the android app needs JDK 17", "set the toolchain once"))
    assert strong_matches(path, "chore(build.gradle.kts): add a preloader dependency") == []
    assert strong_matches(path, "update app/build.gradle.kts") == []
    assert [m.record["id"] for m in strong_matches(path, "bump gradle in build.gradle.kts")] == [gradle]
    assert strong_matches(path, "Update app\\build.gradle.kts.") == []  # a sentence's period, a Windows path
    history = saved(log(path, "history", "the list lost its place", "keep the page in the query"))
    assert [m.record["id"] for m in strong_matches(path, "fix the pagination in app/history")] == [history]
    # project files known by their folder too: the docs' landing page and Sphinx's settings
    log(path, "index", "the search index is rebuilt nightly", "query the replica")
    log(path, "conf", "the app reads conf from the env", "set APP_ENV first")
    assert strong_matches(path, "Fix a typo in docs/index.md") == []
    assert strong_matches(path, "Update `docs\\source\\conf.py` for the new theme") == []
    assert [m.reasons[0] for m in strong_matches(path, "rebuild the search index")] == ["topic index"]


def test_a_query_word_that_names_a_cited_file_weighs_more_than_one_in_the_text(project, path):
    """ "completion" in the path of the file a record cites (src/shell_completion.py) says the
    record is about that file: it comes before a newer record that only mentions the word."""
    (project / "src/shell_completion.py").write_text("x\n")
    filler(path, 10)
    about = saved(
        log(path, "shell", "zsh needs a newline", "end the script with one", files=["src/shell_completion.py"])
    )
    mentions = saved(log(path, "docs", "completion is mentioned", "say it in the guide"))
    order = listed(search(path, "completion"))
    assert order.index(about) < order.index(mentions)


def test_a_file_named_without_its_folder_is_a_cited_file_unless_many_paths_have_that_name(project, path):
    """ "the fixture in conftest.py" names tests/conftest.py when few cited paths have that name;
    a name that many cited paths share (index.py in four folders) names none of them."""
    for name in ("tests/conftest.py", *(f"pkg{i}/index.py" for i in range(4))):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("x\n")
    filler(path, 20)
    fixture = saved(log(path, "fixtures", "the tmp dir leaked", "clean it in the fixture", files=["tests/conftest.py"]))
    for i in range(4):
        log(path, f"pkg{i}", f"package {i} exports", f"keep exports sorted {i}", files=[f"pkg{i}/index.py"])
    found = strong_matches(path, "why does the fixture in conftest.py leak")
    assert found[0].record["id"] == fixture and "file tests/conftest.py (named conftest.py)" in found[0].reasons
    assert all("named" not in r for m in strong_matches(path, "sort index.py") for r in m.reasons)


def test_a_file_every_project_has_is_weak_evidence_alone(project, path):
    """A task that only touches the readme, the package manifest or .gitignore (or names
    CHANGELOG.md) shares them with lessons for reasons of its own: nothing matches strongly. With
    one of the lesson's own files beside them, it does."""
    for name in ("package.json", ".gitignore", "CHANGELOG.md"):
        (project / name).write_text("x\n")
    filler(path, 20)
    lesson = saved(
        log(
            path,
            "vat",
            "rates are per country",
            "read the rate table first",
            files=["src/pay/vat.py", "package.json", ".gitignore", "README.md", "CHANGELOG.md"],
        )
    )
    assert strong_matches(path, "", ["package.json"]) == []
    assert strong_matches(path, "", [".gitignore"]) == []
    assert strong_matches(path, "update CHANGELOG.md") == []
    assert strong_matches(path, "", ["package.json", ".gitignore", "CHANGELOG.md"]) == []  # together, still weak
    assert strong_matches(path, "add a changelog entry", ["CHANGELOG.md"]) == []  # its name is no word beside it
    log(path, "readme", "the readme's badges broke", "use the badge service's new address", files=["README.md"])
    assert strong_matches(path, "Update README.md") == []  # the file named is the topic's one word
    assert strong_matches(path, "", ["README.md", "src/pay/vat.py"])[0].record["id"] == lesson
    assert listed(search(path, "", files=["package.json"]))[0] == lesson  # still listed first


def test_the_settings_every_project_keeps_for_its_tools_are_weak_evidence_alone(project, path):
    """Any Python project's pre-commit autoupdate, dependency bot or documentation config touches
    .pre-commit-config.yaml, .github/dependabot.yml, docs/conf.py: a lesson that cites one of them
    is listed first for a task on it, but is no strong match (nothing a hook would show unasked)
    unless the task shares more with it. A conf.py outside docs/ is the project's own module."""
    settings = [".pre-commit-config.yaml", ".github/dependabot.yml", "docs/conf.py", "mkdocs.yml"]
    for name in (*settings, "app/conf.py"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("x\n")
    filler(path, 20)
    lint = saved(log(path, "lint", "the hooks pin ruff", "bump ruff with the CI's", files=[settings[0]]))
    for name in settings[1:]:
        log(path, "upkeep", f"{name} changed", "keep it in step", files=[name])
    conf = saved(log(path, "settings", "conf.py reads the env", "set APP_MODE first", files=["app/conf.py"]))
    # a framework's and a bundler's settings, a GitHub Pages domain: every project of that kind has them
    framework = ["backend/src/main/resources/application.yml", "frontend/webpack.config.js", "CNAME"]
    for name in framework:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("x\n")
        log(path, "upkeep", f"{name} changed", "keep it in step", files=[name])
    for name in settings + framework:
        assert strong_matches(path, "", [name]) == [], name
    assert listed(search(path, "", files=[settings[0]]))[0] == lint
    assert strong_matches(path, "bump ruff in the pre-commit hooks", [settings[0]])[0].record["id"] == lint
    assert strong_matches(path, "", ["app/conf.py"])[0].record["id"] == conf


def test_a_record_citing_the_path_a_file_had_before_a_rename_is_a_strong_match(tmp_path, env):
    """The hook names the path about to be written; a record citing its name before a git rename
    matches it strongly."""
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / "lib").mkdir()
    (repo.path / "lib" / "old_name.py").write_text("x\n")
    repo.commit("files")
    put(repo.memory, rec("lib", "before the rename", "a lesson", created=T0, files=["lib/old_name.py"]))
    repo.git("mv", "lib/old_name.py", "core_new.py")
    repo.commit("rename")
    found = strong_matches(repo.memory, "", ["core_new.py"])
    assert [m.reasons for m in found] == [("file lib/old_name.py (renamed since)",)]


def test_a_project_file_asked_about_by_its_name_before_a_rename_is_still_weak(tmp_path, env):
    """README.rst renamed README.md is the project's readme either way: a record citing the old
    name is listed near the file, but that alone is no strong match (contract §4.2)."""
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / "README.rst").write_text("x\n")
    repo.commit("files")
    put(repo.memory, rec("docs", "the badges broke", "use the new address", created=T0, files=["README.rst"]))
    repo.git("mv", "README.rst", "README.md")
    repo.commit("rename")
    assert strong_matches(repo.memory, "", ["README.md"]) == []
    assert len(ranked_matches(repo.memory, "", files=["README.md"])[0]) == 1  # still near, still listed


def test_a_long_prompt_needs_more_than_a_topic_or_two_rare_words_it_names_by_chance(path):
    """A prompt of a few words that names a lesson's topic matches it strongly. A pasted page of
    some thirty words that mentions the same topic and word in passing does not: the longer the
    text, the likelier it names a topic or a rare word by chance. An identifier it holds still
    counts whole."""
    filler(path, 20)
    webhook = saved(log(path, "webhook", "the signature was checked after parsing", "verify before parsing"))
    rounding = saved(log(path, "refund", "refunds rounded down", "call round_half_even first"))
    pasted = (
        "The nightly export job stalls when the warehouse connection pool runs dry; the dashboard "
        "shows stale totals, the retry queue grows, operators restart workers by hand, and somewhere "
        "in yesterday's output a webhook signature line appears between unrelated timeout messages."
    )
    assert [m.record["id"] for m in strong_matches(path, "check the webhook signature")] == [webhook]
    assert strong_matches(path, pasted) == []
    found = strong_matches(path, pasted + " Nobody uses round_half_even there.")
    assert [(m.record["id"], m.reasons) for m in found] == [(rounding, ("identifier round_half_even",))]


def test_the_generic_parts_of_a_path_in_the_prompt_are_no_words_it_shares(project, path):
    """`src` and `py` of src/cart.py are shared by every text that names a file under src/: in a
    small memory, where any word one record holds is rare, a prompt naming src/cart.py does not
    match strongly a lesson that names src/auth.py. The path's own name still counts as a word."""
    for name in ("auth.py", "cart.py"):
        (project / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (project / "src" / name).write_text("x = 1\n", encoding="utf-8")
    log(path, "payment", "VAT rates differ per country", "read config/tax_rates.yaml before computing totals")
    log(path, "auth", "tokens expire after 15 minutes", "refresh the session token in src/auth.py before retrying")
    cart = saved(log(path, "basket", "the cart total ignored coupons", "apply coupons before the cart total"))
    assert strong_matches(path, "rename a variable in src/cart.py") == []
    found = strong_matches(path, "the coupon total in src/cart.py")
    assert [(m.record["id"], m.reasons) for m in found] == [(cart, ("words: coupon, total, cart",))]


def test_the_header_names_the_strong_matches(path):
    filler(path, 10)
    target = saved(log(path, "cache", "tenant keys collided", "put the tenant id in the cache key"))
    answer = search(path, "tenant cache key")
    number = listed(answer).index(target) + 1
    assert f"Strong matches: #{number} " in answer and "Nothing matches strongly" not in answer


def test_the_header_says_when_a_listed_record_shares_a_rare_word_too_few_to_be_strong(path):
    """One rare word of the query is not a strong match, but the header must not then say that the
    records share only common words: that would tell the agent to pass over the one that bears on
    the task. Records sharing only generic words keep that warning."""
    filler(path, 10)
    vat = saved(log(path, "payment", "VAT rates differ per country", "read the rates table before totals"))
    answer = search(path, "VAT")
    assert "share less of the request than a strong match does (fewer of its rare words" in answer
    assert "share only common words" not in answer and listed(answer)[0] == vat
    assert "share only common words" in search(path, "fix a typo, update the flag")


def test_in_a_small_memory_words_its_few_records_share_still_match_strongly(path):
    """Rarity is reckoned as in a memory of at least 50 records: in a memory of two records that
    both hold the task's words, both match strongly."""
    principle = saved(log(path, "payment", "", "결제 모듈: 국가별 세율 확인, 환불 정책 분리", type="principle"))
    record = saved(log(path, "payment", "환불 금액 반올림", "환불은 결제 모듈에서 반올림한다"))
    assert {m.record["id"] for m in strong_matches(path, "결제 모듈 환불")} == {principle, record}
    assert "Strong matches: #1, #2 " in search(path, "결제 모듈 환불")


@pytest.mark.parametrize("record_word, query_word", [
    ("cookie", "cookies"), ("cookies", "cookie"), ("alias", "aliases"), ("statuses", "status"), ("size", "sizes"),
])
def test_a_word_and_its_plural_find_each_other_whichever_the_record_holds(path, record_word, query_word):
    """`cookies` finds the lesson about the session cookie, `aliases` the one about an alias, and
    back: a plural and its singular are one word (contract §4.2)."""
    filler(path, 20)
    wanted = saved(log(path, "web", f"the {record_word} rule was unknown", f"check the {record_word} before release"))
    found, _ = ranked_matches(path, query_word)
    assert [m.record["id"] for m in found][:1] == [wanted]


def test_a_korean_noun_matches_alike_with_a_particle_or_without(path):
    """게이트웨이 ends in a syllable that reads as a particle (이): with 를 or 에서 after it, it is
    still the same word, and the lesson matches as strongly."""
    filler(path, 20)
    wanted = saved(log(path, "infra", "게이트웨이 재시작 순서", "게이트웨이 재시작 전에 연결을 끊는다"))
    strengths = []
    for query in ("게이트웨이 재시작", "게이트웨이를 재시작", "게이트웨이에서 재시작"):
        (first,) = strong_matches(path, query, limit=1)
        strengths.append((first.record["id"], first.strength))
    assert len(set(strengths)) == 1 and strengths[0][0] == wanted


@pytest.mark.parametrize("topic, query", [("결제", "결제에서 오류가 난다"), ("payment", "Payment의 오류 수정")])
def test_a_topic_named_with_a_korean_particle_after_it_is_named(path, topic, query):
    filler(path, 20)
    wanted = saved(log(path, topic, "환불 규칙", "부분 환불은 주문 단위로 계산한다"))
    found = strong_matches(path, query)
    assert found and found[0].record["id"] == wanted and f"topic {topic}" in found[0].reasons


def test_a_file_named_by_a_generic_name_or_by_its_path_in_the_query_is_a_file_asked_about(project, path):
    """`crash in main.go`: main and go are a path's generic parts, yet the one record citing a
    main.go is found, strongly; `src/pay/vat.py` written in the query counts as the file itself, as
    `files` would, for search and the command line alike."""
    (project / "cmd" / "server").mkdir(parents=True)
    (project / "cmd" / "server" / "main.go").write_text("package main\n")
    filler(path, 20)
    server = saved(log(path, "server", "the port flag", "read the port from the environment first",
                       files=["cmd/server/main.go"]))
    vat = saved(log(path, "checkout", "totals were off", "round per line", files=["src/pay/vat.py"]))

    (by_name,) = strong_matches(path, "crash in main.go", limit=1)
    by_path, _ = ranked_matches(path, "fix the rounding in src/pay/vat.py")

    assert by_name.record["id"] == server and "file cmd/server/main.go (named main.go)" in by_name.reasons
    assert by_path[0].record["id"] == vat and "file src/pay/vat.py" in by_path[0].reasons and by_path[0].strong
    assert "src/pay/vat.py" in search(path, "fix the rounding in src/pay/vat.py").split("\n\n", 1)[0]


def test_the_generic_parts_of_a_path_in_a_lesson_and_a_product_name_are_no_evidence(path):
    """A lesson naming src/pay/vat.py does not match "move the py files out of src" through `py`
    and `src`; `macOS` and `TypeScript` are products' names, not identifiers of a lesson."""
    filler(path, 20)
    saved(log(path, "checkout", "totals were off", "round per line in src/pay/vat.py"))
    saved(log(path, "ci", "the runner image", "the macOS runner lacks TypeScript and bash 5"))

    assert strong_matches(path, "move the py files out of src") == []
    assert all(not r.startswith("identifier") for m in strong_matches(path, "Fix macOS and TypeScript docs")
               for r in m.reasons)


@pytest.mark.parametrize("value", ["1_000", "+300", "٣٠٠", "300 tokens", "1e3"])
def test_a_budget_that_is_not_an_integer_in_digits_is_ignored(path, monkeypatch, value):
    """SENTINEL_MEMORY_SEARCH_TOKENS that is not written as an integer (contract §4.6) leaves the
    budget at its default: the same answer as without the variable."""
    for i in range(60):
        log(path, f"t{i % 5}", f"missing context {i}", "a lesson long enough to cost some tokens " * 6)
    monkeypatch.delenv("SENTINEL_MEMORY_SEARCH_TOKENS", raising=False)
    default = search(path, "lesson")
    monkeypatch.setenv("SENTINEL_MEMORY_SEARCH_TOKENS", value)
    assert search(path, "lesson") == default


def test_a_query_naming_thousands_of_files_gets_an_answer_within_its_bounds(project, path):
    """Files a query names count as files asked about, at most 10 of them, as `files` takes: a
    query holding 300 paths gets an answer as bounded as any (its header does not list them all)."""
    names = [f"pkg/m{i}.py" for i in range(300)]
    (project / "pkg").mkdir()
    for name in names:
        (project / name).write_text("x\n")
    filler(path, 20)
    answer = search(path, " ".join(names))
    assert len(answer.split("\n", 1)[0]) < 2_000 and len(answer.encode()) < 38_000


def test_words_joined_by_one_slash_in_a_lesson_stay_words(path):
    """`HTML/CSS` and `Java/Kotlin` are words, not a path whose generic parts drop out."""
    filler(path, 20)
    css = saved(log(path, "web", "the bundle step", "Rebuild HTML/CSS bundles after a theme change"))
    java = saved(log(path, "build", "mixed sources", "Java/Kotlin mixed modules need kapt"))
    assert ranked_matches(path, "css")[0][0].record["id"] == css
    assert ranked_matches(path, "java")[0][0].record["id"] == java


def test_a_korean_word_with_a_particle_still_finds_its_english_code_name(path):
    """좋아요 (like) with a particle: its stem still names the English word the code uses."""
    filler(path, 20)
    like = saved(log(path, "likes", "the like counter", "LikeCounter must refresh after toggle", files=None))
    found, _ = ranked_matches(path, "좋아요를 누르면 숫자가 안 바뀐다")
    assert found and found[0].record["id"] == like


@pytest.mark.parametrize("lesson", ["修改src/pay/vat.py时先运行数据库迁移", "src/pay/vat.pyを変更する前に移行する"])
def test_a_path_written_into_chinese_or_japanese_without_spaces_is_cited(path, lesson):
    """Chinese and Japanese are written without spaces: the path inside the run is still found and
    cited, so the record goes stale when the file changes."""
    out = log(path, "checkout", "the migration order", lesson)
    assert "Cites 1 file: src/pay/vat.py" in out
