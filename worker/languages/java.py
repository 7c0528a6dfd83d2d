"""Java: MultiPL-E's `javac -encoding UTF8` with javatuples on the class path (its rows import
org.javatuples), then `java -ea ... Problem` (assertions on: its tests assert), 15 s each; mxeval's class Main,
no -ea (its tests throw), 100 s to compile and 10 s to run; HumanEval-X's public class Main. A failed assert
is assertion_fail."""

import re
from dataclasses import dataclass, replace

from codeexec.worker.languages.language import Language

#: Debian's libjavatuples-java: MultiPL-E's javatuples-1.2.jar.
JAVATUPLES = "/usr/share/java/javatuples.jar"
_PUBLIC_CLASS = re.compile(r"^\s*public\s+(?:final\s+)?class\s+(\w+)", re.MULTILINE)


@dataclass(frozen=True)
class Java(Language):
    def file_of(self, program: str) -> str:
        """A public class's file is named for it; the others' may be named anything."""
        public = _PUBLIC_CLASS.search(program)
        return f"{public[1] if public else self.main}.java"


LANGUAGE = Java(
    name="java",
    title="Java",
    aliases=("java",),
    tools=("javac", "java"),
    package="openjdk-17-jdk-headless libjavatuples-java",
    file="Main.java",
    main="Problem",
    compile=(("javac", "-encoding", "UTF8", "-cp", JAVATUPLES, "{file}"),),
    run=("java", "-ea", "-cp", f".:{JAVATUPLES}", "{main}"),
    reads=("/usr/share/java", "/etc/java-17-openjdk"),
    failed_assertion=re.compile(r"java\.lang\.AssertionError"),
    compile_limit_s=15.0,
    version=("-version",),
)
DIALECTS = {
    "mxeval": replace(
        LANGUAGE,
        main="Main",
        compile=(("javac", "{file}"),),
        run=("java", "-cp", ".", "{main}"),
        compile_limit_s=100.0,
        run_limit_s=10.0,
    ),
    "humaneval-x": replace(LANGUAGE, main="Main"),
}
