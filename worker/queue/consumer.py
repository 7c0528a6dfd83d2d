"""The worker's Celery consumer (celery_app.py's worker_consumer): Celery's own, but that losing Redis does not end
the worker.

When the broker's connection is lost, Celery 5.7 cleans it up with kombu's Connection.collect(), then closes
it (before 5.7, collect() alone), and connects again. collect() closes the connection's channels, then
forgets the transport's address. With Redis, the tasks' channel may not close there: kombu first reads the
reply of the BRPOP the channel has in flight (the consumer waits for a tick while a pool process is free),
which on a connection the server closed raises; the transport then closes its other channels, and stops at
the first that raises too (the remote control's, deleting its fanout queue). The close() after collect()
closes the tasks' channel again; holding a tick delivered and not acknowledged (a job running: acks_late),
it puts it back in the queue through a new connection pool, made from the address collect() forgot: an
AttributeError, which Celery takes for an unrecoverable error, and the worker exits, its pool with it. So a
Redis restart ended (nearly always) a worker that had one pool process running a job and another waiting for
one.

So the tasks' channel is closed here first, while the transport still has its address: a first close()
that stops at the BRPOP's reply leaves no BRPOP in flight, and the next one closes it. Putting the tick
back fails as the connection did (Redis is gone), as it does whenever Celery's own close gets that far:
the tick stays in kombu's unacknowledged set, the pool process goes on with its job under its lease
(leases.py), and the tick is acknowledged once the job is done. Celery's clean-up then finds the channel
closed.
"""

from __future__ import annotations

from typing import Any

from celery.worker.consumer import Consumer as CeleryConsumer
from kombu.common import ignore_errors


class Consumer(CeleryConsumer):
    def on_connection_error_after_connected(self, exc: BaseException) -> None:
        tasks = getattr(self, "task_consumer", None)
        close_lost_channel(self.connection, getattr(tasks, "channel", None))
        super().on_connection_error_after_connected(exc)


def close_lost_channel(connection: Any, channel: Any) -> None:
    """Close a channel of a lost connection, ignoring the connection's errors: a second time if the first
    stopped at the reply of a read in flight (kombu's Redis transport, above). A channel of a transport
    that does not say whether it is closed is left to the connection's own clean-up."""
    for _ in range(2):
        if connection is None or channel is None or getattr(channel, "closed", True):
            return
        ignore_errors(connection, channel.close)
