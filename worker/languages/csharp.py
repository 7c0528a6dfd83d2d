"""C#: MultiPL-E's csc with DEBUG defined (its tests Debug.Assert) and System.Numerics, here Mono's mcs with
the same options, then `mono FILE.exe` (5 s) with Debug's failures on stderr (MONO_TRACE_LISTENER): mono
exits 0 when an assertion fails, so its status is ignored and its stderr decides.

SandboxFusion's csharp: `dotnet run` of a console project whose Program.cs is the program, built in Debug
(Debug.Assert checks) with .NET 6's implicit usings. Here mcs with DEBUG defined and those usings put at
the start of the program's first line (its lines keep their numbers); a run fails on a status other than 0
or on a failed Debug.Assert (Mono's, written to stderr, exits 0: /run_code's answer is Failed with that
return code, ScriptEnd.failed). What .NET has that Mono's C# 7 has not (top-level statements,
records, file-scoped namespaces) does not compile here."""

import re
from dataclasses import dataclass, replace

from codeexec.worker.languages.language import Language, RunCode, SelfTest

LANGUAGE = Language(
    name="csharp",
    title="C#",
    aliases=("cs", "csharp", "c#"),
    tools=("mcs", "mono"),
    package="mono-mcs mono-runtime libmono-system-numerics4.0-cil",
    file="main.cs",
    compile=(("mcs", "-d:DEBUG", "-r:System.Numerics.dll", "{file}", "-out:{stem}.exe"),),
    run=("mono", "{stem}.exe"),
    artifacts=("{stem}.exe",),
    env={"MONO_TRACE_LISTENER": "Console.Error"},
    reads=("/usr/lib/mono", "/etc/mono", "/usr/share/.mono"),
    failed_if=re.compile(r"System\.Diagnostics\.DefaultTraceListener\.Fail|Unhandled Exception"),
    status_ignored=True,
    failed_assertion=re.compile(r"DefaultTraceListener\.Fail"),
    run_limit_s=5.0,
)
DIALECTS = {
    "mxeval": replace(
        LANGUAGE,
        refused="its tests need .NET 6 and the CompareNETObjects package (mxeval runs `dotnet build`), which "
        "codeexec does not run; it runs MultiPL-E's C# with Mono",
    )
}


#: .NET 6's implicit usings of a console project (Microsoft.NET.Sdk's ImplicitUsings).
_IMPLICIT = ("System", "System.Collections.Generic", "System.IO", "System.Linq", "System.Net.Http",
             "System.Threading", "System.Threading.Tasks")  # fmt: skip


@dataclass(frozen=True)
class ImplicitUsings(Language):
    def text_of(self, program: str) -> str:
        usings = " ".join(f"using {name};" for name in _IMPLICIT)
        # A directive (#if, #region) must begin its line: there the usings take a line of their own (and a
        # #define, which must come before them, fails to compile).
        joint = "\n" if program.lstrip().startswith("#") else " "
        return f"{usings}{joint}{program}"


DIALECTS["sandboxfusion"] = ImplicitUsings(
    **{
        **vars(LANGUAGE),
        "package": f"{LANGUAGE.package} libmono-system-net-http4.0-cil",
        "compile": (
            ("mcs", "-d:DEBUG", "-r:System.Numerics.dll", "-r:System.Net.Http.dll", "{file}", "-out:{stem}.exe"),
        ),
    }
)
SELF_TEST = SelfTest(
    passes="using System.Diagnostics;\nclass P { static void Main() { Debug.Assert(1 + 1 == 2); } }\n",
    fails="using System.Diagnostics;\nclass P { static void Main() { Debug.Assert(1 + 1 == 3); } }\n",
    fails_as="assertion_fail",
    broken="class P {",
)
RUN_CODE = {
    "csharp": RunCode(
        "sandboxfusion",
        echo=(
            "public class P { public static void Main() { int n = int.Parse(Console.ReadLine());\n"
            '  Console.WriteLine($"{n} {n + 1}"); } }\n'
        ),
        failing='public class P { public static void Main() { throw new Exception("assertion failed"); } }\n',
    ),
}
