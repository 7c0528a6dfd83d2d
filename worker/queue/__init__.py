"""The queue: how a worker takes jobs from Redis and puts results back.

keys (every Redis key, named in one place) → schedule (which job next) → tasks (the Celery task that
runs a job's samples) → store (the result write, exactly once) and leases (a dead worker's jobs go back).
"""
