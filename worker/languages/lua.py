"""Lua: `lua FILE`, 15 s (MultiPL-E's rows use luaunit: Debian's lua-unit; the exit status is the number of
failed tests)."""

import re

from codeexec.worker.languages.language import Language, RunCode, SelfTest

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
SELF_TEST = SelfTest(
    passes="lu = require('luaunit')\nfunction test_p() lu.assertEquals(1 + 1, 2) end\nos.exit(lu.LuaUnit.run())\n",
    fails="lu = require('luaunit')\nfunction test_p() lu.assertEquals(1 + 1, 3) end\nos.exit(lu.LuaUnit.run())\n",
    fails_as="assertion_fail",
    broken=None,
)
RUN_CODE = {
    "lua": RunCode(
        "",
        echo='local n = io.read("n")\nprint(n .. " " .. (n + 1))\n',
        failing="assert(1 == 2)\n",
    ),
}
