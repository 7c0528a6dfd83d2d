"""Java: MultiPL-E's `javac -encoding UTF8` with javatuples on the class path (its rows import
org.javatuples), then `java -ea ... Problem` (assertions on: its tests assert), 15 s each; mxeval's class Main,
no -ea (its tests throw), 100 s to compile and 10 s to run; HumanEval-X's public class Main. A failed assert
is assertion_fail.

A javac kept running (WarmCompiler.java, worker/compilers/persistent.py) compiles in place of a javac command: the
same arguments, its file names made absolute and its class path too (javac in a JVM of its own would
otherwise take that JVM's: a javac command's is "."), and no annotation processing (-proc:none: none is on
these class paths, and a compiler that runs no code of the programs' can serve them one after another).
Its statuses 0 and 1 are javac's verdicts (compiled; errors in the program); any other (3: javac's own
error, an OutOfMemoryError) and the program is compiled by a javac command."""

import os
import re
from dataclasses import dataclass, replace

from codeexec.worker.languages.language import Language, RunCode, SelfTest, absolute

#: Debian's libjavatuples-java: MultiPL-E's javatuples-1.2.jar.
JAVATUPLES = "/usr/share/java/javatuples.jar"
#: Debian's junit5: JUnit's console launcher with JUnit Jupiter in one jar (SandboxFusion's junit's 1.8.2).
JUNIT = "/usr/share/java/junit-platform-console-standalone.jar"
#: A program's JVM sized from its memory limit ("{memory}": the step's RLIMIT_DATA, worker/judging/kinds/program.py),
#: not from the machine's memory, which it reads otherwise: on a large machine its first heap alone is over
#: the limit, and a program's garbage grows the heap past it before a collection (judges pass -Xmx for this).
HEAP = ("-XX:MaxRAM={memory}", "-XX:MaxRAMPercentage=75")
_CLASS_PATH = ("-cp", "-classpath", "--class-path")
_PUBLIC_CLASS = re.compile(r"^\s*public\s+(?:final\s+)?class\s+(\w+)", re.MULTILINE)


@dataclass(frozen=True)
class Java(Language):
    def file_of(self, program: str) -> str:
        """A public class's file is named for it; the others' may be named anything."""
        public = _PUBLIC_CLASS.search(program)
        return f"{public[1] if public else self.main}.java"

    def warm_arguments(self, argv: list[str], directory: str) -> list[str]:
        words = absolute(argv[1:], directory)
        for index, word in enumerate(words[:-1]):
            if word in _CLASS_PATH:
                entries = words[index + 1].split(os.pathsep)
                words[index + 1] = os.pathsep.join(os.path.join(directory, entry) for entry in entries)
                break
        else:
            words = ["-cp", directory, *words]
        return ["-proc:none", *words]


@dataclass(frozen=True)
class Main(Java):
    """SandboxFusion's Java: the program is Main.java whatever its public class (javac refuses another's)."""

    def file_of(self, program: str) -> str:
        return self.file


LANGUAGE = Java(
    name="java",
    title="Java",
    aliases=("java",),
    tools=("javac", "java"),
    package="openjdk-17-jdk-headless libjavatuples-java",
    file="Main.java",
    main="Problem",
    compile=(("javac", "-encoding", "UTF8", "-cp", JAVATUPLES, "{file}"),),
    run=("java", *HEAP, "-ea", "-cp", f".:{JAVATUPLES}", "{main}"),
    reads=("/usr/share/java", "/etc/java-17-openjdk"),
    failed_assertion=re.compile(r"java\.lang\.AssertionError"),
    compile_limit_s=15.0,
    version=("-version",),
    # One collector thread: a compiler's collections are small, and its threads' CPU time is the compile's.
    warm=("java", "-XX:+UseSerialGC", "{scratch}/WarmCompiler.java", "javax.tools"),
    warm_files=("WarmCompiler.java",),
    warm_statuses=frozenset({0, 1}),
)
DIALECTS = {
    "mxeval": replace(
        LANGUAGE,
        main="Main",
        compile=(("javac", "{file}"),),
        run=("java", *HEAP, "-cp", ".", "{main}"),
        compile_limit_s=100.0,
        run_limit_s=10.0,
    ),
    "humaneval-x": replace(LANGUAGE, main="Main"),
    # Competitive programming's: the public class's own name, and Codeforces' ONLINE_JUDGE (not its -Xss64m:
    # every thread of the JVM's takes that stack, and a few of them fill a 1 GiB memory limit).
    "competitive": replace(
        LANGUAGE,
        compile=(("javac", "-encoding", "UTF8", "{file}"),),
        run=("java", *HEAP, "-DONLINE_JUDGE=true", "-cp", ".", "{stem}"),
    ),
    # SandboxFusion's junit: the program's public class's file (else Main.java), compiled with JUnit on the
    # class path, then JUnit's console launcher runs every test class it finds.
    "junit": replace(
        LANGUAGE,
        package=f"{LANGUAGE.package} junit5",
        needs=(JUNIT,),
        main="Main",
        compile=(("javac", "-cp", f".:{JUNIT}", "{file}"),),
        run=("java", *HEAP, "-jar", JUNIT, "--class-path", f".:{JUNIT}", "--scan-class-path"),
    ),
    "sandboxfusion": Main(
        **{
            **vars(LANGUAGE),
            "main": "Main",
            "compile": (("javac", "-cp", f".:{JAVATUPLES}", "{file}"),),
            "run": ("java", *HEAP, "-cp", f".:{JAVATUPLES}", "-ea", "{main}"),
        }
    ),
}
SELF_TEST = SelfTest(
    passes="class Problem { public static void main(String[] a) { assert 1 + 1 == 2; } }",
    fails="class Problem { public static void main(String[] a) { assert 1 + 1 == 3; } }",
    fails_as="assertion_fail",
    broken="class Problem {",
)
RUN_CODE = {
    "java": RunCode(
        "sandboxfusion",
        echo=(
            "import java.util.Scanner;\n"
            "public class Main {\n"
            "  public static void main(String[] a) {\n"
            "    int n = new Scanner(System.in).nextInt();\n"
            '    System.out.println(n + " " + (n + 1));\n'
            "  }\n"
            "}\n"
        ),
        failing="public class Main {\n  public static void main(String[] a) {\n    assert 1 == 2;\n  }\n}\n",
    ),
    "junit": RunCode(
        "junit",
        echo=(
            "import org.junit.jupiter.api.Test;\n"
            "import static org.junit.jupiter.api.Assertions.*;\n"
            "public class PTest {\n"
            "  @Test\n"
            "  void adds() { assertEquals(2, 1 + 1); }\n"
            "}\n"
        ),
        failing=(
            "import org.junit.jupiter.api.Test;\n"
            "import static org.junit.jupiter.api.Assertions.*;\n"
            "public class PTest {\n"
            "  @Test\n"
            "  void adds() { assertEquals(3, 1 + 1); }\n"
            "}\n"
        ),
    ),
}
