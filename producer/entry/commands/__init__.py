"""The command line's commands, one module each, found by scanning this folder (producer/entry/cli.py): a
module is named for its command and gives HELP (its line in `codeexec --help`), add_flags(parser) and run(args)
(its exit status). Heavy imports (the terminal display, the HTTP server, Celery) are made in run(): the parser
is built of every module at each command's start."""
