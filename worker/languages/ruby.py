"""Ruby: `ruby FILE`, MultiPL-E's 5 s (its tests use test/unit, which prints a failure to stdout and exits
1), mxeval's 10 s (its tests raise)."""

import re
from dataclasses import replace

from codeexec.worker.languages.language import Language

LANGUAGE = Language(
    name="ruby",
    title="Ruby",
    aliases=("rb", "ruby"),
    tools=("ruby",),
    package="ruby ruby-test-unit",
    file="main.rb",
    run=("ruby", "{file}"),
    reads=("/usr/share/rubygems-integration", "/var/lib/gems", "/usr/share/ruby-test-unit"),
    syntax_text=re.compile(r"syntax error"),
    failed_assertion=re.compile(r"^Failure:|Test::Unit::AssertionFailedError", re.MULTILINE),
    run_limit_s=5.0,
)
DIALECTS = {"mxeval": replace(LANGUAGE, run_limit_s=10.0)}
