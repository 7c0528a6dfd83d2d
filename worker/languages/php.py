"""PHP: `php FILE`, 15 s (MultiPL-E), 10 s (mxeval); a parse error is syntax_error (MultiPL-E looks for
"PHP Parse error" in stdout, where Debian's php.ini never prints it: it goes to stderr)."""

import re
from dataclasses import dataclass, replace

from codeexec.worker.languages.language import Language, RunCode, SelfTest

LANGUAGE = Language(
    name="php",
    title="PHP",
    aliases=("php",),
    tools=("php",),
    package="php-cli",
    file="main.php",
    run=("php", "{file}"),
    reads=("/etc/php", "/usr/share/php"),
    syntax_text=re.compile(r"PHP Parse error|Parse error: syntax error"),
)


@dataclass(frozen=True)
class Tagged(Language):
    """SandboxFusion's PHP: `php -f FILE`, the program's leading blanks gone and a `<?php` tag put first
    where it does not begin with one (its ensure_php_tag_in_string)."""

    def text_of(self, program: str) -> str:
        program = program.lstrip()
        return program if program.startswith("<?php") else f"<?php\n{program}"


DIALECTS = {
    "mxeval": replace(LANGUAGE, run_limit_s=10.0),
    "sandboxfusion": Tagged(**{**vars(LANGUAGE), "run": ("php", "-f", "{file}")}),
}
SELF_TEST = SelfTest(
    passes="<?php\nif (1 + 1 != 2) { throw new Exception('Test failed!'); }\n",
    fails="<?php\nif (1 + 1 != 3) { throw new Exception('Test failed!'); }\n",
    fails_as="error",
    broken="<?php\nfunction (",
)
RUN_CODE = {
    "php": RunCode(
        "sandboxfusion",
        echo='$n = intval(trim(fgets(STDIN)));\necho "$n " . ($n + 1) . "\\n";\n',
        failing="<?php\nif (1 != 2) { throw new Exception('assertion failed'); }\n",
    ),
}
