"""The package's modules form layers: no import cycles among them, imports
of package modules at module top only, and no module reaching for another
module's private names.

Each module of ``python/arca/`` is parsed with ``ast`` (nothing is
imported). An import of a package module is an edge; the strongly
connected components of the graph (Tarjan's algorithm) must all be single
modules without a self-edge. A package module imported inside a function
hides an edge from a reader (it is how cycles used to be dodged), and
``from .x import _name`` or ``x._name`` couples a module to another's
internals, so both fail too. Optional third-party packages (h5py, xarray,
pyarrow, mpi4py) may still be imported where they are needed.

Run with ``-s`` to see the module order found, lowest layer first.
"""

import ast
import shutil
from pathlib import Path

import pytest

PACKAGE = "arca"
ROOT = Path(__file__).resolve().parents[1] / "python" / PACKAGE


def module_names(root):
    """``{dotted name: path}`` of every module under ``root``; the native
    extension counts as a module (it imports nothing of the package)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join([PACKAGE] + parts)] = path
    for stub in root.glob("*.pyi"):
        name = f"{PACKAGE}.{stub.stem}"
        out.setdefault(name, None)
    return out


def _is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _base_package(module, path):
    """The package a relative import of ``module`` (found at ``path``) starts from."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _resolve(name, modules):
    """The longest package module ``name`` lies in, or None."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


class _Visitor(ast.NodeVisitor):
    """Collects one module's imports of package modules."""

    def __init__(self, module, path, modules, root):
        self.module, self.path, self.modules, self.root = module, path, modules, root
        self.edges = set()
        self.problems = []
        self.depth = 0  # functions entered
        self.bound = {}  # local name -> package module it names

    def _where(self, node):
        return f"{self.path.relative_to(self.root.parent)}:{node.lineno}"

    def _edge(self, target, node):
        if target is None:
            return
        self.edges.add(target)
        if self.depth:
            self.problems.append(
                f"{self._where(node)}: {self.module} imports {target} inside a function"
            )

    def _scope(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _scope

    def visit_Import(self, node):
        for alias in node.names:
            if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                target = _resolve(alias.name, self.modules)
                self._edge(target, node)
                if alias.asname:
                    self.bound[alias.asname] = target

    def visit_ImportFrom(self, node):
        if node.level:
            base = _base_package(self.module, self.path)
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            base = f"{base}.{node.module}" if node.module else base
        elif node.module and (node.module == PACKAGE or node.module.startswith(PACKAGE + ".")):
            base = node.module
        else:
            return
        for alias in node.names:
            full = f"{base}.{alias.name}"
            if full in self.modules:
                # `from . import _x`: the module _x itself.
                self._edge(full, node)
                self.bound[alias.asname or alias.name] = full
                continue
            target = _resolve(base, self.modules)
            self._edge(target, node)
            if _is_private(alias.name) and target != self.module:
                self.problems.append(
                    f"{self._where(node)}: {self.module} imports the private name "
                    f"{alias.name} of {target}"
                )

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in self.bound \
                and _is_private(node.attr):
            target = self.bound[node.value.id]
            if target != self.module:
                sub = f"{target}.{node.attr}"
                if sub not in self.modules:
                    self.problems.append(
                        f"{self._where(node)}: {self.module} uses the private name "
                        f"{node.attr} of {target}"
                    )
        self.generic_visit(node)


def import_graph(root):
    """``(graph, problems)``: each module's set of package modules it
    imports, and the imports inside functions and of private names."""
    modules = module_names(root)
    graph, problems = {}, []
    for name, path in modules.items():
        graph[name] = set()
        if path is None:
            continue
        v = _Visitor(name, path, modules, root)
        v.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        graph[name] = v.edges
        problems.extend(v.problems)
    return graph, problems


def strongly_connected(graph):
    """Tarjan's strongly connected components, each a sorted list; every
    component comes after the components it imports."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def cycles(graph):
    """The components that are cycles: several modules, or one importing itself."""
    return [c for c in strongly_connected(graph)
            if len(c) > 1 or c[0] in graph.get(c[0], ())]


def layers(graph):
    """Each module's layer: 0 for a module importing no package module,
    else one more than the highest layer it imports (the graph is acyclic)."""
    level = {}
    for comp in strongly_connected(graph):
        for v in comp:
            level[v] = 1 + max((level[w] for w in graph[v] if w != v), default=-1)
    return level


def check(root):
    """Everything wrong with the package at ``root``, as messages."""
    graph, problems = import_graph(root)
    for c in cycles(graph):
        problems.append("import cycle among " + ", ".join(c))
    return problems


def test_package_has_layers():
    graph, _ = import_graph(ROOT)
    assert len(graph) > 10, f"found only {sorted(graph)} under {ROOT}"
    problems = check(ROOT)
    level = layers(graph) if not cycles(graph) else {}
    order = sorted(level, key=lambda m: (level[m], m))
    print("\nmodule layers, lowest first:")
    for m in order:
        print(f"  {level[m]:2d}  {m}")
    assert not problems, "\n".join(problems)


def _copy(tmp_path):
    root = tmp_path / PACKAGE
    shutil.copytree(ROOT, root, ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    return root


def test_check_finds_a_planted_cycle(tmp_path):
    root = _copy(tmp_path)
    assert check(root) == []
    (root / "_planted_a.py").write_text("from . import _planted_b\n")
    (root / "_planted_b.py").write_text("from ._planted_a import thing\n")
    problems = check(root)
    assert problems == [f"import cycle among {PACKAGE}._planted_a, {PACKAGE}._planted_b"]


def test_check_finds_a_cycle_through_a_subpackage(tmp_path):
    root = _copy(tmp_path)
    (root / "_planted.py").write_text("import arca.interop\n")
    (root / "interop" / "_planted.py").write_text("from .. import _planted\n")
    (root / "interop" / "__init__.py").write_text(
        (root / "interop" / "__init__.py").read_text() + "\nfrom . import _planted\n")
    problems = check(root)
    assert len(problems) == 1 and problems[0].startswith("import cycle among ")
    assert f"{PACKAGE}._planted" in problems[0] and f"{PACKAGE}.interop._planted" in problems[0]


@pytest.mark.parametrize("text, found", [
    ("def f():\n    from . import _native\n", "imports arca._native inside a function"),
    ("from ._dtypes import _type_string\n", "imports the private name _type_string of arca._dtypes"),
    ("from . import _dtypes\n\nx = _dtypes._type_string\n",
     "uses the private name _type_string of arca._dtypes"),
])
def test_check_finds_planted_imports(tmp_path, text, found):
    root = _copy(tmp_path)
    (root / "_planted.py").write_text(text)
    problems = check(root)
    assert len(problems) == 1 and found in problems[0], problems
