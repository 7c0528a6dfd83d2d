"""Kotlin scripts: SandboxFusion's kotlin_script (`kotlin FILE.kts`), here Debian's Kotlin 1.3's
`kotlinc -script FILE.kts` (its `kotlin` runner does not take scripts): compiled and run in one step, in a
JVM, whose start takes a couple of seconds; an uncaught exception is its stderr and a failed status."""

import re

from codeexec.worker.languages.language import Language, RunCode, SelfTest

LANGUAGE = Language(
    name="kotlin",
    title="Kotlin (scripts)",
    aliases=("kotlin", "kts", "kotlin_script"),
    tools=("kotlinc",),
    package="kotlin",
    file="main.kts",
    run=("kotlinc", "-script", "{file}"),
    reads=("/usr/share/kotlin", "/usr/share/java", "/etc/java-17-openjdk"),
    failed_assertion=re.compile(r"java\.lang\.AssertionError"),
    syntax_text=re.compile(r"^\S+\.kts:\d+:\d+: error:", re.MULTILINE),
    version=("-version",),
)
SELF_TEST = SelfTest(
    passes='if (1 + 1 != 2) throw AssertionError("no")\n',
    fails='if (1 + 1 != 3) throw AssertionError("no")\n',
    fails_as="assertion_fail",
    broken="val x = \n",
)
RUN_CODE = {
    "kotlin_script": RunCode(
        "",
        echo='val n = readLine()!!.trim().toInt()\nprintln("$n ${n + 1}")\n',
        failing='if (1 != 2) throw Exception("assertion failed")\n',
    ),
}
