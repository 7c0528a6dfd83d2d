"""Scala: MultiPL-E's `scalac -d DIR FILE` (45 s), then `scala -cp DIR Problem` (15 s), passing only with
status 0 and nothing on stderr; mxeval's object Main, 100 s to compile, 10 s to run, its status deciding.

A scalac kept running (WarmCompiler.java, worker/compilers/persistent.py) compiles in place of a scalac command: the
JVM started as the scalac script starts it (Scala's jars as the class path, its properties), and
scala.tools.nsc.Main's process() with the command's arguments, its file and output directory made absolute;
its status is the command's (1 where the compiler reported errors, else 0)."""

import glob
import os
import re
from dataclasses import dataclass, replace

from codeexec.worker.languages.language import Language, RunCode, SelfTest, Toolchain, absolute


@dataclass(frozen=True)
class Scala(Language):
    def warm_command(self, toolchain: Toolchain, scratch: str) -> list[str]:
        """The JVM the scalac command starts (Debian's bin/scalac, as `bash -x` shows it: the tool class path
        as the class path, scala.home, scala.usejavacp, JAVA_OPTS), running the compiler kept running
        instead of scalac's main."""
        home = os.path.dirname(os.path.dirname(os.path.realpath(toolchain.tools["scalac"])))
        jars = os.pathsep.join(sorted(glob.glob(os.path.join(home, "lib", "*.jar"))))
        java, *launched = super().warm_command(toolchain, scratch)
        return [
            java, *self.env["JAVA_OPTS"].split(), "-classpath", jars, f"-Dscala.home={home}",
            "-Dscala.usejavacp=true", "-Denv.emacs=", *launched,
        ]  # fmt: skip

    def warm_arguments(self, argv: list[str], directory: str) -> list[str]:
        return absolute(argv[1:], directory)


#: SandboxFusion's Scala runs the program's first object.
_OBJECT = re.compile(r"object\s+(\w+)")


@dataclass(frozen=True)
class FirstObject(Scala):
    """SandboxFusion's Scala: `scalac FILE`, then `scala NAME`, NAME the program's first object's."""

    def steps(self, file: str, toolchain: Toolchain, program: str = "") -> list[tuple[str, list[str], dict[str, str]]]:
        found = _OBJECT.search(program)
        named = replace(self, main=found[1] if found else self.main)
        return super(FirstObject, named).steps(file, toolchain, program)


LANGUAGE = Scala(
    name="scala",
    title="Scala",
    aliases=("scala",),
    tools=("scalac", "scala", "java"),
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
    # One collector thread (the scalac script's stack, class paths and properties: warm_command()).
    warm=("java", "-XX:+UseSerialGC", "{scratch}/WarmCompiler.java", "scala.tools.nsc"),
    warm_files=("WarmCompiler.java",),
    warm_statuses=frozenset({0, 1}),
)
DIALECTS = {
    "mxeval": replace(LANGUAGE, main="Main", quiet="", compile_limit_s=100.0, run_limit_s=10.0),
    "sandboxfusion": FirstObject(**{**vars(LANGUAGE), "main": "Main", "quiet": "", "run": ("scala", "{main}")}),
}
SELF_TEST = SelfTest(
    passes="object Problem { def main(args: Array[String]) = { assert(1 + 1 == 2) } }",
    fails="object Problem { def main(args: Array[String]) = { assert(1 + 1 == 3) } }",
    fails_as="assertion_fail",
    broken="object Problem {",
)
RUN_CODE = {
    "scala": RunCode(
        "sandboxfusion",
        echo=(
            "object Echo { def main(args: Array[String]): Unit = { val n = scala.io.StdIn.readInt()\n"
            '  println(s"$n ${n + 1}") } }\n'
        ),
        failing="object Main { def main(args: Array[String]): Unit = { assert(1 == 2) } }\n",
    ),
}
