"""codeexec's producer side: read problems and samples, enqueue jobs, aggregate pass@k."""

from codeexec.producer.results.passk import pass_at_k

__all__ = ["pass_at_k"]
