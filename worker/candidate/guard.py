"""The import guard: denied modules refused to the candidate's code by every route that names them, and
os.system disabled. Loaded by path in the candidate's interpreter (worker/candidate/__init__.py); child.py's
main() installs it before the candidate's code runs (a zygote builds it once: warm.py)."""

import _frozen_importlib
import builtins
import os
import posix
import sys


class DeniedImport(ImportError):
    """Raised in place of importing a denied module."""


def guards(denied: list[str]):
    """Build the guards that refuse denied modules to candidate code, by every route that names them,
    and disable os.system; return the function that installs them (which does nothing where nothing is
    denied: the relaxed posture's problem sets, whose tasks run programs).

    Modules of the installed Python (stdlib, site-packages) may still import them for their own
    use: ``import tempfile`` needs shutil, ``import asyncio`` needs subprocess. Code counts as the
    installed Python's when its module's ``__file__`` lies under a directory on sys.path at start-up.

    Installing them unloads the denied modules loaded when they were built, so nothing may be
    imported in between. A zygote builds them once, before its first fork (warm.py): a fork that
    built them itself would write to hundreds of pages it shares with the zygote, each copied on
    write (~0.5 ms a candidate, measured).
    """
    denied_set = frozenset(denied)
    roots = frozenset(name.partition(".")[0] for name in denied_set)
    trusted_dirs = tuple(os.path.join(entry, "") for entry in sys.path if entry)
    real_import, real_gcd_import = builtins.__import__, _frozen_importlib._gcd_import

    def is_denied(name: str) -> bool:
        while name:
            if name in denied_set:
                return True
            name = name.rpartition(".")[0]
        return False

    def refuse(name: str, frame: object) -> None:
        if not is_denied(name):
            return
        # Walk out of the import machinery and this guard to the code that asked for the module.
        while frame is not None and (
            frame.f_code in guard_codes
            or frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen_importlib"))
        ):
            frame = frame.f_back
        asker_file = frame.f_globals.get("__file__") if frame is not None else None
        if isinstance(asker_file, str) and asker_file.startswith(trusted_dirs):
            return
        raise DeniedImport(f"denied module: {name}")

    def absolute(name: str, package: str | None, level: int) -> str:
        if not level:
            return name
        base = (package or "").rsplit(".", level - 1)[0] if level > 1 else package or ""
        return f"{base}.{name}" if name else base

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        wanted = absolute(name, (globals or {}).get("__package__"), level)
        if wanted.partition(".")[0] in roots:
            frame = sys._getframe(1)
            refuse(wanted, frame)
            for item in fromlist or ():
                if item != "*":
                    refuse(f"{wanted}.{item}", frame)
        return real_import(name, globals, locals, fromlist, level)

    def guarded_gcd_import(name, package=None, level=0):
        # importlib.import_module(name) is _frozen_importlib._gcd_import(name): guarding it here
        # spares every candidate the import of the importlib package (~0.35 ms).
        refuse(absolute(name, package, level), sys._getframe(1))
        return real_gcd_import(name, package, level)

    class DenyFinder:
        """Sees every import that reaches the import system, e.g. importlib.import_module."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            refuse(name, sys._getframe(1))
            return None

    guard_codes = {guarded_import.__code__, guarded_gcd_import.__code__, DenyFinder.find_spec.__code__}
    # A module already loaded would be handed out without asking any finder: unload denied ones.
    loaded_denied = [name for name in sys.modules if is_denied(name)]

    def refused(name: str):
        def refuse_call(*args, **kwargs):
            raise OSError(f"{name} is disabled in codeexec candidates")

        return refuse_call

    no_system, no_popen = refused("os.system"), refused("os.popen")  # os.popen: os.system by another name

    def install() -> None:
        if not denied_set:  # no denylist (the relaxed posture's problem sets): programs may run, os.system too
            return
        # importlib takes its __import__ from _frozen_importlib when it is first imported.
        builtins.__import__ = _frozen_importlib.__import__ = guarded_import
        if "importlib" in sys.modules:
            sys.modules["importlib"].__import__ = guarded_import
        _frozen_importlib._gcd_import = guarded_gcd_import
        sys.meta_path.insert(0, DenyFinder)
        for name in loaded_denied:
            del sys.modules[name]
        os.system = posix.system = no_system
        os.popen = no_popen

    return install
