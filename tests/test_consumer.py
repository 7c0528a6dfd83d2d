"""The worker's Celery consumer cleans up a lost Redis connection without ending the worker
(worker/queue/consumer.py), with a real Valkey server and kombu's Redis transport."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import redis
from celery import Celery
from kombu import Connection, Queue
from kombu.common import Broadcast
from kombu.message import Message

from codeexec.producer.local.valkey import EmbeddedServer
from codeexec.worker.queue.consumer import Consumer


# Celery's notice, on every lost connection, that a later version may cancel the tasks running then.
@pytest.mark.filterwarnings("ignore::celery.exceptions.CPendingDeprecationWarning")
def test_a_lost_connection_with_a_tick_in_hand_and_a_brpop_in_flight_is_cleaned_up(
    server: EmbeddedServer, client: redis.Redis
) -> None:
    # The worker's consumer as Redis goes away under it: on its tasks' channel, one tick delivered and not
    # acknowledged (a pool process runs its job) and a BRPOP in flight for the next (the other is free);
    # after it, the remote control's channel (a fanout queue). Celery's own clean-up ended the worker here.
    app = Celery("lost", broker=f"redis+socket://{server.socket}", set_as_current=False)
    pool = SimpleNamespace(num_processes=2, is_green=False)
    consumer = Consumer(lambda *_: None, app=app, pool=pool, controller=SimpleNamespace(use_eventloop=False))
    connection: Connection = app.connection_for_read()
    connection.ensure_connection()
    held: list[Message] = []
    tasks = connection.Consumer([Queue("ticks")], callbacks=[lambda _, message: held.append(message)])
    tasks.qos(prefetch_count=2)
    tasks.consume()
    control = connection.Consumer([Broadcast("control")], channel=connection.channel(), no_ack=True)
    control.consume()
    connection.Producer().publish({}, routing_key="ticks", serializer="json")
    while not held:
        connection.drain_events(timeout=10)
    tasks.channel._brpop_start()  # as the event loop leaves the channel: waiting for the next tick
    assert any(found.get("cmd") == "brpop" for found in client.client_list())
    consumer.connection, consumer.task_consumer = connection, tasks
    server.stop()

    consumer.on_connection_error_after_connected(redis.ConnectionError("Connection closed by server."))

    assert tasks.channel.closed
    assert consumer.connection is None  # Celery's clean-up went through: it reconnects next
    server.start()
    # The tick is not lost: it waits in kombu's unacknowledged set, as after any lost connection.
    assert client.hlen("unacked") == 1
