"""codeexec's worker side: the Celery app, the task, and the runner that executes one candidate."""
