"""Which job a worker runs next: runs share the workers fairly, and a priority puts a run ahead.

A Celery message carries no job: it only says "there is a job" (a tick, one per job). Each run's jobs
wait in a list of its own (keys.jobs), and a worker that takes a tick takes the job the rule below
picks, in one script that also takes out the job's lease (worker/queue/leases.py), so no moment exists in
which a job is held with no lease. FIFO order of the ticks no longer matters: any tick serves
whichever run comes next. A tick whose job another tick took, or whose run was cancelled, is a no-op.

The rule, among the runs with jobs waiting (keys.ACTIVE, scored by priority):

- the highest priority first: a run at a higher priority is served before any run below it, job by
  job (a job in hand is finished, never cut short);
- among runs of the same priority, the one handed the fewest samples so far (keys.SERVED): so each
  gets an equal share of the workers, counted in samples, whatever its job size; a run that joins
  starts level with the least-served one, with no credit for the time it was not there. A 164-sample
  run submitted during a million-sample sweep gets half the workers until it is done.

Counted in samples, not in seconds: a run of slow samples gets more than its share of time. Priorities
are integers; the CLI names three (PRIORITIES).

Runs that need an environment (worker/environments.py) are scheduled apart, by the same rule, in the
environment's own keys (keys.active(), keys.served()): a Schedule is one environment's.

The keys share the hash tag {workers} with the leases, so each script touches one slot. The next-job
script names each run's list from its id, inside the script: every such key is in the same slot.
"""

from __future__ import annotations

import secrets
import time

import redis

from codeexec.protocol import keys
from codeexec.protocol.run import Job

_JOBS_PER_SCRIPT = 1000  # a million samples are ~60,000 jobs: queued in bounded scripts

# KEYS: ACTIVE, SERVED, jobs(run). ARGV: run, priority, "front" or "back", job JSON... Queues the jobs
# (ahead of the run's others: "front", for jobs taken back from a dead worker) and makes the run active.
_ADD = """
if ARGV[3] == 'front' then
  for i = #ARGV, 4, -1 do redis.call('LPUSH', KEYS[3], ARGV[i]) end
else
  for i = 4, #ARGV do redis.call('RPUSH', KEYS[3], ARGV[i]) end
end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  local level = nil
  for _, run in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    local served = tonumber(redis.call('HGET', KEYS[2], run) or '0')
    if level == nil or served < level then level = served end
  end
  redis.call('HSET', KEYS[2], ARGV[1], level or 0)
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
end
"""

# KEYS: ACTIVE, SERVED, LEASES. ARGV: the jobs lists' prefix, the leases' prefix, lease id, lease
# seconds, worker id, unix time. The job the rule picks, popped, with its lease taken out; nil if none.
_NEXT = """
while true do
  local top = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if #top == 0 then return false end
  local pick, least = nil, nil
  for _, run in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], top[2], top[2])) do
    local served = tonumber(redis.call('HGET', KEYS[2], run) or '0')
    if least == nil or served < least then pick, least = run, served end
  end
  local job = redis.call('LPOP', ARGV[1] .. pick)
  if redis.call('LLEN', ARGV[1] .. pick) == 0 then
    redis.call('ZREM', KEYS[1], pick)
    redis.call('HDEL', KEYS[2], pick)
  end
  if job then
    if redis.call('ZSCORE', KEYS[1], pick) then
      redis.call('HINCRBY', KEYS[2], pick, #cjson.decode(job)['samples'])
    end
    local t = redis.call('TIME')
    local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
    redis.call('ZADD', KEYS[3], now + tonumber(ARGV[4]), ARGV[3])
    redis.call('SET', ARGV[2] .. ARGV[3],
      '{"job":' .. job .. ',"worker":' .. cjson.encode(ARGV[5]) .. ',"taken":' .. ARGV[6] .. '}')
    return job
  end
end
"""

# KEYS: ACTIVE, SERVED, jobs(run). ARGV: run. Drops the run's waiting jobs; how many samples they had.
_DROP = """
local dropped = 0
for _, job in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do dropped = dropped + #cjson.decode(job)['samples'] end
redis.call('DEL', KEYS[3])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return dropped
"""


class Schedule:
    """The next-job rule's queues of one environment (None: the worker's own Python), through one client."""

    def __init__(self, client: redis.Redis, environment: str | None = None) -> None:
        self.client = client
        self.active, self.served = keys.active(environment), keys.served(environment)
        self._add = client.register_script(_ADD)
        self._next = client.register_script(_NEXT)
        self._drop = client.register_script(_DROP)

    def add(self, run: str, jobs: list[Job], priority: int, front: bool = False) -> None:
        """Queue the run's jobs (the ticks that wake workers for them: worker/queue/tasks.py's send())."""
        for start in range(0, len(jobs), _JOBS_PER_SCRIPT):
            chunk = [job.model_dump_json() for job in jobs[start : start + _JOBS_PER_SCRIPT]]
            where = "front" if front else "back"
            self._add(keys=[self.active, self.served, keys.jobs(run)], args=[run, priority, where, *chunk])

    def take(self, lease_seconds: float, worker_id: str) -> tuple[str, Job] | None:
        """The next job by the rule and the id of the lease now held on it; None if no job waits."""
        lease_id = secrets.token_hex(8)
        args = [keys.jobs(""), keys.lease(""), lease_id, lease_seconds, worker_id, repr(time.time())]
        raw = self._next(keys=[self.active, self.served, keys.LEASES], args=args)
        return None if raw is None else (lease_id, Job.model_validate_json(raw))

    def drop(self, run: str) -> int:
        """Drop the run's waiting jobs (it is cancelled); how many samples they had."""
        return int(self._drop(keys=[self.active, self.served, keys.jobs(run)], args=[run]))

    def reprioritize(self, run: str, priority: int) -> None:
        """The run's new priority, from its next job on (if it has jobs waiting)."""
        self.client.zadd(self.active, {run: priority}, xx=True)

    def waiting(self, run: str) -> int:
        """The run's jobs waiting for a worker."""
        return int(self.client.llen(keys.jobs(run)))

    def waiting_jobs(self) -> int:
        """Jobs waiting for a worker, of every run of the environment."""
        pipe = self.client.pipeline(transaction=False)
        for run in self.client.zrange(self.active, 0, -1):
            pipe.llen(keys.jobs(run))
        return sum(pipe.execute())
