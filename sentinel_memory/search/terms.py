"""The terms search counts: words (lowercased, English plurals as their singular), the parts of
identifiers and paths (snake_case, camelCase, a/b/c.py), and Korean words without their particles
and endings (`Board의`: the name Board), with the character pairs of their stems. The same function
makes the terms of a record and of a query (docs/contract.md §4.2); a query's pairs also carry their
share of a word (shares).

Words that carry no subject (English function words, Korean particles and endings, the generic
parts of a path: an extension, `src`) are no terms at all: they can neither match nor lift a
record."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from ..lazy import lazy

# A run of letters and digits; a run that starts with a Latin letter ends where Hangul follows it,
# so that `Board의` is the word `Board` and its particle, `LottoNumber에` the identifier and its particle.
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?=[\uac00-\ud7af])|\w+", re.UNICODE)
# (Compiled when a word first starts at or past U+1100: _cjk. An English text never compiles them.)
_CJK_CHAR = lazy(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u4e00-\u9fff\uac00-\ud7af]")
_CJK = lazy(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u4e00-\u9fff\uac00-\ud7af]{2,}")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_IRREGULAR = {"does": "do", "goes": "go", "was": "was", "has": "has", "yes": "yes", "always": "always", "buses": "bus"}
# Words that end in -s in the singular, kept whole (macOS is no plural of maco).
_SINGULAR_S = frozenset(
    "macos ipados watchos tvos visionos chaos kudos cosmos ethos pathos canvas atlas pandas alias bias".split()
)
# Plurals in -es whose singular ends in -s or a sibilant (aliases, statuses, classes; matches, boxes).
_ES_PLURAL = ("iases", "tuses", "nuses", "ruses", "puses", "sses", "ches", "shes", "xes", "zzes")

# English function words: they say nothing about a subject, so they are no terms.
STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do doe does doing down during each either else etc even ever
    every few for from further had has have having he her here hers him his how i if in into is it its
    itself just let me more most much must my no nor not now of off on once only onto or other our ours
    out over own per same shall she should so some such than that the their theirs them then there these
    they this those though through thus to too under until up upon us very via was we were what when
    where whether which while who whom whose why will with within without would yet you your yours
    e g eg ie i.e""".split()
)
# The term of any version number, which no word of a text can be (a word has no hyphen).
VERSION_NUMBER = "version-number"
# A version number: `v` and two or more dotted numbers (v2.5, v2.5.0), or three or more dotted
# numbers (2.5.0, 3.0.0-rc1). A decimal such as 0.5 is none.
_VERSION = re.compile(r"(?<![\w.])(?:[vV]\d+\.\d+|\d+\.\d+\.\d+)")
# Words of any software task, whatever the project: what is done (fix, add, update, remove,
# refactor, ...) and the work's own artefacts (doc, test, typo, version, release, ...), not what it
# is about. They are terms (a query of nothing else is still ordered by them), but like a common
# word (search/index.py common) they bring no record in beside a rarer word (they only order the
# records it brings) and never make a match strong: "fix the bug" matches nothing strongly.
# Chosen from the words that the commit subjects of four projects not used to tune the search
# (requests, gin, fastapi, vite) each use in at least 0.15% of their subjects, keeping those that
# name an action or the work's process, not a subject (file, error, request, config, check, run,
# set, link stay words).
GENERIC_WORDS = frozenset(
    """add added adding allow allowed avoid bump bumped change changed chore ci clean cleanup
    code doc documentation drop dropped ensure example feat feature fix fixed fixing github handle
    handling improve improved improvement instead issue bug make merge minor misc
    missing move moved multiple new note prefer refactor refactored release remove removed removing
    rename renamed replace replaced revert simplify small support supported test tweak typo
    update updated updating upgrade use used using version wip workflow broken""".split()
    # The same in Korean, as the commit subjects of two Korean projects (a course's racing-car
    # exercise, a Spring Boot book's service) use them: add, fix or modify, change, delete, remove,
    # improve, implement, apply, update, refactor (two spellings), write, reflect a review, handle,
    # resolve, create, typo, version, doc, test, code, merge, use, feature.
    + """추가 수정 변경 삭제 제거 개선 구현 적용 업데이트 리팩토링 리팩터링 작성 반영 처리 해결 생성 오타 버전
    문서 테스트 코드 머지 사용 기능""".split()
    # A release's mark: the term every version number also yields (version_numbers).
    + [VERSION_NUMBER]
)
# The generic parts of a path: they name no subject (docs/contract.md §4.2).
PATH_NOISE = frozenset(
    """src lib libs pkg internal cmd app source sources main index init __init__ mod
    py pyi js mjs cjs ts tsx jsx go rs java kt kts rb php c h cc cpp hpp cs swift scala m mm
    md rst txt json yaml yml toml ini cfg lock xml html htm css scss sh bash zsh ps1 bat
    gradle properties sql proto""".split()
)
# Korean particles and verb endings, longest first: stripped from the end of a Hangul word.
_KO_ENDINGS = tuple(
    sorted(
        """으로부터 에서부터 이라는 이라고 에서는 에서도 으로는 으로도 에게서 까지는 부터는 하였다 했었다
        합니다 입니다 습니다 됩니다 했습니다 됐습니다 하였음 했음 되었다 되었음 됐다 됐음 된다 하는 하고
        하여 해서 하기 하면 한다 했다 하다 되는 되고 되어 돼서 된 할 함 됨 시키기 시킨다 시켜
        에서 에게 한테 으로 까지 부터 처럼 보다 마다 이나 이며 이고 이다 이라 라는 라고 에는 에도
        와의 과의 로의 의 을 를 이 가 은 는 에 와 과 도 로 만 나 며 고 요""".split(),
        key=len,
        reverse=True,
    )
)
# Korean words and pairs that carry no subject: the particles and endings themselves (also where one
# stands alone: after a Latin word, `Board의`, or a quoted name, `'save' 를`), and words such as
# 및 (and), 등 (etc.), 위해 (for).
KO_STOP = frozenset(
    """및 등 것 수 더 또 또는 그리고 위해 위한 통해 대한 대해 관련 경우 때 중 후 전 내 안 바 뿐 좀 잘
    에서 으로 하다 한다 했다 하는 하고 하여 해서 하기 합니다 니다 습니다 입니 됩니 에게 까지 부터 처럼
    이다 이라 라는 라고 에는 에도 되는 되어 된다 됐다 하였 였다 었다 았다""".split()
) | frozenset(_KO_ENDINGS)
# Korean words for notions of software work whose names in code are English (회원: MemberService,
# 검색: search/, 댓글: Comment.java): a query's such word also looks for those English words, so a
# lesson citing the code it names matches (shares). Common notions of programs and web services
# only, no project's own subject; a word GENERIC_WORDS holds (생성, 삭제, 테스트) brings none.
KO_EN = {
    korean: tuple(english.split(","))
    for korean, english in (
        item.split(":")
        for item in """예외:exception 검증:validation,validate,validator 유효성:validation 입력:input 출력:output,print
        조회:find,get,query,read 로그인:login 로그아웃:logout 회원:member 회원가입:signup,register,join 사용자:user
        유저:user 관리자:admin 게시글:post,article 게시판:board 댓글:comment 좋아요:like 화면:screen,view,page
        버튼:button 페이지:page 목록:list 리스트:list 상세:detail 검색:search 필터:filter 필터링:filter 정렬:sort
        알림:notification 설정:config,setting 인증:auth,authentication 인가:authorization 권한:permission,role
        토큰:token 쿠키:cookie 세션:session 요청:request 응답:response 파일:file 이미지:image 업로드:upload
        다운로드:download 배포:deploy 서버:server 데이터베이스:database 쿼리:query 캐시:cache 로그:log 로깅:logging,log
        도메인:domain 서비스:service 컨트롤러:controller 레포지토리:repository 리포지토리:repository 엔티티:entity
        객체:object 클래스:class 메서드:method 메소드:method 함수:function 변수:variable 상수:constant
        인터페이스:interface 이름:name 숫자:number 번호:number 랜덤:random 결과:result 게임:game 예약:reservation
        결제:payment 주문:order 상품:product 장바구니:cart 리뷰:review 카테고리:category 태그:tag 위치:location
        지도:map 날짜:date 시간:time 이메일:email 비밀번호:password 닉네임:nickname 프로필:profile 뷰:view
        모델:model 컴포넌트:component 스타일:style 라우터:router 라우팅:routing 상태:state,status 에러:error
        오류:error 테이블:table 컬럼:column 인덱스:index 마이그레이션:migration 스키마:schema 이벤트:event
        메시지:message 채팅:chat 북마크:bookmark 스크롤:scroll 모달:modal 헤더:header 푸터:footer 레이아웃:layout
        아이콘:icon 색상:color 폰트:font 애니메이션:animation 로딩:loading 카드:card 폼:form 중복:duplicate
        예외처리:exception 트랜잭션:transaction 스케줄러:scheduler 배치:batch 큐:queue 픽스처:fixture 픽스쳐:fixture
        모킹:mock 의존성:dependency 빌드:build 환경:environment,env 환경변수:environment,env 프로퍼티:property
        어노테이션:annotation 리다이렉트:redirect 경로:path,route 주소:address,url""".split()
    )
}
KO_EN_SHARE = 0.5  # what a Korean word's English words weigh together, against a word of the query
# 좋아요 is looked up by its stem, 좋아 (its 요 reads as an ending): each key under its stem too.
_KO_EN_STEMS: dict[str, tuple[str, ...]] = {}


def stem(word: str) -> str:
    """One term for an English word and its plural (sessions -> session, queries -> query,
    matches -> match, aliases -> alias, statuses -> status, does -> do), the same for both forms
    where the plural's -s alone does not make it: a final -ie, -che or -ze drops to what the
    plural's rule leaves (cookie and cookies -> cooky, cache and caches -> cach, size and sizes ->
    siz). Applied alike to the records and the query."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word[-1] != "s" or word in _SINGULAR_S:
        return _alike(word)
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(_ES_PLURAL):
        return word[:-2]
    if word.endswith(("ss", "us", "is")):
        return word
    return _alike(word[:-1])


def _alike(word: str) -> str:
    """A singular as the plural's rule reads its plural: -ie as -y (cookies -> cooky), a final
    -e after -ch or a single z dropped (caches -> cach, sizes -> siz)."""
    if word.endswith("ie") and len(word) > 4:
        return word[:-2] + "y"
    if word.endswith(("che", "ze")) and not word.endswith("zze") and len(word) > 3:
        return word[:-1]
    return word


KO_STRIPS = 3  # particles and endings stripped from one word at most (함수로만: 만, then 로)
KO_WORD = 40  # a Hangul run longer than this is no word (a pasted blob): kept whole


def korean_stem(word: str) -> str:
    """A Hangul word without the particles and endings at its end (결제모듈을 -> 결제모듈, 서버에서
    -> 서버, 함수로만 -> 함수), keeping at least two characters; stripped while one is left (at
    most KO_STRIPS), so a noun whose last syllable reads as a particle has one stem with a
    particle and without one (게이트웨이를 and 게이트웨이 -> 게이트웨)."""
    if len(word) > KO_WORD:
        return word
    for _ in range(KO_STRIPS):
        for ending in _KO_ENDINGS:
            if word.endswith(ending) and len(word) - len(ending) >= 2:
                word = word[: -len(ending)]
                break
        else:
            break
    return word


def code_names(stemmed: str) -> tuple[str, ...]:
    """The English code names (KO_EN) of a Korean word's stem (korean_stem): the key's own, or
    that of a key whose stem it is (좋아요, whose stem is 좋아)."""
    if not _KO_EN_STEMS:
        _KO_EN_STEMS.update({korean_stem(k): v for k, v in KO_EN.items()})
        _KO_EN_STEMS.update(KO_EN)
    return _KO_EN_STEMS.get(stemmed, ())


def _compound(word: str) -> bool:
    """Whether a word yields parts: snake_case, mixed case, letters with digits."""
    return (
        "_" in word
        or (not word.islower() and not word.isupper() and word.isascii())
        or (word.isalnum() and not word.isalpha() and not word.isdigit())
    )


_CAMEL_CASE = re.compile(r"^[a-z][a-z0-9]*[A-Z]")


_PASCAL_HUMP = re.compile(r"[a-z0-9][A-Z]")


# Names of products and platforms written in mixed case, which identifier()'s shapes would take for
# code names: a text about macOS or TypeScript names no identifier of a lesson.
PRODUCT_NAMES = frozenset(
    """macos ipados watchos visionos iphone ipad jquery typescript javascript coffeescript actionscript
    tensorflow postgresql linkedin wordpress powershell intellij webstorm phpstorm rubymine
    rabbitmq bitbucket dockerhub cloudflare digitalocean opensearch elasticsearch sonarqube appveyor
    circleci travisci jetbrains virtualbox onedrive sharepoint webassembly kakaotalk playstation
    sourcetree openstreetmap""".split()
)


def identifier(word: str) -> bool:
    """Whether a word is certainly an identifier, not a name such as GitHub: snake_case (parse_args,
    SESSION_COOKIE) or camelCase starting lower-case (maxRetries), at least five characters; or
    PascalCase of at least eight with a capital inside after a small letter or a digit (ResultView,
    KakaoOAuth2Client: class names, which the shorter names of products rarely reach). A product's
    name of those shapes (PRODUCT_NAMES: macOS, TypeScript) is none."""
    inner = word.strip("_")
    if len(inner) < 5 or not inner.isascii() or inner.casefold() in PRODUCT_NAMES:
        return False
    if "_" in inner or _CAMEL_CASE.match(inner):
        return True
    return len(inner) >= 8 and inner[0].isupper() and _PASCAL_HUMP.search(inner) is not None


def _keep(term: str) -> bool:
    return bool(term) and term != "_" and term not in STOP_WORDS and term not in KO_STOP


def _cjk(word: str) -> bool:
    """Whether the word starts with a Hangul, kana or CJK character."""
    return word[:1] >= "\u1100" and _CJK_CHAR.match(word) is not None


def words(text: str) -> list[str]:
    """The whole words of text as terms (lower-cased, singular, a Korean word without its ending),
    in order, stop words left out: what a match's reasons name."""
    text = unicodedata.normalize("NFC", text)
    out = []
    for word in _WORD.findall(text):
        low = word.casefold()
        term = korean_stem(low) if _cjk(low) else stem(low)
        if _keep(term):
            out.append(term)
    return out


# A name with an extension (cart.py, README.md), as a word of a text holds one. With a slash, it
# marks a path (src/cart.py) whose generic parts are no words (plain).
_EXTENSION = re.compile(r"\w\.[^\W\d_]")
_NOT_WORD = re.compile(r"[^\w-]+")


def plain(text: str) -> str:
    """The text with each path or file name in it (a run without spaces that holds a name with an
    extension, or two slashes: src/cart.py, src/api/) read without its generic parts (PATH_NOISE:
    src, py), as a cited path's terms are: any two texts that name a file under src/ share them.
    Words joined by one slash (HTML/CSS, Java/Kotlin) stay words. Read so in a query and in a
    record's text alike. One pass over the text, however long a run it holds."""
    out = []
    for run in text.split():
        if run.count("/") + run.count("\\") >= 2 or _EXTENSION.search(run):
            run = " ".join(p for p in _NOT_WORD.split(run) if p.casefold() not in PATH_NOISE)
        out.append(run)
    return " ".join(out)


def written(text: str) -> dict[str, str]:
    """Each term of words(text) with the word that first gave it, case-folded as written (cooky:
    cookies), for a reason to name the word a person typed."""
    out: dict[str, str] = {}
    for word in _WORD.findall(unicodedata.normalize("NFC", text)):
        low = word.casefold()
        term = korean_stem(low) if _cjk(low) else stem(low)
        if _keep(term):
            out.setdefault(term, low)
    return out


def terms(text: str, path: bool = False, held: Callable[[str], bool] | None = None) -> set[str]:
    """The terms of text: its words (words()); an identifier also yields its parts
    (SESSION_COOKIE_SAMESITE: session, cookie, samesite; maxRetries: max, retry); a Hangul or
    other CJK stem also yields its character pairs (not a generic word's: 리팩토링 is one word).
    `path`: the text is paths, whose generic parts (extensions, `src`, `lib`) are left out. `held`
    (a query's terms, against an index): a stem that some record holds whole yields no pairs,
    which would match other words that merely share two characters with it (프로퍼티 and 프로세스)."""
    text = unicodedata.normalize("NFC", text)
    found = set()
    for word in _WORD.findall(text):
        low = word.casefold()
        if _cjk(low):
            base = korean_stem(low)
            found.add(base)
            if base in GENERIC_WORDS or (held is not None and held(base)):
                continue
            for run in _CJK.findall(base):
                found.update(run[i : i + 2] for i in range(len(run) - 1))
            continue
        found.add(stem(low))
        if _compound(word):
            for piece in word.split("_"):
                parts = _CAMEL.findall(piece) if piece.isascii() else [piece]
                found.update(stem(part.casefold()) for part in parts)
    found = {t for t in found if _keep(t)}
    if path:
        found -= PATH_NOISE
    return found


def shares(text: str, held: Callable[[str], bool]) -> dict[str, float]:
    """A query's terms (terms() with `held`, and version_numbers()), each with its share of a word:
    1, but for each of the `k` character pairs that a Hangul stem yields, 1/k (a stem split into
    pairs weighs about as much as one word, not once per pair). A pair that is also a word of the
    query is a word. A Korean word of KO_EN also brings its English words that some record holds,
    each with an equal part of KO_EN_SHARE (unless the query holds that English word itself)."""
    text = unicodedata.normalize("NFC", text)
    found = terms(text, held=held) | version_numbers(text)
    whole: set[str] = set()
    parts: dict[str, float] = {}
    english: dict[str, float] = {}
    for word in _WORD.findall(text):
        low = word.casefold()
        if not _cjk(low):
            continue
        base = korean_stem(low)
        whole.add(base)
        if base in GENERIC_WORDS:
            continue
        named = [stem(e) for e in code_names(base) if held(stem(e))]
        for term in named:
            english[term] = max(english.get(term, 0.0), KO_EN_SHARE / len(named))
        if held(base):
            continue
        pairs = {run[i : i + 2] for run in _CJK.findall(base) for i in range(len(run) - 1)} & found
        pairs.discard(base)
        for pair in pairs:
            parts[pair] = min(parts.get(pair, 0.0) + 1 / len(pairs), 1.0)
    shared = {term: 1.0 if term in whole else parts.get(term, 1.0) for term in found}
    return {**{t: w for t, w in english.items() if t not in found}, **shared}


def version_numbers(text: str) -> set[str]:
    """{VERSION_NUMBER} if text holds a version number, else nothing. A version number's own words
    (v2, 5, 0) seldom match another release's; this generic word, which every record naming a
    version holds, orders the records of earlier releases first for a release's query
    (docs/contract.md §4.2)."""
    return {VERSION_NUMBER} if _VERSION.search(text) else set()


# A path inside a folder of installed dependencies (Yarn's zero-install cache, node_modules, a
# vendor folder, a virtual environment): its name is a package's, not the project's words. Yarn's
# cache holds files such as `@algolia-cache-browser-local-storage-npm-4.22.1-8d6e0ef8e0.zip`, whose
# `local` and `storage` made a commit that upgraded the cache match a prompt about local storage.
DEPENDENCY_PATH = re.compile(
    r"(?:^|/)(?:node_modules|bower_components|jspm_packages|vendor|site-packages|\.venv|venv"
    r"|\.yarn/(?:cache|releases|unplugged|sdks|plugins)|\.pnp\.c?js$|\.pnp\.loader\.mjs$)(?:/|$)",
    re.IGNORECASE,
)


def path_terms(record: dict) -> set[str]:
    """The terms of the paths of the files a record cites (none from a path in a dependency folder:
    DEPENDENCY_PATH)."""
    cited = record.get("files")
    if not isinstance(cited, list):
        return set()
    return terms(" ".join(f for f in cited if isinstance(f, str) and not DEPENDENCY_PATH.search(f)), path=True)


def record_terms(record: dict) -> tuple[set[str], set[str]]:
    """(terms of the topic, terms of the text fields and of the paths of the files it cites)."""
    topic = terms(str(record.get("topic", "")))
    text = " ".join(str(record.get(k, "")) for k in ("missing_context", "lesson", "ask_next_time"))
    return topic, terms(plain(text)) | version_numbers(text) | path_terms(record)
