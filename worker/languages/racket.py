"""Racket: `racket FILE`, 15 s (MultiPL-E: rackunit exits 0 when a check fails, so anything on stderr fails
the program; "read-syntax" there is syntax_error)."""

import re

from codeexec.worker.languages.language import Language, RunCode, SelfTest

LANGUAGE = Language(
    name="racket",
    title="Racket",
    aliases=("rkt", "racket"),
    tools=("racket",),
    package="racket",
    file="main.rkt",
    run=("racket", "{file}"),
    reads=("/usr/share/racket", "/etc/racket", "/usr/local/share/racket"),
    quiet="stderr",
    syntax_text=re.compile(r"read-syntax"),
    failed_assertion=re.compile(r"FAILURE"),
)
SELF_TEST = SelfTest(
    passes="#lang racket\n(require rackunit)\n(check-equal? (+ 1 1) 2)\n",
    fails="#lang racket\n(require rackunit)\n(check-equal? (+ 1 1) 3)\n",
    fails_as="assertion_fail",
    broken="#lang racket\n(define (f\n",
)
RUN_CODE = {
    "racket": RunCode(
        "",
        echo='#lang racket\n(define n (read))\n(printf "~a ~a\\n" n (+ n 1))\n',
        failing='#lang racket\n(unless (= 1 2) (error \'assertion "failed"))\n',
    ),
}
