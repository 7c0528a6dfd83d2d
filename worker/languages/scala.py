"""Scala: MultiPL-E's `scalac -d DIR FILE` (45 s), then `scala -cp DIR Problem` (15 s), passing only with
status 0 and nothing on stderr; mxeval's object Main, 100 s to compile, 10 s to run, its status deciding."""

import re
from dataclasses import replace

from codeexec.worker.languages.language import Language

LANGUAGE = Language(
    name="scala",
    title="Scala",
    aliases=("scala",),
    tools=("scalac", "scala"),
    package="scala",
    file="main.scala",
    main="Problem",
    compile=(("scalac", "-d", ".", "{file}"),),
    run=("scala", "-cp", ".", "{main}"),
    env={"JAVA_OPTS": "-Xss8m"},
    reads=("/usr/share/scala", "/usr/share/java", "/etc/java-17-openjdk"),
    quiet="stderr",
    failed_assertion=re.compile(r"java\.lang\.AssertionError"),
    compile_limit_s=45.0,
    version=("-version",),
)
DIALECTS = {"mxeval": replace(LANGUAGE, main="Main", quiet="", compile_limit_s=100.0, run_limit_s=10.0)}
