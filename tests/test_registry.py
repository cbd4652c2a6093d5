"""The generic ``Registry[T]``: every rule, on a throwaway registry with real entry points."""

from __future__ import annotations

import logging
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

import pytest

from assay.registry import DuplicateNameError, Registry, RegistryError, UnknownNameError

GROUP = "assay.test-widgets"


@dataclass(frozen=True)
class Widget:
    name: str
    aliases: tuple[str, ...] = ()
    payload: dict[str, int] = field(default_factory=dict)


def _is_widget(obj: object) -> TypeGuard[Widget]:
    return isinstance(obj, Widget)


def _name(widget: Widget) -> str:
    return widget.name


def _aliases(widget: Widget) -> tuple[str, ...]:
    return widget.aliases


def make(builtins: tuple[str, ...] = (), group: str | None = GROUP) -> Registry[Widget]:
    return Registry(
        "widget",
        accepts=_is_widget,
        group=group,
        builtins=builtins,
        name_of=_name,
        aliases_of=_aliases,
        hint=" (see `widgets list`)",
    )


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path for fake modules and installed distributions."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith("widgets_"):
            del sys.modules[name]


def module(site: Path, name: str, source: str) -> None:
    (site / f"{name}.py").write_text(textwrap.dedent(source))


def install(site: Path, dist: str, entries: dict[str, str]) -> None:
    """A real ``*.dist-info`` with entry points, found by ``importlib.metadata``."""
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "".join(f"{key} = {value}\n" for key, value in entries.items())
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{lines}")


# ----------------------------------------------------------------------------- names


def test_register_get_and_list_sorted() -> None:
    registry = make()
    b, a = Widget("b"), Widget("a")
    assert registry.register(b) is b  # returns the entry (decorator-friendly)
    registry.register(a)
    assert registry.get("a") is a and registry.find("b") is b
    assert registry.names() == ["a", "b"]
    assert registry.items() == [("a", a), ("b", b)]
    assert "a" in registry and "c" not in registry and len(registry) == 2


def test_aliases_resolve_to_the_entry() -> None:
    registry = make()
    widget = registry.register(Widget("content-similarity", aliases=("similarity", "cs")))
    assert registry.get("cs") is widget
    assert registry.canonical("similarity") == "content-similarity"
    assert registry.aliases() == {"similarity": "content-similarity", "cs": "content-similarity"}
    assert registry.names() == ["content-similarity"]  # aliases are not listed as entries


def test_explicit_name_and_aliases_override_the_entrys_own() -> None:
    registry = make()
    widget = registry.register(Widget("inner"), name="outer", aliases=("o",))
    assert registry.get("outer") is widget and registry.get("o") is widget
    assert registry.find("inner") is None


def test_a_registry_without_name_of_needs_a_name() -> None:
    registry: Registry[Widget] = Registry("thing", accepts=_is_widget)
    with pytest.raises(TypeError, match="needs name="):
        registry.register(Widget("x"))
    registry.register(Widget("x"), name="y")
    assert registry.names() == ["y"]


def test_empty_name_is_rejected() -> None:
    with pytest.raises(RegistryError, match="non-empty name"):
        make().register(Widget(""))


# ----------------------------------------------------------------------------- unknown


def test_unknown_name_suggests_names_and_aliases() -> None:
    registry = make()
    registry.register(Widget("faithfulness", aliases=("faithful",)))
    with pytest.raises(UnknownNameError) as excinfo:
        registry.get("faithfulnes")
    message = str(excinfo.value)
    assert message.startswith("unknown widget 'faithfulnes'; did you mean 'faithfulness'")
    assert message.endswith("(see `widgets list`)")
    assert isinstance(excinfo.value, KeyError) and isinstance(excinfo.value, ValueError)
    assert registry.suggest("faithfull") == ["faithful", "faithfulness"]


def test_unknown_name_without_close_matches_has_no_hint() -> None:
    with pytest.raises(UnknownNameError, match=r"^unknown widget 'zzz' \(see"):
        make().get("zzz")


def test_custom_error_classes() -> None:
    class UnknownWidget(UnknownNameError):
        pass

    class DuplicateWidget(DuplicateNameError):
        pass

    registry = Registry(
        "widget",
        accepts=_is_widget,
        name_of=_name,
        unknown_error=UnknownWidget,
        duplicate_error=DuplicateWidget,
    )
    registry.register(Widget("a"))
    with pytest.raises(UnknownWidget):
        registry.get("b")
    with pytest.raises(DuplicateWidget):
        registry.register(Widget("a"))


# ----------------------------------------------------------------------------- duplicates


def test_duplicate_name_raises_unless_replace() -> None:
    registry = make()
    registry.register(Widget("a", aliases=("old",)))
    with pytest.raises(DuplicateNameError, match="widget 'a' is already registered by code"):
        registry.register(Widget("a"))
    newer = registry.register(Widget("a", aliases=("new",)), replace=True)
    assert registry.get("a") is newer
    assert registry.find("old") is None  # the replaced entry's aliases go with it
    assert registry.get("new") is newer


def test_alias_clashes_follow_the_same_rule() -> None:
    registry = make()
    first = registry.register(Widget("a", aliases=("x",)))
    with pytest.raises(DuplicateNameError, match=r"'x' is already registered \(as an alias of"):
        registry.register(Widget("b", aliases=("x",)))
    with pytest.raises(DuplicateNameError, match="'x'"):
        registry.register(Widget("x"))  # a name may not hide another entry's alias
    assert registry.find("b") is None and registry.get("x") is first  # nothing half-added
    second = registry.register(Widget("b", aliases=("x",)), replace=True)  # moves the alias
    assert registry.get("x") is second and registry.get("a") is first
    with pytest.raises(DuplicateNameError, match="'a'"):  # an alias never hides a name
        registry.register(Widget("c", aliases=("a",)), replace=True)


def test_unregister_removes_the_entry_and_its_aliases() -> None:
    registry = make()
    widget = registry.register(Widget("a", aliases=("x",)))
    assert registry.unregister("x") is widget  # by alias too
    assert registry.find("a") is None and registry.find("x") is None
    assert registry.unregister("a") is None  # unknown: nothing to do
    registry.register(Widget("x"))  # the freed alias is a free name again


# ----------------------------------------------------------------------------- built-ins


def test_builtins_load_lazily_on_first_lookup(site: Path) -> None:
    module(
        site,
        "widgets_builtin",
        """
        from tests.test_registry import Widget, REGISTRY_UNDER_TEST as registry
        registry.register(Widget("builtin-a", aliases=("ba",)))
        """,
    )
    registry = make(builtins=("widgets_builtin",), group=None)
    _under_test(registry)
    assert "widgets_builtin" not in sys.modules  # creating the registry imports nothing
    assert registry.get("ba").name == "builtin-a"
    assert registry.origin("builtin-a") == "built-in"


def test_code_registration_loads_builtins_first_so_a_clash_is_found(site: Path) -> None:
    module(
        site,
        "widgets_builtin2",
        """
        from tests.test_registry import Widget, REGISTRY_UNDER_TEST as registry
        registry.register(Widget("tone"))
        """,
    )
    registry = make(builtins=("widgets_builtin2",), group=None)
    _under_test(registry)
    with pytest.raises(DuplicateNameError, match="'tone' is already registered by built-in"):
        registry.register(Widget("tone"))


def test_a_builtin_module_imported_directly_still_counts_as_built_in(site: Path) -> None:
    module(
        site,
        "widgets_direct",
        """
        from tests.test_registry import Widget, REGISTRY_UNDER_TEST as registry
        registry.register(Widget("direct"))
        """,
    )
    registry = make(builtins=("widgets_direct",), group=None)
    _under_test(registry)
    import widgets_direct  # noqa: F401  (before any lookup, as `from pkg.mod import x` does)

    assert registry.origin("direct") == "built-in"


# ----------------------------------------------------------------------------- lazy entries


def _lazy_builtins(site: Path, tag: str) -> Registry[Widget]:
    """A registry whose built-in package registers two placeholders; each placeholder's
    module registers its widget when imported."""
    module(
        site,
        f"widgets_{tag}_pkg",
        f"""
        from tests.test_registry import REGISTRY_UNDER_TEST as registry
        registry.register_lazy("alpha", "widgets_{tag}_alpha", aliases=("a1",))
        registry.register_lazy("beta", "widgets_{tag}_beta")
        registry.register_lazy("ghost", "widgets_{tag}_ghost")
        """,
    )
    for name, aliases in (("alpha", '("a1",)'), ("beta", "()")):
        module(
            site,
            f"widgets_{tag}_{name}",
            f"""
            from tests.test_registry import Widget, REGISTRY_UNDER_TEST as registry
            registry.register(Widget("{name}", aliases={aliases}))
            """,
        )
    module(site, f"widgets_{tag}_ghost", "X = 1\n")  # registers nothing
    registry = make(builtins=(f"widgets_{tag}_pkg",), group=None)
    _under_test(registry)
    return registry


def test_placeholders_list_and_suggest_without_importing(site: Path) -> None:
    registry = _lazy_builtins(site, "l1")
    assert registry.names() == ["alpha", "beta", "ghost"] and len(registry) == 3
    assert registry.canonical("a1") == "alpha" and registry.is_lazy("a1")
    assert registry.origin("beta") == "built-in"
    with pytest.raises(UnknownNameError, match="did you mean 'alpha'"):
        registry.get("alpah")
    assert "widgets_l1_alpha" not in sys.modules and "widgets_l1_beta" not in sys.modules


def test_get_imports_only_the_placeholders_module(site: Path) -> None:
    registry = _lazy_builtins(site, "l2")
    widget = registry.get("a1")  # by alias
    assert widget.name == "alpha" and registry.get("alpha") is widget
    assert "widgets_l2_alpha" in sys.modules and "widgets_l2_beta" not in sys.modules
    assert not registry.is_lazy("alpha") and registry.is_lazy("beta")
    assert registry.origin("alpha") == "built-in"
    assert registry.aliases() == {"a1": "alpha"}


def test_a_module_that_does_not_register_its_placeholder_is_an_error(site: Path) -> None:
    registry = _lazy_builtins(site, "l3")
    with pytest.raises(RegistryError, match="widgets_l3_ghost did not register the widget"):
        registry.get("ghost")
    assert "ghost" not in registry.names()  # the broken placeholder is gone


def test_items_imports_every_placeholder(site: Path) -> None:
    registry = _lazy_builtins(site, "l4")
    registry.names()
    registry.unregister("ghost")  # a placeholder can be removed like an entry
    assert [name for name, _ in registry.items()] == ["alpha", "beta"]
    assert "widgets_l4_alpha" in sys.modules and "widgets_l4_beta" in sys.modules


def test_code_taking_a_placeholders_name_meets_the_real_built_in(site: Path) -> None:
    registry = _lazy_builtins(site, "l5")
    with pytest.raises(DuplicateNameError, match="'beta' is already registered by built-in"):
        registry.register(Widget("beta"))
    assert "widgets_l5_beta" in sys.modules  # imported first, so the clash is the real one
    mine = registry.register(Widget("a1-taker", aliases=("x",)))
    replaced = registry.register(Widget("alpha"), replace=True)
    assert registry.get("alpha") is replaced and registry.get("x") is mine
    assert registry.origin("alpha") == "code"


def test_a_placeholder_module_imported_directly_fills_its_placeholder(site: Path) -> None:
    registry = _lazy_builtins(site, "l6")
    registry.names()  # the placeholders exist
    import widgets_l6_beta  # type: ignore[import-not-found]  # noqa: F401

    assert not registry.is_lazy("beta") and registry.origin("beta") == "built-in"


def test_a_plugin_using_a_placeholders_name_is_skipped(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    registry = _lazy_builtins(site, "l7")
    registry.group = GROUP
    module(
        site,
        "widgets_l7_plugin",
        """
        from tests.test_registry import Widget
        BETA = Widget("beta", payload={"plugin": 1})
        """,
    )
    install(site, "widgets-l7", {"beta": "widgets_l7_plugin:BETA"})
    with caplog.at_level(logging.WARNING, logger="assay.registry"):
        registry.reload_plugins()
    assert "taken by 'beta' (built-in)" in caplog.text
    assert registry.get("beta").payload == {}  # the built-in, imported on lookup


# ----------------------------------------------------------------------------- plugins


def test_plugin_entries_lists_and_modules_register(site: Path) -> None:
    module(
        site,
        "widgets_plugin",
        """
        from tests.test_registry import Widget, REGISTRY_UNDER_TEST as registry
        ONE = Widget("plugin-one")
        MANY = [Widget("plugin-two"), Widget("plugin-three")]
        registry.register(Widget("plugin-by-import"))  # a module registering on import
        """,
    )
    install(
        site,
        "widgets-plugin",
        {"one": "widgets_plugin:ONE", "many": "widgets_plugin:MANY", "mod": "widgets_plugin"},
    )
    registry = make()
    _under_test(registry)
    assert registry.names() == ["plugin-by-import", "plugin-one", "plugin-three", "plugin-two"]
    assert registry.origin("plugin-one") == "plugin one (widgets_plugin:ONE)"
    assert registry.origin("plugin-by-import").startswith("plugin ")


def test_plugins_never_replace_a_builtin_or_code(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    module(
        site,
        "widgets_clash",
        """
        from tests.test_registry import Widget
        TONE = Widget("tone", payload={"plugin": 1})
        MINE = Widget("mine", payload={"plugin": 1})
        ALIAS = Widget("fresh", aliases=("t",))
        """,
    )
    install(
        site,
        "widgets-clash",
        {"tone": "widgets_clash:TONE", "mine": "widgets_clash:MINE", "a": "widgets_clash:ALIAS"},
    )
    registry = make()
    builtin = registry.register(Widget("tone", aliases=("t",)))
    mine = registry.register(Widget("mine"))
    with caplog.at_level(logging.WARNING, logger="assay.registry"):
        registry.load()
    assert registry.get("tone") is builtin and registry.get("mine") is mine
    assert registry.find("fresh") is None  # its alias was taken: the whole entry is skipped
    assert "name 'tone' is taken by 'tone' (code); the plugin's entry is skipped" in caplog.text
    assert "alias 't' is taken" in caplog.text


def test_code_takes_a_name_over_from_a_plugin_with_a_warning(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    module(site, "widgets_first", "from tests.test_registry import Widget\nW = Widget('w')\n")
    install(site, "widgets-first", {"w": "widgets_first:W"})
    registry = make()
    assert registry.origin("w").startswith("plugin ")
    with caplog.at_level(logging.WARNING, logger="assay.registry"):
        mine = registry.register(Widget("w", payload={"mine": 1}))
    assert registry.get("w") is mine and registry.origin("w") == "code"
    assert "takes 'w' over from plugin w (widgets_first:W)" in caplog.text


def test_a_plugin_module_registering_a_taken_name_is_skipped_not_raised(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    module(
        site,
        "widgets_selfreg",
        """
        from tests.test_registry import Widget, REGISTRY_UNDER_TEST as registry
        registry.register(Widget("taken"))
        registry.register(Widget("other"))
        """,
    )
    install(site, "widgets-selfreg", {"mod": "widgets_selfreg"})
    registry = make()
    _under_test(registry)
    taken = registry.register(Widget("taken"))
    with caplog.at_level(logging.WARNING, logger="assay.registry"):
        registry.load()
    assert registry.get("taken") is taken and "other" in registry
    assert "the plugin's entry is skipped" in caplog.text


def test_broken_plugins_warn_and_the_registry_keeps_working(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    module(site, "widgets_wrong", "NOT_A_WIDGET = 42\n")
    install(
        site,
        "widgets-broken",
        {"missing": "no_such_module_for_widgets:X", "wrong": "widgets_wrong:NOT_A_WIDGET"},
    )
    registry = make()
    registry.register(Widget("fine"))
    with caplog.at_level(logging.WARNING, logger="assay.registry"):
        assert registry.names() == ["fine"]
    assert "could not load widget plugin missing (no_such_module_for_widgets:X)" in caplog.text
    assert "widget plugin wrong (widgets_wrong:NOT_A_WIDGET) holds 'int'" in caplog.text


def test_plugin_entries_take_the_entry_point_name_without_name_of(site: Path) -> None:
    module(site, "widgets_factory", "def build(name):\n    return name.upper()\n")
    install(site, "widgets-factory", {"shout": "widgets_factory:build"})

    def is_factory(obj: object) -> TypeGuard[object]:
        return callable(obj)

    registry: Registry[object] = Registry("factory", accepts=is_factory, group=GROUP)
    factory = registry.get("shout")
    assert callable(factory) and factory("x") == "X"


def test_reload_plugins_finds_new_plugins_and_keeps_the_old(site: Path) -> None:
    module(site, "widgets_late", "from tests.test_registry import Widget\nW = Widget('late')\n")
    registry = make()
    mine = registry.register(Widget("mine"))
    assert registry.names() == ["mine"]  # plugins scanned: none yet
    install(site, "widgets-late", {"late": "widgets_late:W"})
    assert registry.names() == ["mine"]  # scanned once, not on every lookup
    registry.reload_plugins()
    registry.reload_plugins()  # the same entry again is not a clash
    assert registry.names() == ["late", "mine"] and registry.get("mine") is mine


# ----------------------------------------------------------------------------- helpers

REGISTRY_UNDER_TEST: Registry[Widget] = make(group=None)
"""The registry fake built-in and plugin modules register into (see ``_under_test``)."""


def _under_test(registry: Registry[Widget]) -> None:
    global REGISTRY_UNDER_TEST
    REGISTRY_UNDER_TEST = registry
