"""One generic registry of named things: ``Registry[T]``.

Every extensible family in assay is a ``Registry``: scorer types (``assay.scoring.registry``,
entry-point group ``assay.scorers``) and model providers (``assay.models.resolve``, group
``assay.models``); filters (``assay.filters``), metrics (``assay.metrics``) and tasks are
meant to be the next. This module sits at the bottom of the package: it imports nothing of
assay's, so any room may own a registry.

The rules, the same for every registry:

Names
    An entry has one name and optional aliases; every lookup accepts either. Names and
    aliases share one namespace (an alias can never hide another entry's name). Listing is
    by name, sorted.

Loading
    Nothing is imported when the registry is created. The first lookup imports the
    built-in modules (each registers its entries when imported, e.g. with a decorator),
    then the entry-point plugins of the registry's group. Registering from code imports the
    built-ins first, so a clash with a built-in is reported at once, whatever the import
    order.

Lazy entries
    A built-in module may register placeholders instead of importing its entries' modules:
    ``register_lazy("exact-match", "assay.scorers.exact_match")`` (lm-eval's registry does
    the same with ``"module:object"`` strings). Names, aliases, "did you mean" and
    ``origin`` answer from the placeholder; ``get``/``find`` import the one module, whose own
    registration replaces the placeholder; ``items`` imports them all. So looking up one
    scorer does not import every scorer module. A name held by a placeholder is a built-in
    for every rule below: registering it from code imports its module first (the clash is
    reported as before), a plugin using it is skipped.

Duplicates (one rule)
    Registering a name or alias that is taken raises ``DuplicateNameError`` unless
    ``replace=True``, which replaces the entry (and drops the replaced entry's aliases).

Plugins never replace anything
    A plugin entry whose name or alias is taken (by a built-in, by the user's code, or by
    a plugin loaded earlier) is skipped with a warning. Code that registers a name held by
    a plugin takes it over, also with a warning. So built-ins and the user's own
    registrations win over plugins, whichever was loaded first.

Broken plugins
    A plugin that fails to import, or whose entry point holds something that is not an
    entry, is skipped with a warning; assay keeps working. An entry point may name one
    entry, a list or tuple of entries, or a module that registers its entries itself when
    imported. A registry whose entries do not carry their own name (e.g. model provider
    factories) registers a plugin's entry under the entry point's name.

Unknown names
    ``get`` raises ``UnknownNameError`` (a ``KeyError`` and a ``ValueError``) with "did you
    mean" suggestions from ``difflib`` over the names and aliases.

``unregister`` removes an entry with its aliases; ``reload_plugins`` scans the entry points
again (for long-lived processes that installed a plugin, and for tests); entries already
registered stay as they are.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Generic, Literal, TypeGuard, TypeVar

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

log = logging.getLogger(__name__)

T = TypeVar("T")

BUILTIN = "built-in"
CODE = "code"


class RegistryError(ValueError):
    """Base of registry errors."""


class UnknownNameError(RegistryError, KeyError):
    """No entry under that name or alias; the message suggests close names."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class DuplicateNameError(RegistryError):
    """The name or alias is taken (pass ``replace=True`` to replace the entry)."""


class Registry(Generic[T]):
    """Named entries of type ``T`` with aliases, lazily loaded built-ins and plugins.

    ``kind`` names an entry in messages (``"scorer type"``). ``group`` is the entry-point
    group plugins register under; ``builtins`` the modules whose import registers the
    built-in entries. ``accepts`` tells an entry from anything else a plugin might hold;
    ``name_of``/``aliases_of`` read an entry's own name and aliases (without ``name_of``,
    ``register`` needs ``name=`` and plugin entries take their entry point's name).
    ``hint`` ends the unknown-name message (``" (see `assay scorers list`)"``);
    ``unknown_error``/``duplicate_error`` let a registry raise its own subclasses.
    """

    def __init__(
        self,
        kind: str,
        *,
        accepts: Callable[[object], TypeGuard[T]],
        group: str | None = None,
        builtins: Sequence[str] = (),
        name_of: Callable[[T], str] | None = None,
        aliases_of: Callable[[T], Iterable[str]] | None = None,
        hint: str = "",
        unknown_error: type[UnknownNameError] = UnknownNameError,
        duplicate_error: type[DuplicateNameError] = DuplicateNameError,
    ) -> None:
        self.kind = kind
        self.group = group
        self.builtins = tuple(builtins)
        self._accepts = accepts
        self._name_of = name_of
        self._aliases_of = aliases_of
        self._hint = hint
        self._unknown_error = unknown_error
        self._duplicate_error = duplicate_error
        self._entries: dict[str, T] = {}
        self._lazy: dict[str, str] = {}  # a placeholder's name -> the module registering it
        self._lazy_modules: set[str] = set()  # every module a placeholder ever named
        self._aliases: dict[str, tuple[str, ...]] = {}
        self._alias_to: dict[str, str] = {}
        self._origins: dict[str, str] = {}
        self._builtins_state: Literal["pending", "loading", "done"] = "pending"
        self._plugins_loaded = False
        self._plugin_source: str | None = None
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ registering
    def register(
        self,
        entry: T,
        *,
        name: str | None = None,
        aliases: Iterable[str] | None = None,
        replace: bool = False,
    ) -> T:
        """Add ``entry`` under ``name`` (default: its own name) and its aliases.

        A taken name or alias raises ``DuplicateNameError`` unless ``replace``. Called while
        a plugin is being imported, the entry counts as the plugin's: a clash skips it with a
        warning instead of raising. Returns ``entry`` (so it works inside decorators).
        """
        with self._lock:
            self._load_builtins()
            source = self._plugin_source or (BUILTIN if self._in_builtins() else CODE)
            self._add(entry, name, aliases, source=source, replace=replace)
            return entry

    def register_lazy(self, name: str, module: str, *, aliases: Iterable[str] = ()) -> None:
        """A placeholder for the entry that importing ``module`` registers under ``name``
        (with these ``aliases``); the module is imported on the first ``get`` of the name.

        Meant for the built-in modules' package (called while the registry loads its
        built-ins); the rules for taken names are those of ``register``.
        """
        with self._lock:
            self._load_builtins()
            if not name or not module:
                raise RegistryError(f"a lazy {self.kind} needs a name and a module")
            source = BUILTIN if self._in_builtins() else CODE
            for key in (name, *aliases):
                holder = self._holder(key)
                if holder is not None:
                    raise self._duplicate_error(
                        f"{self.kind} {key!r} is already registered by {self._origins[holder]}"
                    )
            self._lazy[name] = module
            self._lazy_modules.add(module)
            alias_list = tuple(dict.fromkeys(a for a in aliases if a != name))
            self._aliases[name] = alias_list
            for alias in alias_list:
                self._alias_to[alias] = name
            self._origins[name] = source

    def unregister(self, name: str) -> T | None:
        """Remove the entry named ``name`` (or aliased so) and its aliases; ``None`` if
        there was none."""
        with self._lock:
            canonical = self._canonical(name)
            if canonical is None:
                return None
            return self._remove(canonical)

    def reload_plugins(self) -> None:
        """Scan the entry-point group again; new plugins register, registered ones stay."""
        with self._lock:
            self._load_builtins()
            self._plugins_loaded = True
            self._load_plugins()

    # ------------------------------------------------------------------ looking up
    def get(self, name: str) -> T:
        """The entry named or aliased ``name``; unknown names get a "did you mean"."""
        return self._resolve(self._known(name))

    def find(self, name: str) -> T | None:
        """The entry named or aliased ``name``, or ``None``."""
        self.load()
        canonical = self._canonical(name)
        return None if canonical is None else self._resolve(canonical)

    def canonical(self, name: str) -> str | None:
        """The entry's name for a name or an alias, or ``None``."""
        self.load()
        return self._canonical(name)

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Names and aliases close to ``name`` (for "did you mean" messages)."""
        self.load()
        candidates = [*self._entries, *self._lazy, *self._alias_to]
        return difflib.get_close_matches(name, candidates, n=n, cutoff=0.5)

    def names(self) -> list[str]:
        """Every entry's name, sorted (placeholders included, nothing imported)."""
        self.load()
        return sorted({*self._entries, *self._lazy})

    def items(self) -> list[tuple[str, T]]:
        """``(name, entry)`` pairs sorted by name (imports every placeholder's module)."""
        self.load()
        for name in list(self._lazy):
            if name in self._lazy:  # one module may register several placeholders
                self._resolve(name)
        return [(key, self._entries[key]) for key in sorted(self._entries)]

    def is_lazy(self, name: str) -> bool:
        """Whether ``name`` (or the entry it aliases) is a placeholder not imported yet."""
        return self.canonical(name) in self._lazy

    def aliases(self) -> dict[str, str]:
        """Every alias with the name it stands for."""
        self.load()
        return dict(self._alias_to)

    def origin(self, name: str) -> str:
        """Where an entry came from: ``built-in``, ``code`` or ``plugin NAME (VALUE)``."""
        return self._origins[self._known(name)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def __len__(self) -> int:
        self.load()
        return len(self._entries) + len(self._lazy)

    def __repr__(self) -> str:
        entries = len(self._entries) + len(self._lazy)
        return f"Registry({self.kind!r}, group={self.group!r}, entries={entries})"

    # ------------------------------------------------------------------ loading
    def load(self) -> None:
        """Import the built-ins and the plugins, once (every lookup calls this)."""
        if self._plugins_loaded and self._builtins_state == "done":
            return
        with self._lock:
            self._load_builtins()
            if not self._plugins_loaded:
                self._plugins_loaded = True
                self._load_plugins()

    def _load_builtins(self) -> None:
        if self._builtins_state != "pending":
            return
        self._builtins_state = "loading"
        try:
            for module in self.builtins:
                importlib.import_module(module)
        except BaseException:
            self._builtins_state = "pending"
            raise
        self._builtins_state = "done"

    def _load_plugins(self) -> None:
        if self.group is None:
            return
        from importlib.metadata import entry_points  # scanned on first lookup only

        for ep in entry_points(group=self.group):
            self._load_plugin(ep)

    def _load_plugin(self, ep: EntryPoint) -> None:
        source = f"plugin {ep.name} ({ep.value})"
        self._plugin_source = source
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plugin must not break assay
            log.warning("could not load %s plugin %s (%s): %s", self.kind, ep.name, ep.value, exc)
            return
        finally:
            self._plugin_source = None
        if isinstance(obj, ModuleType):
            return  # a module registers its entries itself when imported
        entries = list(obj) if isinstance(obj, list | tuple) else [obj]
        for entry in entries:
            if self._accepts(entry):
                name = ep.name if self._name_of is None else None
                self._add(entry, name, None, source=source, replace=False)
            else:
                log.warning(
                    "%s plugin %s (%s) holds %r, not a %s; skipped",
                    self.kind,
                    ep.name,
                    ep.value,
                    type(entry).__name__,
                    self.kind,
                )

    # ------------------------------------------------------------------ internals
    def _in_builtins(self) -> bool:
        """Whether a built-in module is being imported (by the registry, or directly)."""
        if self._builtins_state == "loading":
            return True
        for name in (*self.builtins, *self._lazy_modules):
            spec = getattr(sys.modules.get(name), "__spec__", None)
            if getattr(spec, "_initializing", False):
                return True
        return False

    def _resolve(self, name: str) -> T:
        """The entry of the canonical ``name``, importing its placeholder's module first."""
        entry = self._entries.get(name)
        if entry is not None:
            return entry
        module = self._lazy.get(name)
        if module is None:
            raise self._unknown_error(f"unknown {self.kind} {name!r}{self._hint}")
        # outside the lock: the import takes Python's module lock, and a thread importing
        # the module directly registers (takes our lock) while holding it
        importlib.import_module(module)
        with self._lock:
            entry = self._entries.get(name)
            if entry is not None:
                return entry
            if self._lazy.pop(name, None) is not None:
                self._drop_names(name)
            raise RegistryError(f"{module} did not register the {self.kind} {name!r}")

    def _known(self, name: str) -> str:
        """The entry's name for ``name``; unknown names raise with a "did you mean"."""
        canonical = self.canonical(name)
        if canonical is not None:
            return canonical
        close = self.suggest(name)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise self._unknown_error(f"unknown {self.kind} {name!r}{hint}{self._hint}")

    def _canonical(self, name: str) -> str | None:
        if name in self._entries or name in self._lazy:
            return name
        return self._alias_to.get(name)

    def _holder(self, key: str) -> str | None:
        """The entry name that ``key`` (as a name or an alias) belongs to."""
        return key if key in self._entries or key in self._lazy else self._alias_to.get(key)

    def _add(
        self,
        entry: T,
        name: str | None,
        aliases: Iterable[str] | None,
        *,
        source: str,
        replace: bool,
    ) -> None:
        if name is None:
            if self._name_of is None:
                raise TypeError(f"registering a {self.kind} needs name=")
            name = self._name_of(entry)
        if not isinstance(name, str) or not name:
            raise RegistryError(f"a {self.kind} needs a non-empty name, got {name!r}")
        if aliases is None:
            aliases = self._aliases_of(entry) if self._aliases_of is not None else ()
        alias_list = tuple(dict.fromkeys(a for a in aliases if a != name))
        plugin = source.startswith("plugin ")
        if plugin and self._entries.get(name) is entry:
            return  # the same plugin entry again (reload_plugins)
        if source == BUILTIN and name in self._lazy:
            del self._lazy[name]  # the module fills its own placeholder
            self._drop_names(name)
        elif not plugin:
            # code that takes a name held by a placeholder meets the real built-in: import
            # it first, so the usual rules (duplicate, replace) apply to the real entry
            for key in (name, *alias_list):
                holder = self._holder(key)
                if holder is not None and holder in self._lazy:
                    self._resolve(holder)
        displaced: dict[str, str] = {}
        for key in (name, *alias_list):
            holder = self._holder(key)
            if holder is None:
                continue
            what = "name" if key == name else "alias"
            held_by = self._origins[holder]
            if plugin:
                log.warning(
                    "%s %s: %s %r is taken by %r (%s); the plugin's entry is skipped",
                    self.kind,
                    source,
                    what,
                    key,
                    holder,
                    held_by,
                )
                return
            if held_by.startswith("plugin "):
                displaced[holder] = key
                continue
            if replace and not (key != name and key == holder):
                continue  # replace: the entry itself, or an alias moved from another entry
            raise self._duplicate_error(
                f"{self.kind} {key!r} is already registered"
                + (f" (as an alias of {holder!r})" if key != holder else "")
                + f" by {held_by}; pass replace=True to replace it"
            )
        for holder, key in displaced.items():
            log.warning(
                "%s %r (%s) takes %r over from %s, whose entry is dropped",
                self.kind,
                name,
                source,
                key,
                self._origins[holder],
            )
            if holder in self._entries:
                self._remove(holder)
        if name in self._entries:
            self._remove(name)
        for key in (name, *alias_list):
            previous = self._alias_to.pop(key, None)
            if previous is not None:  # an alias moved by replace=True
                self._aliases[previous] = tuple(a for a in self._aliases[previous] if a != key)
        self._entries[name] = entry
        self._aliases[name] = alias_list
        for alias in alias_list:
            self._alias_to[alias] = name
        self._origins[name] = source

    def _remove(self, name: str) -> T | None:
        entry = self._entries.pop(name, None)
        self._lazy.pop(name, None)
        self._drop_names(name)
        return entry

    def _drop_names(self, name: str) -> None:
        """Forget ``name``'s aliases and origin (its entry or placeholder is gone)."""
        for alias in self._aliases.pop(name, ()):
            if self._alias_to.get(alias) == name:
                del self._alias_to[alias]
        self._origins.pop(name, None)
