"""A heartbeat on the broker's messages a Celery worker holds.

Redis keeps a message a worker took until the worker acknowledges it, late,
once the task is done (CELERY_TASK_ACKS_LATE); a worker that dies holding it
never will. Kombu hands such a message to another worker once it has been
held longer than the visibility timeout, judged by when it was delivered. A
short timeout brings a dead worker's tasks back quickly, but also hands out a
long task (a nightly refresh, a retry waiting for its countdown) while its
worker is still at it; a long one leaves a dead worker's tasks stranded.

So every worker touches the messages it holds (waiting for a countdown,
waiting for a free process, or running) every HEARTBEAT_SECONDS, moving their
delivery time in kombu's index to now: a message stays with a living worker
however long its task runs, and is handed out again a visibility timeout after
its worker's last beat (BROKER_VISIBILITY_TIMEOUT, two minutes) whatever
killed it. tests/faults/test_worker_killed.py measures both.
"""

import logging
import threading
import time
from typing import Any, Protocol

from celery import Celery, bootsteps
from celery.worker import WorkController, state

from core.outages import OutageLog

logger = logging.getLogger(__name__)
HEARTBEAT_SECONDS = 10
broker_outage = OutageLog(message="A worker could not touch the messages it holds")


class BrokerConnection(Protocol):
    """What the heartbeat asks of a kombu connection (kombu comes with Celery)."""

    # A kombu channel: a Redis one keeps the held messages' index (unacked_index_key).
    @property
    def default_channel(self) -> Any: ...


def touch_held_messages(connection: BrokerConnection) -> int:
    """Set the delivery time of every message this worker holds to now, over a
    kombu connection to the broker; how many."""
    tags = [request.message.delivery_tag for request in list(state.requests.values())]
    channel = connection.default_channel
    if not tags or not hasattr(channel, "unacked_index_key"):  # nothing held, or not Redis
        return 0
    # XX: only messages still held; one acknowledged meanwhile stays gone.
    channel.client.zadd(channel.unacked_index_key, dict.fromkeys(tags, time.time()), xx=True)
    return len(tags)


class MessageHeartbeat:
    def __init__(self, app: Celery) -> None:
        self.app = app
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, name="message heartbeat", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=HEARTBEAT_SECONDS)

    def run(self) -> None:
        connection = self.app.connection_for_write()
        try:
            while not self.stopped.wait(HEARTBEAT_SECONDS):
                try:
                    touch_held_messages(connection)
                except Exception as error:  # the broker away: try again on the next beat
                    broker_outage.failed(error)
                    connection.close()
                    connection = self.app.connection_for_write()
        finally:
            connection.close()


class HeldMessagesHeartbeat(bootsteps.StartStopStep):
    """The worker's bootstep running MessageHeartbeat beside the consumer."""

    requires = ("celery.worker.components:Pool",)

    # The stubs give Step.create no result; Celery keeps what a StartStopStep's returns
    # as the step's obj, which it starts and stops with the worker.
    def create(self, worker: WorkController) -> MessageHeartbeat:  # type: ignore[override]
        return MessageHeartbeat(worker.app)
