"""C#: MultiPL-E's csc with DEBUG defined (its tests Debug.Assert) and System.Numerics, here Mono's mcs with
the same options, then `mono FILE.exe` (5 s) with Debug's failures on stderr (MONO_TRACE_LISTENER): mono
exits 0 when an assertion fails, so its status is ignored and its stderr decides."""

import re
from dataclasses import replace

from codeexec.worker.languages.language import Language

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
