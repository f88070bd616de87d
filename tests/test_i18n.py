"""Tests for specviz.i18n: every key the app uses exists, and catalogues agree."""

import ast
import json
import re
import string
from pathlib import Path

import pytest

from specviz import i18n
from specviz.errors import Notice, SpecvizError

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "app.py", *sorted((ROOT / "pages").rglob("*.py")), *sorted((ROOT / "specviz").rglob("*.py"))]
# A message key: dotted lower-case words whose first word names a namespace of the catalogue.
KEY = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+")
NOT_KEYS = (".py", ".json", ".csv", ".prom", ".duckdb", ".txt")
# Keys whose Vietnamese is the English text on purpose: names (GPU, vLLM, EAGLE, SQL), symbols, units,
# templates of values only, and the terms a Vietnamese ML engineer reads in English (batch, engine,
# draft, replica, roofline, TTFT). Any other English left in vi.json is an untranslated string.
SAME_IN_VIETNAMESE = {
    "calibration.name.batch", "calibration.name.gamma", "calibration.name.context",  # terms the sidebar keeps
    "claims.sentence_placeholder",  # an English slide's sentence, as a user pastes one
    "side.gpu", "command.quantizers.amd", "side.preset_value", "side.draft", "side.draft.eagle3", "side.draft.eagle", "side.engine",
    "side.precision.bf16", "side.language", "calc.off_preset_knob", "calc.tab.heatmap",
    "calc.tab.roofline", "calc.serve.engine", "calc.serve.engine.vllm", "calc.serve.engine.sglang", "calc.serve.engine.trtllm", "col.alpha",
    "col.gamma", "col.memory_bound", "col.engine", "col.gpu", "col.batch", "chart.alpha", "chart.pass",
    "chart.ridge", "chart.acceptance",
    "col.p50_ttft_ms", "col.p90_ttft_ms", "col.p99_ttft_ms", "col.p50_itl_ms", "col.p90_itl_ms", "col.p99_itl_ms",
    "col.p50_tpot_ms", "col.p90_tpot_ms", "col.p99_tpot_ms", "exp.report.warning", "exp.tab.sql",
    "hf_config.bound.field", "hf_config.bound.last", "side.group.dense", "side.group.moe", "side.component.attention",
    "side.served.attention", "side.served.mlp",
    "side.kv_format", "col.kv_dtype",
    "col.p1", "col.p10", "col.p50", "col.p90", "col.p99", "exp.tab.acceptance", "exp.tab.baseline",
    "calc.batch", "chart.batch", "live.m.length", "live.m.acceptance_rate", "live.since_start_alpha",
    "calc.m.best_gamma_value",
    # The command line's templates of values only; argparse's own message, which is English.
    "cli.parser", "cli.link", "cli.link.option", "cli.link.takes", "cli.list", "cli.fit.cell",
}
# One Vietnamese word for one concept: each of these was written beside the word the app uses for it
# (the app's word, then the ones it replaced).
VIETNAMESE_TERMS = {
    "lượt chạy": ("lần chạy", "các run", "mỗi run", "một run", "run của", "run được", "run không"),
    "file": ("tệp",), "tỷ lệ": ("tỉ lệ",), "chuỗi": ("sequence",), "request": ("yêu cầu lỗi", "số yêu cầu", "trọn yêu cầu"),
    "draft": ("nháp",), "verify": ("xác minh",),
    "mức tăng tốc": ("speedup",), "batch size": ("kích thước batch",), "thiết lập": ("tên setting",),
    "acceptance length": ("độ dài chấp nhận",), "acceptance": ("tỷ lệ chấp nhận",), "tuỳ": ("tùy",), "xoá": ("xóa",),
    "trang Trực tiếp, Kiểm chứng, tab Độ trễ": ("trang Live", "và Claims", "view Latency"),
    # A Vietnamese reader's pass: both spellings side by side on one chart, English words left in.
    "hoà vốn": ("hòa vốn",), "lượng tử hoá": ("lượng tử hóa",), "cường độ số học": ("arithmetic intensity",),
    "được chấp nhận/đã draft": ("accepted/drafted", "accepted / drafted"),
}


def namespaces() -> set[str]:
    return {key.split(".")[0] for key in i18n.catalogue("en")}


def used_keys() -> tuple[set[str], set[str]]:
    """Every key the code names, read from its syntax tree: string constants shaped like a key in a
    namespace of the catalogue (arguments of t(), md(), SpecvizError(), Notice(), or values of a
    table of keys), and the constant heads of f-strings shaped so (keys built from variables, such as
    ``f"calc.tab.{name}"``), as prefixes."""
    spaces, static, prefixes = namespaces(), set(), set()
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                if KEY.fullmatch(text) and text.split(".")[0] in spaces:
                    static.add(text)
            elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                head = str(node.values[0].value)
                if re.fullmatch(r"[a-z][a-z0-9_]*\.(?:[a-z0-9_]+\.)*", head) and head.split(".")[0] in spaces:
                    prefixes.add(head)
    return static, prefixes


def fields(text: str) -> dict[str, set[str]]:
    """Each placeholder's name and its format specs, where it appears other than as a plural (a
    language without plural forms writes the word once, and drops the plural field)."""
    found: dict[str, set[str]] = {}
    for _, name, spec, _ in string.Formatter().parse(text):
        if name is not None and not (spec or "").startswith("plural "):
            found.setdefault(name, set()).add(spec or "")
            # A spec's own fields ("{count:.{places}f}"): given as numbers.
            for _, nested, _, _ in string.Formatter().parse(spec or ""):
                if nested is not None:
                    found.setdefault(nested, set()).add("")
    return found


def names(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


class TestCatalogue:
    def test_every_key_the_code_names_exists_in_english(self):
        static, _ = used_keys()
        assert len(static) > 400  # the scan sees the code
        # File names share the shape (live.py, scrape.json): a name that is not a key is one.
        assert not {k for k in static - i18n.catalogue("en").keys() if not k.endswith(NOT_KEYS)}

    def test_every_built_key_has_entries(self):
        _, prefixes = used_keys()
        assert "calc.tab." in prefixes
        for prefix in prefixes:
            assert any(k.startswith(prefix) for k in i18n.catalogue("en")), prefix

    def test_every_english_key_is_used(self):
        static, prefixes = used_keys()
        unused = {k for k in i18n.catalogue("en") if k not in static and not k.startswith(tuple(prefixes))}
        assert not unused

    @pytest.mark.parametrize("lang", sorted(i18n.LANGUAGES))
    def test_every_language_has_the_same_keys_and_placeholders(self, lang):
        english, other = i18n.catalogue("en"), i18n.catalogue(lang)
        assert list(other) == list(english)
        assert not [k for k in english if fields(other[k]) != fields(english[k]) or not names(other[k]) <= names(english[k])]

    def test_vietnamese_is_english_only_for_names_and_terms(self):
        english, vietnamese = i18n.catalogue("en"), i18n.catalogue("vi")
        assert sorted(k for k in english if vietnamese[k] == english[k] and k not in SAME_IN_VIETNAMESE) == []

    def test_vietnamese_writes_numbers_as_the_app_formats_them(self):
        """The app formats its figures with a decimal point, thousands with a comma and the percent sign
        against the number (0.80, 1.51×, 19,404, 11.3%); a sentence wrote "α 0,8 cho 2,39×" and
        "15–30 %" beside them, and the presets' Vietnamese notes "BF16 2.250 ... 8,0 TB/s" beside the
        sidebar's "8.0" (2.250 reads as 2.25 there). The shipped tables' Vietnamese columns too."""
        import csv
        texts = [re.sub(r"\{[^}]*\}", "", text) for text in i18n.catalogue("vi").values()]
        for path in sorted((ROOT / "data").glob("*.csv")):
            with open(path, newline="", encoding="utf-8") as handle:
                texts += [value for row in csv.DictReader(handle) for column, value in row.items() if column.endswith("_vi")]
        decimal_comma = r"(?<![\d,])\d+,\d{1,2}(?!\d)|\d %"
        thousands_dot = r"(?<![\w.,])(?!1\.000\b)[1-9]\d{0,2}(?:\.\d{3})+(?![\d.])"  # 1.000: α's upper end
        assert not [text for text in texts if re.search(f"{decimal_comma}|{thousands_dot}", text)]

    @pytest.mark.parametrize("term, others", VIETNAMESE_TERMS.items())
    def test_vietnamese_names_one_concept_with_one_word(self, term, others):
        texts = {key: re.sub(r"\{[^}]*\}", "", text) for key, text in i18n.catalogue("vi").items()}
        pattern = re.compile(r"(?<![\w.=_/-])(?:" + "|".join(map(re.escape, others)) + r")(?![\w_=.]\w)", re.IGNORECASE)
        assert sorted(key for key, text in texts.items() if pattern.search(text)) == []

    @pytest.mark.parametrize("key, most", [("chart.no_fit_draft", 6), ("col.speedup_low", 20), ("col.speedup_high", 20)])
    def test_vietnamese_fits_a_narrow_window(self, key, most):
        """At 800 px the draft-length map's cells are some 24 px wide ("không vừa" ran over its
        neighbours) and the best-γ table's speedup headers pushed its last column out of sight."""
        assert len(i18n.t(key, "vi")) <= most

    @pytest.mark.parametrize("key", ["col.speedup_low", "col.speedup_high"])
    def test_english_fits_a_narrow_window_too(self, key):
        """The English headers, "Speedup over the range, at its worst batch", hid the best batch's
        column at 800 px (DeepSeek-V3 + MTP on 8 B200s, Deploy); the caption under the table says
        what the two columns are."""
        assert len(i18n.t(key, "en")) <= 15

    @pytest.mark.parametrize("lang", sorted(i18n.LANGUAGES))
    def test_every_string_renders(self, lang):
        for key, text in i18n.catalogue(lang).items():
            values = {name: 2 for name in fields(i18n.catalogue("en")[key])}
            try:
                i18n.t(key, lang, **values)
            except (ValueError, TypeError):  # a text placeholder given a number: try text
                i18n.t(key, lang, **{name: "x" for name in values})

    def test_files_are_valid_json_objects(self):
        for path in (ROOT / "specviz" / "locales").glob("*.json"):
            assert isinstance(json.loads(path.read_text()), dict)


class TestT:
    def test_formats_values(self):
        assert i18n.t("side.ridge", ridge=295.3, dtype="BF16").startswith("Ridge point: 295 FLOP/byte (BF16 peak")

    def test_unknown_key(self):
        with pytest.raises(KeyError):
            i18n.t("no.such.key")

    def test_unknown_language(self):
        with pytest.raises(KeyError, match="xx"):
            i18n.t("calc.title", "xx")


class TestPresetText:
    ROW = {"id": "Trainium2", "name": "AWS Trainium2 (one chip)", "name_vi": "AWS Trainium2 (một chip)",
           "note": "a note", "note_vi": " "}

    def test_from_row_takes_the_filled_language_columns(self):
        name = i18n.PresetText.from_row(self.ROW, "name")
        assert name == "AWS Trainium2 (one chip)" and name.translations == {"vi": "AWS Trainium2 (một chip)"}
        assert i18n.PresetText.from_row(self.ROW, "note").translations == {}  # blank: reads the same

    def test_a_string_everywhere_and_in_language_where_asked(self):
        name = i18n.PresetText.from_row(self.ROW, "name")
        assert json.dumps({"gpu": name}) == '{"gpu": "AWS Trainium2 (one chip)"}'
        assert {name: 1}["AWS Trainium2 (one chip)"] == 1
        assert i18n.in_language(name, "vi") == "AWS Trainium2 (một chip)"
        assert i18n.in_language(name, "en") == name and i18n.in_language("plain", "vi") == "plain"

    def test_a_message_shows_it_in_its_own_language(self):
        name = i18n.PresetText.from_row(self.ROW, "name")
        assert "AWS Trainium2 (một chip)" in i18n.t("scenario.gpu_incomplete", "vi", gpu=name)
        assert "AWS Trainium2 (one chip)" in i18n.t("scenario.gpu_incomplete", "en", gpu=name)

    def test_markdown_shows_it_in_the_message_s_language(self):
        """md() and message() escaped a preset's text as its English string: the Claims page's verdict
        named the engine "vLLM V1 (CUDA graphs)" on the Vietnamese page."""
        name = i18n.PresetText("vLLM V1 (CUDA graphs)", {"vi": "vLLM V1 (có CUDA graphs)"})
        assert i18n.md("scenario.gpu_incomplete", "vi", gpu=name) == i18n.t("scenario.gpu_incomplete", "vi",
                                                                       gpu="vLLM V1 \\(có CUDA graphs\\)")
        assert "(CUDA graphs)" in i18n.message(Notice("scenario.gpu_incomplete", gpu=name), "en").replace("\\", "")
        assert "có CUDA graphs" in i18n.message(Notice("scenario.gpu_incomplete", gpu=name), "vi")

    def test_survives_a_copy_and_a_pickle(self):
        import copy
        import pickle
        name = i18n.PresetText.from_row(self.ROW, "name")
        for twin in (copy.deepcopy(name), pickle.loads(pickle.dumps(name))):
            assert twin == name and twin.translations == name.translations

    @pytest.mark.parametrize("table", ["gpus", "engines", "workloads", "models", "published_acceptance"])
    def test_every_shipped_description_has_vietnamese(self, table):
        # A note is prose; a name's words in parentheses describe it ("(one chip)"). Product names
        # ("NVIDIA B200 (HGX)") read the same, and a data set's name ("MT-Bench"), not its words ("not stated").
        import csv
        with open(ROOT / "data" / f"{table}.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        described = {"name": r"\(.*[a-z]{3}", "dataset": r"\b[a-z]{2,} [a-z]{2,}"}
        for row in rows:
            for field in ("name", "note", "source", "dataset"):
                if field in row and f"{field}_vi" in row and re.search(described.get(field, "."), row[field]):
                    assert row[f"{field}_vi"].strip(), f"{table}.csv {row.get('id', row.get('target'))}: {field}_vi is empty"
            if table == "workloads":
                assert row["name_vi"].strip() and row["name_vi"] != row["name"]


class TestPlural:
    def test_a_count_picks_its_words(self):
        assert i18n.t("exp.report.imported", file="a.csv", format="csv", runs=1, requests=0) == \
            "a.csv: csv, 1 run and 0 per-request rows imported."
        assert i18n.t("exp.report.imported", file="a.csv", format="csv", runs=2, requests=1) == \
            "a.csv: csv, 2 runs and 1 per-request row imported."
        assert i18n.t("exp.no_load", runs=1).startswith("1 run has neither")
        assert i18n.t("exp.no_load", runs=3).endswith("a place for them:")


class TestMessageValues:
    """A value that is itself a message (a Notice) is rendered in the same language as the message."""

    def test_t_renders_a_notice_value_in_the_same_language(self):
        kind = Notice("hf_config.kind.list_holding", item=Notice("hf_config.kind.object"))
        english = i18n.t("hf_config.layers", "en", file="config.json", field="f", low=0, bound="9", problem=kind)
        vietnamese = i18n.t("hf_config.layers", "vi", file="config.json", field="f", low=0, bound="9", problem=kind)
        assert english.endswith("got a list holding an object")
        assert vietnamese.endswith(i18n.t("hf_config.kind.list_holding", "vi", item=i18n.t("hf_config.kind.object", "vi")))
        assert "a list holding" not in vietnamese and "an object" not in vietnamese

    def test_md_and_message_escape_the_notice_s_values_not_its_words(self):
        error = SpecvizError("prometheus.not_api", source="http://x",
                             detail=Notice("prometheus.detail.result_type", found="*matrix*", expected="vector"))
        text = i18n.message(error, "vi")
        assert i18n.t("prometheus.detail.result_type", "vi", found="\\*matrix\\*", expected="vector") in text
        assert "result type" not in text
        assert str(error).startswith("http://x: the answer is not Prometheus's HTTP API (result type *matrix*, not vector)")
        point = SpecvizError("prometheus.not_api", source="x", detail=Notice("prometheus.detail.not_a_point"))
        assert "(a point is not [time, value])" in i18n.message(point, "en")  # catalogue text, as it is

    def test_a_notice_holding_a_notice_is_stored_as_json(self):
        notice = Notice("store.live_no_windows", source="s", start="a", end="b", model=Notice("store.any_model"))
        stored = json.loads(json.dumps(notice.to_json()))
        assert stored == {"key": "store.live_no_windows",
                          "params": {"source": "s", "start": "a", "end": "b",
                                     "model": {"key": "store.any_model", "params": {}}}}


class TestVisible:
    @pytest.mark.parametrize("text, shown", [
        ("bidi_\u202eslx.csv", "bidi_\\u202eslx.csv"),  # read as "bidi_vsc.xls" where the override is obeyed
        ("a\u200bb\u200dc\ufeff", "a\\u200bb\\u200dc\\ufeff"), ("\u2066x\u2069", "\\u2066x\\u2069"),
        ("bell\x07", "bell\\x07"), ("tab\tand\nline", "tab\tand\nline"), ("Tiếng Việt ✓", "Tiếng Việt ✓")])
    def test_invisible_characters_are_shown_as_escapes(self, text, shown):
        assert i18n.visible(text) == shown

    def test_markdown_shows_them_and_keeps_a_link_literal_and_copyable(self):
        """escape_markdown shows the text's invisible characters; a URL, an e-mail address or a www. name
        becomes a code span, which Streamlit does not link and which copies as it is (a word joiner
        after the colon had broken every copied URL: an SRE's pass)."""
        assert i18n.escape_markdown("x\u2060 http://h") == "x\\\\u2060 `http://h`"
        assert i18n.escape_markdown("(see http://127.0.0.1:18001/metrics).") == \
            "\\(see `http://127.0.0.1:18001/metrics`\\)\\."
        assert i18n.escape_markdown("a@b.com, www.x.com and *b*") == "`a@b.com`\\, `www.x.com` and \\*b\\*"
        # A backtick in the word cannot close its span: the fence is longer than any run in it.
        assert i18n.escape_markdown("`x`http://h`") == "`` `x`http://h` ``"
        assert "\u2060" not in i18n.escape_markdown("mail a@b or http://h")
        assert "\u202e" not in i18n.md("ingest.csv_no_rows", file="bidi_\u202eslx.csv")

    def test_markdown_keeps_a_name_on_its_line_and_its_bold_closed(self):
        """An attack pass: a model's name with a line break split the Live page's heading in two, and one
        ending in a blank left "**…**" showing its asterisks. The break is shown as its escape; a blank
        at either end as a character reference, which renders as itself and lets the bold close."""
        assert i18n.escape_markdown("a\nb\r") == "a\\\\nb\\\\r"
        assert i18n.escape_markdown(" model ") == "&#32;model&#32;"
        assert i18n.escape_markdown("\tm") == "&#9;m"
        assert i18n.escape_markdown("in the middle") == "in the middle" and i18n.escape_markdown("  ") == "  "
