"""Ruby: `ruby FILE`, MultiPL-E's 5 s (its tests use test/unit, which prints a failure to stdout and exits
1), mxeval's 10 s (its tests raise).

RubyGems is loaded when a program first needs it, not before it starts: loading it (Debian's, which reads
every installed gem's specification) is most of a Ruby program's start, ~70 ms of ~90 for an MBXP program,
and most programs require nothing outside Ruby's own library. So a program runs with `--disable-gems`,
did_you_mean and error_highlight loaded as RubyGems' prelude loads them (their words are in error messages
a program can read), and a `require` of ours in front of Kernel's: the first time a require finds nothing,
it loads RubyGems and requires again, through RubyGems' own require (a gem, test/unit's, is found then as
it would have been). What a program sees otherwise: `Gem` and Kernel#gem are not defined until then."""

import re
from dataclasses import replace

from codeexec.worker.languages.language import Language, RunCode, SelfTest

#: Beside every program, required before it (`-r`): RubyGems on a require's first miss.
ON_DEMAND = ".codeexec_rubygems.rb"
_REQUIRE = """\
module Kernel
  alias_method :codeexec_require_without_gems, :require
  private :codeexec_require_without_gems

  private def require(path)
    codeexec_require_without_gems(path)
  rescue LoadError
    raise if defined?(::Gem)
    codeexec_require_without_gems("rubygems")
    require(path)
  end
end
"""

LANGUAGE = Language(
    name="ruby",
    title="Ruby",
    aliases=("rb", "ruby"),
    tools=("ruby",),
    package="ruby ruby-test-unit",
    file="main.rb",
    run=("ruby", "--disable-gems", "-rdid_you_mean", "-rerror_highlight", f"-r./{ON_DEMAND}", "{file}"),
    companions={ON_DEMAND: _REQUIRE},
    reads=("/usr/share/rubygems-integration", "/var/lib/gems", "/usr/share/ruby-test-unit"),
    syntax_text=re.compile(r"syntax error"),
    failed_assertion=re.compile(r"^Failure:|Test::Unit::AssertionFailedError", re.MULTILINE),
    run_limit_s=5.0,
)
DIALECTS = {"mxeval": replace(LANGUAGE, run_limit_s=10.0)}
SELF_TEST = SelfTest(
    passes=(
        "require 'test/unit'\nclass T < Test::Unit::TestCase\n  def test_p\n    assert_equal(2, 1 + 1)\n  end\nend\n"
    ),
    fails=(
        "require 'test/unit'\nclass T < Test::Unit::TestCase\n  def test_p\n    assert_equal(3, 1 + 1)\n  end\nend\n"
    ),
    fails_as="assertion_fail",
    broken="def (\n",
)
RUN_CODE = {
    "ruby": RunCode(
        "",
        echo='n = gets.to_i\nputs "#{n} #{n + 1}"\n',
        failing="raise 'assertion failed' unless 1 == 2\n",
    ),
}
