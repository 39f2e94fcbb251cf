"""Drives Idem through a client that openapi-python-client generated from
the live server's document: a keyed queue create, a keyed task create that
waits (`?wait_ms`) and reads the 200 or 202, its replay, and a 202.
Run by scripts/api-conformance: client_test.py BASE_URL API_KEY.
"""

import datetime
import sys
import uuid

from idem_client import AuthenticatedClient
from idem_client.api.default import create_queue, create_task, get_task
from idem_client.models import CreateQueue, CreateTask, TargetSpec, TaskView

base_url, key = sys.argv[1], sys.argv[2]
client = AuthenticatedClient(base_url=base_url, token=key, raise_on_unexpected_status=True)
queue = "conformance-" + uuid.uuid4().hex[:8]
# The server's own health route: a GET that answers 200 at once.
target = TargetSpec(url=base_url + "/healthz", method="GET")

made = create_queue.sync_detailed(client=client, body=CreateQueue(name=queue), idempotency_key="q-" + queue)
assert made.status_code == 201, made
assert made.headers["location"] == f"/v1/queues/{queue}", made.headers

# A keyed create that waits for the delivery: 200 with the final task.
body = CreateTask(task_id="t1", target=target)
first = create_task.sync_detailed(queue, client=client, body=body, idempotency_key="k1-" + queue, wait_ms=20_000)
assert first.status_code == 200, first
assert isinstance(first.parsed, TaskView), first.parsed
assert (first.parsed.task_id, first.parsed.state) == ("t1", "succeeded"), first.parsed
assert "idempotent-replayed" not in first.headers, first.headers
assert first.headers["location"] == f"/v1/queues/{queue}/tasks/t1", first.headers
print("keyed create with wait_ms:", first.status_code, first.parsed.state)

# The same key and request again: the first answer replayed, nothing created.
again = create_task.sync_detailed(queue, client=client, body=body, idempotency_key="k1-" + queue, wait_ms=20_000)
assert again.status_code == 200, again
assert again.headers["idempotent-replayed"] == "true", again.headers
assert again.parsed.task_id == "t1", again.parsed

# A task due tomorrow cannot end within the wait: 202 with the task as it
# is, its ID from the Idem-Task-Id header.
later = CreateTask(
    target=target,
    schedule_time=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1),
)
waiting = create_task.sync_detailed(
    queue, client=client, body=later, idempotency_key="k2-" + queue, idem_task_id="t2", wait_ms=50
)
assert waiting.status_code == 202, waiting
assert (waiting.parsed.task_id, waiting.parsed.state) == ("t2", "scheduled"), waiting.parsed
assert get_task.sync(queue, "t2", client=client).task_id == "t2"
print("keyed create of a scheduled task with wait_ms:", waiting.status_code, waiting.parsed.state)
