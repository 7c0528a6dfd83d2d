"""Perl: `perl FILE`, 15 s (MultiPL-E: its tests use Test::Deep, Debian's libtest-deep-perl, and any
"ERROR" in the output fails the program); mxeval's 10 s (Data::Compare: libdata-compare-perl)."""

import re
from dataclasses import replace

from codeexec.worker.languages.language import Language, RunCode, SelfTest

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
SELF_TEST = SelfTest(
    passes="use Test::Deep;\nif (!eq_deeply(1 + 1, 2)) { exit 1; }\n",
    fails="use Test::Deep;\nif (!eq_deeply(1 + 1, 3)) { exit 1; }\n",
    fails_as="error",
    broken="sub {\n",
)
RUN_CODE = {
    "perl": RunCode(
        "",
        echo='my $n = <STDIN>;\nprint "$n ", $n + 1, "\\n";\n',
        failing="die 'assertion failed' unless 1 == 2;\n",
    ),
}
