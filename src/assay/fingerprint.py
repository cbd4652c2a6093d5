"""Fingerprints of code and values: a hash that changes whenever behaviour can change.

A scorer's or a target's fingerprint decides whether a stored run may be resumed with it
and whether earlier answers may be reused, so it must cover everything that can change an
answer, not a hand-bumped version: a function's bytecode, its constants (prompt templates
are string constants), its defaults, the values captured in its closure, the nested
functions it defines or captures, and the module-level functions and constants it refers to
by name (followed inside its own top-level package and inside ``assay``), recursively.

What is deliberately *not* covered: third-party libraries and the standard library (their
version is the environment's business), and objects whose only description is an address
(``<object at 0x...>``), which are reduced to their type so the hash stays stable across
processes.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import types
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

_ADDRESS = " at 0x"
_BUILTIN_CALLABLES = (
    types.BuiltinFunctionType,
    types.BuiltinMethodType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.ClassMethodDescriptorType,
)
_MAX_DEPTH = 12


def digest(payload: Any) -> str:
    """sha256 (hex) of ``payload`` rendered as canonical JSON."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def code_fingerprint(obj: Any) -> str:
    """A stable hash of what a callable does (see the module docstring for the rules)."""
    return digest(_Describer(obj).describe(obj, 0))


def value_identity(value: Any) -> Any:
    """A JSON-able, process-independent description of a value (used for params)."""
    return _Describer(None).value(value, 0)


def _package_of(obj: Any) -> str | None:
    module = getattr(obj, "__module__", None)
    return module.split(".")[0] if isinstance(module, str) and module else None


class _Describer:
    """Walks functions, closures and referenced globals once each (cycles are cut)."""

    def __init__(self, root: Any) -> None:
        packages = {"assay"}
        root_package = _package_of(getattr(root, "__func__", root))
        if root_package:
            packages.add(root_package)
        self.packages = packages
        self.seen: set[int] = set()

    def describe(self, obj: Any, depth: int) -> Any:
        if isinstance(obj, functools.partial):
            return {
                "partial": self.describe(obj.func, depth + 1),
                "args": [self.value(a, depth + 1) for a in obj.args],
                "keywords": {k: self.value(v, depth + 1) for k, v in obj.keywords.items()},
            }
        if isinstance(obj, types.MethodType):
            return {
                "method": self.describe(obj.__func__, depth + 1),
                "self": self.value(obj.__self__, depth + 1),
            }
        if isinstance(obj, types.FunctionType):
            return self.function(obj, depth)
        if isinstance(obj, _BUILTIN_CALLABLES):  # str.upper, len, ...: named by their identity
            owner = getattr(obj, "__objclass__", None) or getattr(obj, "__self__", None)
            where = getattr(owner, "__qualname__", None) or getattr(obj, "__module__", "")
            return {"builtin": f"{where}.{getattr(obj, '__qualname__', repr(obj))}"}
        if callable(obj) and not isinstance(obj, type):
            call = getattr(type(obj), "__call__", None)  # noqa: B004 - the class's own
            return {
                "callable": f"{type(obj).__module__}.{type(obj).__qualname__}",
                "call": self.describe(call, depth + 1)
                if isinstance(call, types.FunctionType)
                else None,
                "state": self.state(obj),
            }
        return self.value(obj, depth)

    def state(self, obj: Any) -> Any:
        """An object's plain settings (its ``__dict__``/dataclass fields, shallowly)."""
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return {f.name: self.shallow(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        if isinstance(obj, BaseModel):
            return self.shallow(obj.model_dump(mode="python"))
        attributes = getattr(obj, "__dict__", None)
        if isinstance(attributes, dict):
            return {k: self.shallow(v) for k, v in sorted(attributes.items())}
        return None

    def function(self, fn: types.FunctionType, depth: int) -> Any:
        name = f"{fn.__module__}.{fn.__qualname__}"
        if id(fn) in self.seen or depth > _MAX_DEPTH:
            return {"ref": name}
        self.seen.add(id(fn))
        closure = [self.cell(cell, depth) for cell in (fn.__closure__ or ())]
        return {
            "fn": name,
            "code": self.code(fn.__code__, fn.__globals__, depth),
            "defaults": [self.value(d, depth + 1) for d in fn.__defaults__ or ()],
            "kwdefaults": {
                k: self.value(v, depth + 1) for k, v in (fn.__kwdefaults__ or {}).items()
            },
            "closure": closure,
        }

    def cell(self, cell: types.CellType, depth: int) -> Any:
        try:
            content = cell.cell_contents
        except ValueError:  # an empty cell (a name assigned later)
            return None
        return self.describe(content, depth + 1)

    def code(self, code: types.CodeType, namespace: Mapping[str, Any], depth: int) -> Any:
        consts: list[Any] = []
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                consts.append(self.code(const, namespace, depth + 1))
            else:
                consts.append(self.value(const, depth + 1))
        referenced: dict[str, Any] = {}
        for name in self._names(code):
            if name in namespace:
                described = self.global_value(namespace[name], depth)
                if described is not None:
                    referenced[name] = described
        return {
            "bytecode": hashlib.sha256(code.co_code).hexdigest(),
            "consts": consts,
            "names": list(code.co_names),
            "globals": referenced,
        }

    @staticmethod
    def _names(code: types.CodeType) -> list[str]:
        names = list(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                names.extend(_Describer._names(const))
        return sorted(set(names))

    def global_value(self, value: Any, depth: int) -> Any:
        """A module-level name a function uses: followed when it is ours or the user's."""
        if isinstance(value, types.ModuleType | type):
            return None
        if isinstance(value, types.FunctionType):
            if _package_of(value) in self.packages:
                return self.function(value, depth + 1)
            return None
        if isinstance(value, str | int | float | bool | bytes | tuple | frozenset | enum.Enum):
            return self.value(value, depth + 1)
        return None

    def value(self, value: Any, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            return type(value).__qualname__
        if value is None or isinstance(value, bool | int | str):
            return value
        if isinstance(value, float):
            return repr(value)
        if isinstance(value, bytes):
            return hashlib.sha256(value).hexdigest()
        if isinstance(value, enum.Enum):
            return f"{type(value).__qualname__}.{value.name}"
        if isinstance(value, types.FunctionType | types.MethodType | functools.partial):
            return self.describe(value, depth + 1)
        if isinstance(value, BaseModel):
            return {
                "model": type(value).__qualname__,
                "data": self.value(value.model_dump(mode="python"), depth + 1),
            }
        if isinstance(value, type):
            if issubclass(value, BaseModel):
                return {"schema": value.model_json_schema()}
            return f"{value.__module__}.{value.__qualname__}"
        if dataclasses.is_dataclass(value):
            fields = {
                f.name: self.value(getattr(value, f.name), depth + 1)
                for f in dataclasses.fields(value)
            }
            return {"dataclass": type(value).__qualname__, "fields": fields}
        if isinstance(value, Mapping):
            return {str(k): self.value(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v, depth + 1) for v in value]
        if isinstance(value, set | frozenset):
            return sorted(repr(self.value(v, depth + 1)) for v in value)
        if callable(value):
            return self.describe(value, depth + 1)
        state = getattr(value, "__dict__", None)
        if isinstance(state, dict) and id(value) not in self.seen:
            # an arbitrary object: its type and its plain settings (strings, numbers,
            # containers of them); clients, locks and loaded models are reduced to their type
            self.seen.add(id(value))
            return {
                "object": f"{type(value).__module__}.{type(value).__qualname__}",
                "state": {k: self.shallow(v) for k, v in sorted(state.items())},
            }
        text = repr(value)
        return type(value).__qualname__ if _ADDRESS in text else text

    def shallow(self, value: Any) -> Any:
        if value is None or isinstance(value, bool | int | float | str | enum.Enum):
            return self.value(value, 0)
        if isinstance(value, list | tuple) and len(value) <= 1000:
            return [self.shallow(v) for v in value]
        if isinstance(value, Mapping) and len(value) <= 1000:
            return {str(k): self.shallow(v) for k, v in value.items()}
        return type(value).__qualname__


def callable_label(fn: Callable[..., Any]) -> str:
    """``module.qualname`` of a callable, for messages that say what changed."""
    target = getattr(fn, "__func__", fn)
    module = getattr(target, "__module__", None) or type(target).__module__
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{module}.{name}"
