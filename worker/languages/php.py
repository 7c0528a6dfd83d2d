"""PHP: `php FILE`, 15 s (MultiPL-E), 10 s (mxeval); a parse error is syntax_error (MultiPL-E looks for
"PHP Parse error" in stdout, where Debian's php.ini never prints it: it goes to stderr)."""

import re
from dataclasses import replace

from codeexec.worker.languages.language import Language

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
DIALECTS = {"mxeval": replace(LANGUAGE, run_limit_s=10.0)}
