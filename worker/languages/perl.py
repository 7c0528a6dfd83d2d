"""Perl: `perl FILE`, 15 s (MultiPL-E: its tests use Test::Deep, Debian's libtest-deep-perl, and any
"ERROR" in the output fails the program); mxeval's 10 s (Data::Compare: libdata-compare-perl)."""

import re
from dataclasses import replace

from codeexec.worker.languages.language import Language

LANGUAGE = Language(
    name="perl",
    title="Perl",
    aliases=("pl", "perl"),
    tools=("perl",),
    package="perl libtest-deep-perl libdata-compare-perl",
    file="main.pl",
    run=("perl", "{file}"),
    reads=("/usr/share/perl", "/usr/share/perl5", "/etc/perl", "/usr/local/share/perl"),
    failed_if=re.compile(r"ERROR"),
    syntax_text=re.compile(r"syntax error at "),
)
DIALECTS = {"mxeval": replace(LANGUAGE, failed_if=None, run_limit_s=10.0)}
