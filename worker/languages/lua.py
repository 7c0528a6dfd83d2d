"""Lua: `lua FILE`, 15 s (MultiPL-E's rows use luaunit: Debian's lua-unit; the exit status is the number of
failed tests)."""

import re

from codeexec.worker.languages.language import Language

LANGUAGE = Language(
    name="lua",
    title="Lua",
    aliases=("lua",),
    tools=("lua5.4",),
    package="lua5.4 lua-unit",
    file="main.lua",
    run=("lua5.4", "{file}"),
    reads=("/usr/share/lua", "/usr/local/share/lua", "/etc/lua"),
    failed_assertion=re.compile(r"^Failed tests:|expected: .*\n\s*actual:", re.MULTILINE),
    version=("-v",),
)
