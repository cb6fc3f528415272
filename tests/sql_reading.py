"""Reads the SQL a Python module sends to Postgres, for ``tests/unit/test_table_owners.py``.

The module is read with :mod:`ast`, never imported. Two kinds of text are taken as SQL:

- the first argument of every ``.execute(...)`` / ``.executemany(...)`` call, and
- every string (plain or f-string; docstrings aside) that opens with an upper-case SQL keyword
  (:data:`SQL_START`): SQL kept in a constant or handed to a helper is read too.

Names in an f-string, a ``+``, a ``.format(...)`` or ``psycopg.sql.SQL``/``Identifier`` are resolved
against every assignment of that name in the module (and ``for name in (...)`` loops over literal
tuples), each alternative giving its own text, so ``f"SELECT {COLUMNS} {_FROM} WHERE ..."`` and
``for t in ("a", "b"): conn.execute(f"DELETE FROM {t}")`` are read whole. What cannot be resolved
becomes the identifier :data:`HOLE`: where it stands for a table, the table is reported as ``lc_hole``
(a table name not known from the source).

Each text is parsed by sqlglot's Postgres dialect (a fragment that opens with ``FROM``/``JOIN`` is
read as ``SELECT * <fragment>``). The tables come from its syntax tree: ``exp.Table`` nodes less the
names of CTEs and table functions; the target of ``INSERT``/``UPDATE``/``DELETE``/``MERGE`` and of DDL
is a write, every other table a read. A text sqlglot cannot parse is returned as unparsed, so SQL
never goes unread.
"""

from __future__ import annotations

import ast
import itertools
import logging
import re
import string
from collections import defaultdict
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

HOLE = "lc_hole"
#: a string that opens with one of these (upper case, as this codebase writes SQL) is read as SQL
SQL_START = re.compile(r"^\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH|CREATE|ALTER|DROP|TRUNCATE|FROM|"
                       r"(LEFT |RIGHT |INNER |CROSS )?JOIN)\s")
#: statements about databases, not tables (the local stack's test databases): not read
NOT_TABLES = re.compile(r"^\s*(CREATE|DROP) DATABASE\b")
EXECUTE = {"execute", "executemany"}
WRAPPERS = {"SQL", "Identifier", "Literal", "Composed"}  # psycopg.sql: the text is its argument
MAX_TEXTS = 64  # alternatives kept per expression (a product of f-string parts grows fast)
_WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Alter, exp.Drop, exp.TruncateTable)

logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its "falling back to Command" warnings


@dataclass
class Reading:
    """What one module's SQL touches: ``uses`` {(table, "read"|"write"): first line}, ``unparsed``
    [(line, text)] for SQL sqlglot could not parse."""

    uses: dict[tuple[str, str], int] = field(default_factory=dict)
    unparsed: list[tuple[int, str]] = field(default_factory=list)


class _Resolver:
    """The string values an expression of one module can take (see the module docstring)."""

    def __init__(self, tree: ast.AST) -> None:
        self.bindings: dict[str, list[ast.expr]] = defaultdict(list)
        self.each: dict[str, list[ast.expr]] = defaultdict(list)  # for name in <expr>
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.bindings[target.id].append(node.value)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
                self.bindings[node.target.id].append(node.value)
            elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name):
                self.each[node.target.id].append(node.iter)

    def texts(self, node: ast.expr, depth: int = 0) -> list[str]:
        """Every text ``node`` may be (at most :data:`MAX_TEXTS`); :data:`HOLE` for what is unknown."""
        if depth > 8:
            return [HOLE]
        if isinstance(node, ast.Constant):
            return [node.value if isinstance(node.value, str) else str(node.value)]
        if isinstance(node, ast.JoinedStr):
            parts = [self.texts(v.value if isinstance(v, ast.FormattedValue) else v, depth + 1) for v in node.values]
            return _product(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return _product([self.texts(node.left, depth + 1), self.texts(node.right, depth + 1)])
        if isinstance(node, ast.IfExp):
            return (self.texts(node.body, depth + 1) + self.texts(node.orelse, depth + 1))[:MAX_TEXTS]
        if isinstance(node, ast.Name):
            return self._name(node.id, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        return [HOLE]

    def _name(self, name: str, depth: int) -> list[str]:
        found = [t for value in self.bindings.get(name, []) for t in self.texts(value, depth + 1)]
        for iterable in self.each.get(name, []):
            found += [t for seq in self._sequences(iterable) for item in seq for t in self.texts(item, depth + 1)]
        return list(dict.fromkeys(found))[:MAX_TEXTS] or [HOLE]

    def _sequences(self, node: ast.expr) -> list[list[ast.expr]]:
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return [list(node.elts)]
        if isinstance(node, ast.Name):
            return [seq for value in self.bindings.get(node.id, []) for seq in self._sequences(value)]
        return [[]]

    def _call(self, node: ast.Call, depth: int) -> list[str]:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in WRAPPERS and len(node.args) == 1:
            return self.texts(node.args[0], depth + 1)
        if name == "format" and isinstance(func, ast.Attribute):
            templates = self.texts(func.value, depth + 1)
            args = [self.texts(a, depth + 1) for a in node.args]
            kwargs = {k.arg: self.texts(k.value, depth + 1) for k in node.keywords if k.arg}
            return [t for template in templates for t in _format(template, args, kwargs)][:MAX_TEXTS]
        return [HOLE]


def _product(parts: list[list[str]]) -> list[str]:
    return ["".join(p) for p in itertools.islice(itertools.product(*parts), MAX_TEXTS)]


def _format(template: str, args: list[list[str]], kwargs: dict[str, list[str]]) -> list[str]:
    """``template.format(...)`` for every choice of the arguments' alternatives; a field with no
    argument becomes :data:`HOLE`; a template that is no format string stays as it is."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return [template]
    choices: list[list[str]] = []
    auto = 0
    for literal, name, _spec, _conv in fields:
        choices.append([literal])
        if name is None:
            continue
        if name == "":
            name, auto = str(auto), auto + 1
        options = args[int(name)] if name.isdigit() and int(name) < len(args) else kwargs.get(name, [HOLE])
        choices.append(options)
    return _product(choices)


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _candidates(tree: ast.AST, resolver: _Resolver) -> list[tuple[int, str]]:
    """``(line, text)`` of every SQL text of the module (see the module docstring)."""
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)  # its pieces are read as part of the whole
        elif _is_format(node):
            skip.update(id(t) for t in _templates(node.func.value, resolver))  # read once formatted
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EXECUTE \
                and node.args:
            found += [(node.lineno, t) for t in resolver.texts(node.args[0])]
        elif (isinstance(node, (ast.Constant, ast.JoinedStr)) or _is_format(node)) and id(node) not in skip:
            found += [(node.lineno, t) for t in resolver.texts(node) if SQL_START.match(t)]
    return [(line, text) for line, text in dict.fromkeys(found) if not NOT_TABLES.match(text)]


def _is_format(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"


def _templates(node: ast.expr, resolver: _Resolver) -> list[ast.expr]:
    """The string constants a ``.format`` template is made of: the constant itself, the argument of
    a ``sql.SQL(...)`` around it, or the values bound to its name."""
    if isinstance(node, ast.Constant):
        return [node]
    if isinstance(node, ast.Call) and node.args:
        return _templates(node.args[0], resolver)
    if isinstance(node, ast.Name):
        return [c for value in resolver.bindings.get(node.id, []) for c in _templates(value, resolver)]
    return []


def statement_uses(text: str) -> set[tuple[str, str]] | None:
    """``{(table, "read"|"write")}`` of one SQL text, or None when sqlglot cannot parse it (a
    fragment opening with FROM/JOIN is tried as ``SELECT * <text>``)."""
    for attempt in (text, f"SELECT * {text}"):
        try:
            trees = [t for t in sqlglot.parse(attempt, read="postgres") if t is not None]
        except (ParseError, TokenError):
            continue
        if trees and not any(isinstance(t, exp.Command) for t in trees):
            return {use for tree in trees for use in _tree_uses(tree)}
    return None


def _tree_uses(tree: exp.Expression) -> set[tuple[str, str]]:
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    written = set()
    for node in tree.find_all(*_WRITES):
        target = node.this if isinstance(node.this, exp.Table) else node.this.find(exp.Table) if node.this else None
        if isinstance(target, exp.Table):
            written.add(id(target))
    uses = set()
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier) or (table.name in ctes and not table.db):
            continue  # a table function (generate_series(...)) or a CTE's name
        name = f"{table.db}.{table.name}" if table.db else table.name
        uses.add((name, "write" if id(table) in written else "read"))
    return uses


def read_module(source: str, filename: str = "<source>") -> Reading:
    """The tables the SQL of one module's ``source`` touches (see :class:`Reading`)."""
    tree = ast.parse(source, filename)
    reading = Reading()
    for line, text in _candidates(tree, _Resolver(tree)):
        uses = statement_uses(text)
        if uses is None:
            reading.unparsed.append((line, text))
            continue
        for use in uses:
            reading.uses.setdefault(use, line)
    return reading
