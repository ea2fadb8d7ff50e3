"""The registry lists every strategy, and a missing strategy module is an
ImportError rather than a strategy silently left out."""

import importlib
import inspect
import json
import pkgutil
import subprocess
import sys

from heapscope import allocators
from heapscope.allocators.registry import STRATEGIES, strategy_names
from heapscope.allocators.strategy import Strategy


def strategy_classes_in_the_package() -> set[type]:
    """Every Strategy subclass with a name of its own defined in a module of
    heapscope.allocators (bases such as WordHeap and UserStrategy have none)."""
    found = set()
    for info in pkgutil.iter_modules(allocators.__path__):
        module = importlib.import_module(f"{allocators.__name__}.{info.name}")
        for obj in vars(module).values():
            if (inspect.isclass(obj) and issubclass(obj, Strategy) and obj.__module__ == module.__name__
                    and vars(obj).get("name") not in (None, "", "abstract")):
                found.add(obj)
    return found


def test_every_strategy_class_is_registered_under_its_name():
    classes = strategy_classes_in_the_package()
    assert len(classes) >= 7
    # user strategies (allocators.plugins) may be registered too; they live elsewhere
    built_in = {cls for cls in STRATEGIES.values() if cls.__module__.startswith(allocators.__name__ + ".")}
    assert built_in == classes
    assert all(STRATEGIES[cls.name] is cls for cls in classes)
    assert strategy_names()[0] == "next-fit"      # the default, Ctrl+1


BLOCKED_IMPORT = r"""
import importlib.abc, json, sys

class Missing(importlib.abc.MetaPathFinder):
    def __init__(self, name):
        self.name = name
    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.name:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None

out = {}
for module in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m.startswith("heapscope")]:
        del sys.modules[loaded]
    blocker = Missing(module)
    sys.meta_path.insert(0, blocker)
    try:
        import heapscope.allocators.registry as registry
        out[module] = "imported: " + ",".join(registry.strategy_names())
    except ImportError as exc:
        out[module] = f"{type(exc).__name__}: {exc.name}"
    finally:
        sys.meta_path.remove(blocker)
print(json.dumps(out))
"""


def test_a_missing_strategy_module_is_an_import_error():
    modules = sorted({cls.__module__ for cls in STRATEGIES.values()})
    result = subprocess.run([sys.executable, "-c", BLOCKED_IMPORT, json.dumps(modules)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome == {m: f"ModuleNotFoundError: {m}" for m in modules}
