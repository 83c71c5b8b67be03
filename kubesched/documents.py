"""Read YAML and JSON input: as fast as the format allows, every failure one line naming the file.

* JSON (``.json`` files, and YAML files whose text is one JSON value, as ``kubectl get -o json``
  prints) is decoded by orjson.
* YAML is parsed by libyaml (PyYAML's ``CSafeLoader`` parser) when PyYAML was built with it, else
  by PyYAML's pure-Python parser. Objects are built straight from the parser's events with the
  safe loader's tag rules: composing PyYAML nodes first (what ``yaml.load`` does) cost about
  seven times the parse itself. Timestamps stay strings (as Kubernetes reads YAML, through JSON).
  Errors keep libyaml's line and column. Decoding is strict: a duplicate key is an error (as
  kubectl's ``--validate=strict``); a scalar its tag cannot hold (``!!float x``, an unquoted date
  that is no date) is reported at its line instead of raising a Python error. A document with
  merge keys (``<<``) or a duplicate or unhashable key goes through ``StrictLoader`` (the
  constructor-based loader with the same rules), which reports the problem. Nesting deeper than
  ``MAX_DEPTH`` levels is refused here (not every libyaml build bounds it, and the pure-Python
  parser would recurse); aliases may not expand a document past a bound.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from kubesched.errors import InputError

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
HAVE_LIBYAML: bool = _BaseLoader is not yaml.SafeLoader

_MERGE_TAG = "tag:yaml.org,2002:merge"


class StrictLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe YAML loading with duplicate keys rejected and bad tagged scalars reported in place."""


def _construct_map(loader: StrictLoader, node: yaml.MappingNode):  # noqa: ANN202 - a YAML constructor
    data: dict = {}
    yield data
    merges = any(k.tag == _MERGE_TAG for k, _ in node.value)
    value = loader.construct_mapping(node)
    # Without merge keys a mapping node has one pair per key; fewer keys means a duplicate.
    if not merges and len(value) != len(node.value):
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f'duplicate field "{key}" (first at line {seen[key].start_mark.line + 1})',
                    key_node.start_mark,
                )
            seen[key] = key_node
    data.update(value)


def _guarded(construct: Callable[[Any, yaml.Node], Any]) -> Callable[[Any, yaml.Node], Any]:
    def guarded(loader: StrictLoader, node: yaml.Node) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, TypeError, OverflowError, IndexError, KeyError) as e:
            tag = node.tag.rsplit(":", 1)[-1]
            raise yaml.constructor.ConstructorError(
                None, None, f'invalid !!{tag} value "{_clip(str(node.value))}" ({_clip(str(e))})', node.start_mark
            ) from None

    return guarded


def _construct_timestamp(loader: StrictLoader, node: yaml.ScalarNode) -> str:
    # Kubernetes reads YAML through JSON, where a timestamp is the string as written (go-yaml
    # keeps timestamp-like scalars as strings); datetime objects would also break string fields.
    return loader.construct_scalar(node)


StrictLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)
for _tag in ("int", "float", "bool", "binary"):
    _full = f"tag:yaml.org,2002:{_tag}"
    StrictLoader.add_constructor(_full, _guarded(yaml.SafeLoader.yaml_constructors[_full]))


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read_bytes(path: str, label: str) -> bytes:
    try:
        return sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"{label}: {e.strerror or e}", source=path) from None


def _decode(data: bytes, path: str, label: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(
            f"{label}: not UTF-8 text (byte 0x{data[e.start]:02x} at line {line}, offset {e.start})", source=path
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


def _label(what: str) -> str:
    return f"cannot read{' ' + what if what else ''}"


def read_text(path: str, what: str = "") -> str:
    """The file's text (``-``: standard input); unreadable or non-UTF-8 input is an InputError."""
    label = _label(what)
    return _decode(_read_bytes(path, label), path, label)


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _json_error(text: str, source: str, e: orjson.JSONDecodeError) -> InputError:
    line, col = _line_col(text, e.pos) if e.pos is not None else (e.lineno, e.colno)
    return InputError(f"invalid JSON at line {line} column {col}: {_clip(e.msg)}", source=source)


def _yaml_error(text: str, source: str, e: yaml.YAMLError) -> InputError:
    if isinstance(e, yaml.reader.ReaderError):  # a character YAML does not allow (NUL, controls)
        line, col = _line_col(text, e.position)
        what = f"#x{e.character:04x}" if isinstance(e.character, int) else repr(e.character)
        return InputError(f"invalid YAML at line {line} column {col}: unacceptable character {what}", source=source)
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
    problem = getattr(e, "problem", None) or getattr(e, "context", None) or str(e)
    return InputError(f"invalid YAML{where}: {_clip(problem, 200)}", source=source)


#: Aliases may repeat a node; what a document expands to stays within this many nodes (or ten
#: times its distinct nodes), so that walking it cannot take exponential time ("billion laughs").
MAX_EXPANDED_NODES = 1_000_000


def _check_expansion(doc: Any, source: str) -> None:
    """Count the nodes ``doc`` expands to (a shared container counts once per use); refuse
    recursive aliases and documents that expand past the bound."""
    if not isinstance(doc, dict | list):
        return
    sizes: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(doc, False)]
    while stack:
        obj, done = stack.pop()
        key = id(obj)
        if key in sizes:
            continue
        children = [*obj.keys(), *obj.values()] if isinstance(obj, dict) else obj
        containers = [c for c in children if isinstance(c, dict | list)]
        if not done:
            if key in open_:
                raise InputError("invalid YAML: an alias refers to a node that contains it", source=source)
            open_.add(key)
            stack.append((obj, True))
            for c in containers:
                if id(c) in open_:
                    raise InputError("invalid YAML: an alias refers to a node that contains it", source=source)
                if id(c) not in sizes:
                    stack.append((c, False))
            continue
        open_.discard(key)
        total = 1 + len(children) + sum(sizes[id(c)] for c in containers)
        sizes[key] = total
        if total > max(MAX_EXPANDED_NODES, 10 * len(sizes) + 10_000):
            raise InputError(
                f"invalid YAML: aliases expand the document to more than {MAX_EXPANDED_NODES:,} nodes",
                source=source,
            )


class _Fallback(Exception):
    """The event builder leaves this document to StrictLoader (merge keys, a duplicate or an
    unhashable key: rare, and reported there with the constructor's detail)."""


#: Collections nested deeper than this are refused (libyaml 0.2.5's own bound, applied whatever
#: parser or libyaml build reads the file).
MAX_DEPTH = 1000

_STR_TAG = "tag:yaml.org,2002:str"
_IMPLICIT = yaml.resolver.Resolver.yaml_implicit_resolvers
_CONSTRUCTORS = StrictLoader.yaml_constructors
_scalar_builder = yaml.constructor.SafeConstructor()


def _plain_tag(value: str) -> str:
    """The tag a plain (unquoted) scalar resolves to under the safe loader's YAML 1.1 rules."""
    for tag, regexp in _IMPLICIT.get(value[:1], ()):
        if regexp.match(value):
            return tag
    return _STR_TAG


def _scalar(tag: str, value: str, mark: Any) -> Any:
    if tag == _STR_TAG or tag == "tag:yaml.org,2002:timestamp":
        return value
    if tag == _MERGE_TAG:
        raise _Fallback
    construct = _CONSTRUCTORS.get(tag)
    if construct is None:
        raise yaml.constructor.ConstructorError(
            None, None, f"could not determine a constructor for the tag {tag!r}", mark
        )
    return construct(_scalar_builder, yaml.ScalarNode(tag, value, mark, mark))


def _from_events(text: str) -> tuple[list[Any], bool]:
    """The documents of ``text`` built from parser events; also whether any alias was used."""
    parser = _BaseLoader(text)
    get = parser.get_event
    docs: list[Any] = []
    # open collections: [container, pending key, key given]
    stack: list[list[Any]] = []
    anchors: dict[str, Any] = {}
    plain: dict[str, Any] = {}  # plain scalar text -> value (immutable), for repeated values
    aliases = False
    root: Any = None
    while True:
        ev = get()
        cls = ev.__class__
        if cls is ScalarEvent:
            text_ = ev.value
            tag = ev.tag
            if tag is None or tag == "!":
                if ev.implicit[0]:
                    try:
                        value = plain[text_]
                    except KeyError:
                        value = _scalar(_plain_tag(text_), text_, ev.start_mark)
                        if len(text_) <= 64:
                            plain[text_] = value
                else:
                    value = text_
            else:
                value = _scalar(tag, text_, ev.start_mark)
            if ev.anchor is not None:
                anchors[ev.anchor] = value
        elif cls is MappingStartEvent or cls is SequenceStartEvent:
            if ev.tag not in (None, "!", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"):
                raise _Fallback  # !!omap, !!set, custom tags: the constructor's rules and errors
            if len(stack) >= MAX_DEPTH:
                raise yaml.parser.ParserError(
                    None, None, f"exceeded maximum nesting depth ({MAX_DEPTH})", ev.start_mark
                )
            value = {} if cls is MappingStartEvent else []
            if ev.anchor is not None:
                anchors[ev.anchor] = value
            stack.append([value, None, False])
            continue
        elif cls is MappingEndEvent or cls is SequenceEndEvent:
            value = stack.pop()[0]
        elif cls is AliasEvent:
            if ev.anchor not in anchors:
                raise yaml.composer.ComposerError(None, None, f"found undefined alias {ev.anchor!r}", ev.start_mark)
            value = anchors[ev.anchor]
            aliases = True
        elif cls is DocumentStartEvent:
            anchors = {}
            continue
        elif cls is DocumentEndEvent:
            docs.append(root)
            root = None
            continue
        elif cls is StreamEndEvent:
            return docs, aliases
        else:
            continue
        if not stack:
            root = value
            continue
        top = stack[-1]
        container = top[0]
        if container.__class__ is list:
            container.append(value)
        elif top[2]:
            key = top[1]
            try:
                if key in container:
                    raise _Fallback
            except TypeError:  # an unhashable key
                raise _Fallback from None
            container[key] = value
            top[2] = False
        else:
            top[1] = value
            top[2] = True


def _looks_like_json(text: str) -> bool:
    head = text.lstrip()[:1]
    return head in ("{", "[")


def load_documents(text: str, source: str, *, keep_empty: bool = False) -> list[Any]:
    """Every document of ``text`` (YAML stream or one JSON value); empty ones (None) dropped
    unless ``keep_empty`` (so that positions match the file)."""
    if source.endswith(".json") or _looks_like_json(text):
        try:
            return [orjson.loads(text)]
        except orjson.JSONDecodeError as e:
            if source.endswith(".json"):
                raise _json_error(text, source, e) from None
            # not JSON after all: a YAML flow collection, parsed (and reported) as YAML below
    try:
        try:
            docs, aliases = _from_events(text)
        except _Fallback:
            docs, aliases = list(yaml.load_all(text, Loader=StrictLoader)), True
    except yaml.YAMLError as e:
        raise _yaml_error(text, source, e) from None
    except RecursionError:
        raise InputError("invalid YAML: nested too deeply", source=source) from None
    if aliases:  # a node used more than once: bound what the documents expand to
        for d in docs:
            _check_expansion(d, source)
    return docs if keep_empty else [d for d in docs if d is not None]


def read_documents(path: str, what: str = "", *, keep_empty: bool = False) -> list[Any]:
    """``load_documents`` of the file at ``path``. A JSON file goes to orjson as bytes (it checks
    UTF-8 itself): decoding it to text first cost a fifth of the load."""
    label = _label(what)
    data = _read_bytes(path, label)
    if path.endswith(".json") or data.lstrip()[:1] in (b"{", b"["):
        try:
            return [orjson.loads(data)]
        except orjson.JSONDecodeError:
            pass  # reported below from the text, with its line (or read as YAML)
    return load_documents(_decode(data, path, label), path, keep_empty=keep_empty)


def load_scalar(text: str) -> Any:
    """A command-line value as YAML reads it (``500`` -> 500, ``a`` -> "a"); bad YAML stays text."""
    try:
        return yaml.load(text, Loader=StrictLoader)
    except (yaml.YAMLError, RecursionError):
        return text
